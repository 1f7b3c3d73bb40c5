"""Hybrid relevance over a small set of texts (a scope's reports or log): BM25 plus cosine.

The memory search has its own ranking (keywords, synonyms, time decay, weighted); the log
and the history book need less: how close a text is to a query, in [0, 1], explainable as two parts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agent_memory.domain.search.bm25 import Bm25Index
from agent_memory.domain.search.vectors import decode_vector
from agent_memory.domain.text.text import tokenize

LEXICAL_WEIGHT = 0.5
VECTOR_WEIGHT = 0.5


def hybrid_scores(query: str, texts: Sequence[str], *, query_vector: np.ndarray | None = None,
                  vectors: Sequence[np.ndarray | None] | None = None) -> list[float]:
    """Per text: BM25 normalised by the best score (so 1.0 = the best lexical match) blended with the
    cosine similarity (clipped to [0, 1]) when both sides have vectors; lexical only otherwise."""
    if not texts:
        return []
    return blend(Bm25Index(texts).scores(tokenize(query)), query_vector=query_vector, vectors=vectors)


def blend(bm25: np.ndarray, *, query_vector: np.ndarray | None = None,
          vectors: Sequence[np.ndarray | None] | None = None) -> list[float]:
    """`hybrid_scores` from the texts' BM25 scores (an index built once can score query after query)."""
    top = float(bm25.max()) if len(bm25) else 0.0
    lexical = bm25 / top if top > 0 else bm25
    if query_vector is None or vectors is None:
        return [round(float(s), 4) for s in lexical]
    scores = []
    for text_score, vector in zip(lexical, vectors, strict=True):
        if vector is None:
            scores.append(float(text_score))
            continue
        cosine = max(0.0, float(np.dot(query_vector, vector)))
        scores.append(LEXICAL_WEIGHT * float(text_score) + VECTOR_WEIGHT * cosine)
    return [round(s, 4) for s in scores]


def rank_stored(query: str, texts: Sequence[str], embeddings: Sequence[tuple[bytes | None, str | None]],
                embedder: Callable[[], Any]) -> list[float]:
    """`hybrid_scores` over stored items, each with its (float16 vector, embedding model id). Vectors of
    another model than the embedder's are ignored (lexical only for them). `embedder` is a provider,
    asked only when some item has a vector, so lexical-only data never loads the model."""
    model = embedder() if any(e for e, _ in embeddings) else None
    if model is None:
        return hybrid_scores(query, texts)
    vectors = [decode_vector(e) if e and m == model.model_id else None for e, m in embeddings]
    return hybrid_scores(query, texts, query_vector=model.embed_query(query), vectors=vectors)
