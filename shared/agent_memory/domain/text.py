"""CJK-aware tokenisation and keyword relevance (no I/O)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[0-9a-z]+(?:['’][a-z]+)?")

STOPWORDS = frozenset(
    {
        "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "is", "are", "was", "were",
        "be", "been", "am", "i", "me", "my", "you", "your", "he", "she", "it", "we", "they", "them", "this",
        "that", "these", "those", "what", "which", "who", "whom", "how", "when", "where", "why", "do", "does",
        "did", "have", "has", "had", "about", "as", "by", "from", "user", "users",
    }
)


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def tokenize(text: str) -> list[str]:
    """The one analyser of both search tiers: Latin words (lower-cased, stop words dropped,
    Snowball-stemmed) plus CJK character bigrams.

    Bigrams let "高才通" match "高才通B类" without a dictionary segmenter; a lone CJK
    character stays a unigram so single-character queries still match.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    tokens: list[str] = []
    for run in _CJK_RUN.findall(folded):
        if len(run) == 1:
            tokens.append(run)
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    non_cjk = _CJK_RUN.sub(" ", folded)
    words = [w.replace("’", "'") for w in _WORD.findall(non_cjk)]
    words = [w[:-2] if w.endswith("'s") else w for w in words]
    words = [w for w in words if w not in STOPWORDS]
    tokens.extend(_stemmer().stemWords(words))
    return tokens


def keyword_relevance(query: str, documents: Sequence[str]) -> list[float]:
    """Share of the query's IDF-weighted tokens each document contains, in [0, 1].

    IDF is computed over the given documents (one user's memories), so a token every
    memory shares ("用户") counts for little and a distinctive one for a lot.
    """
    query_tokens = set(tokenize(query))
    if not query_tokens or not documents:
        return [0.0 for _ in documents]
    doc_tokens = [set(tokenize(doc)) for doc in documents]
    n = len(documents)
    idf = {t: math.log(1.0 + (n + 1) / (1 + sum(1 for d in doc_tokens if t in d))) for t in query_tokens}
    total = sum(idf.values())
    return [sum(idf[t] for t in query_tokens if t in d) / total for d in doc_tokens]
