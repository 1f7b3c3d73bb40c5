"""A bounded cache of query embeddings in front of any embedder.

The same question comes back often (an agent's turn is searched by inject, then by the model's own
search_memories call; a retry repeats it), and a query embedding is the largest part of a warm search:
~15 ms on the local model, a paid round trip on Bedrock. Documents are never cached: they are embedded
once, at write time.

A query being embedded is embedded once: a second caller of the same text waits for the first one's
vector (or its error) instead of computing it again. `prefetch` starts an embedding on a thread of its
own, so a caller who knows the query early (inject, before its version and cache reads) overlaps the
embedding with that I/O; the search's own `embed_query` then finds the vector, or waits for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from agent_memory.adapters.single_flight import SingleFlight
from agent_memory.observability import logger
from agent_memory.ports import Embedder

DEFAULT_MAX_QUERIES = 1024


class QueryCachingEmbedder:
    def __init__(self, inner: Embedder, *, max_queries: int = DEFAULT_MAX_QUERIES) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self._max = max_queries
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._running: SingleFlight[str, np.ndarray] = SingleFlight()  # the embeddings under way
        self._lock = threading.Lock()
        self._prefetcher: ThreadPoolExecutor | None = None

    @property
    def loaded(self) -> bool:
        """Whether the inner embedder's model is in memory; one without a model to load (a remote one) is."""
        return bool(getattr(self._inner, "loaded", True))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        cached = self._cached(text)
        return cached if cached is not None else self._running.run(text, lambda: self._embedded(text))

    def _cached(self, text: str) -> np.ndarray | None:
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
            return cached

    def _embedded(self, text: str) -> np.ndarray:
        cached = self._cached(text)  # finished by another caller between its lookup and this one
        if cached is not None:
            return cached
        vector = np.asarray(self._inner.embed_query(text), dtype=np.float32)
        vector.setflags(write=False)  # shared between callers: nobody may change it in place
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return vector

    def prefetch(self, text: str) -> None:
        """Start embedding `text` in the background (nothing when it is cached or under way). One thread:
        queries are CPU work, and a prefetch still queued when its caller asks is computed by the caller."""
        if self._running.under_way(text):
            return
        with self._lock:
            if text in self._cache:
                return
            if self._prefetcher is None:
                self._prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")
            prefetcher = self._prefetcher
        try:
            prefetcher.submit(self._prefetched, text)
        except RuntimeError:  # shut down with the interpreter: the caller embeds it itself
            return

    def _prefetched(self, text: str) -> None:
        try:
            self.embed_query(text)
        except Exception as error:  # whoever asks for the vector gets the error itself; nothing waits here
            logger.debug("query prefetch failed", error_type=type(error).__name__)
