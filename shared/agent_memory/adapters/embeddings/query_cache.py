"""A bounded cache of query embeddings in front of any embedder.

The same question comes back often (an agent's turn is searched by inject, then by the model's own
search_memories call; a retry repeats it), and a query embedding is the largest part of a warm search:
~15 ms on the local model, a paid round trip on Bedrock. Documents are never cached: they are embedded
once, at write time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from agent_memory.ports import Embedder

DEFAULT_MAX_QUERIES = 1024


class QueryCachingEmbedder:
    def __init__(self, inner: Embedder, *, max_queries: int = DEFAULT_MAX_QUERIES) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self._max = max_queries
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
        vector = np.asarray(self._inner.embed_query(text), dtype=np.float32)
        vector.setflags(write=False)  # shared between callers: nobody may change it in place
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return vector
