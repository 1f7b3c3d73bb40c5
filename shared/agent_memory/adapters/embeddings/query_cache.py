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
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

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
        self._running: dict[str, Future[np.ndarray]] = {}  # text -> the embedding under way
        self._lock = threading.Lock()
        self._prefetcher: ThreadPoolExecutor | None = None

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
            running = self._running.get(text)
            mine = running is None
            if running is None:
                running = self._running[text] = Future()
        if not mine:
            return running.result()  # the other caller's vector, or its error raised here too
        try:
            vector = np.asarray(self._inner.embed_query(text), dtype=np.float32)
        except BaseException as error:
            with self._lock:
                del self._running[text]
            running.set_exception(error)
            raise
        vector.setflags(write=False)  # shared between callers: nobody may change it in place
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
            del self._running[text]
        running.set_result(vector)
        return vector

    def prefetch(self, text: str) -> None:
        """Start embedding `text` in the background (nothing when it is cached or under way). One thread:
        queries are CPU work, and a prefetch still queued when its caller asks is computed by the caller."""
        with self._lock:
            if text in self._cache or text in self._running:
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
