"""Read-your-writes over a search index fed off the request path (OpenSearch, from the table's stream).

A memory saved a moment ago reaches such an index only once the stream's record has been delivered, indexed and
the index refreshed: seconds, more under load. Until then a search would miss it, an inject right after the save
would not carry it, and a save restating it would not see it and store it twice. The table's change log already
holds every write with its memories as they now stand (embeddings included), so each read also reads the records
of the last `window_seconds` (one Query) and lays them over what the index proposes:

- a memory written in the window replaces the index's copy of its key, or is added when the index has none:
  its cosine with the query comes from its stored embedding (the same the index holds, so the same cosine), its
  BM25 score from the index when the index already has it, else the score the index will give it (OpenSearch
  analyses the text and lends its term statistics: opensearch/unindexed.py);
- a key retired in the window (superseded, deleted, expired) is dropped, whatever the index still says.

A window longer than the index's lag only lays over what the index already has, the same memories; a write the
change log could not record in full (a batch of more than ~300 KB) is not laid over, and is found once indexed.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from agent_memory.domain.models import Memory, ScopeRef, StoreVersions
from agent_memory.domain.search.index_changes import RecentWrites
from agent_memory.domain.search.ranking import Candidate
from agent_memory.domain.search.vectors import decode_vector
from agent_memory.domain.text.text import searchable_text
from agent_memory.ports import CandidateQuery, Embedder, MemoryCache, MemoryStore, SearchIndex

DEFAULT_WINDOW_SECONDS = 30.0
MAX_RECORDS = 50  # the newest change records read at most: a burst past it is found once indexed
MAX_USERS = 1024  # users whose last read of the window is kept


class FreshWritesIndex:
    """`inner` with the writes of the last `window_seconds` laid over it (see the module's docstring)."""

    def __init__(self, inner: SearchIndex, *, store: MemoryStore, embedder: Callable[[], Embedder | None],
                 window_seconds: float = DEFAULT_WINDOW_SECONDS, clock: Callable[[], float] = time.time) -> None:
        self.inner = inner
        self._store = store
        self._embedder = embedder
        self._window = window_seconds
        self._clock = clock
        self._cache: OrderedDict[ScopeRef, tuple[StoreVersions, RecentWrites]] = OrderedDict()
        self._lock = threading.Lock()

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]:
        fresh = self._recent(user)
        found = self.inner.candidates(user, query)
        if not fresh.upserted and not fresh.removed:
            return found
        kept = {c.memory.memory_key: c for c in found if c.memory.memory_key not in fresh.removed}
        vector = query.query_vector()
        unindexed = [m for key, (m, _) in fresh.upserted.items() if key not in kept]
        lexical = dict(zip((m.memory_key for m in unindexed), self._lexical(query, unindexed), strict=True))
        for key, (memory, _) in fresh.upserted.items():
            candidate = kept.get(key)
            cosine = _cosine(vector, self._vector(memory))
            if candidate is None:
                candidate = kept[key] = Candidate(memory=memory, lexical=lexical.get(key))
            else:
                candidate.memory = memory  # as it now stands
            if cosine is not None:
                candidate.vector = cosine
        return list(kept.values())

    def _lexical(self, query: CandidateQuery, memories: list[Memory]) -> list[float | None]:
        """The BM25 scores the index will give these memories once it holds them, when it can tell (OpenSearch's
        term statistics); else none (found by meaning and the ranking's keyword parts until indexed)."""
        scorer = getattr(self.inner, "unindexed_lexical", None)
        if scorer is None or not memories:
            return [None] * len(memories)
        scores: list[float | None] = scorer(query, [searchable_text(m) for m in memories])
        return scores

    def vectors(self, user: ScopeRef, memory_keys: list[str]) -> dict[str, np.ndarray]:
        fresh = self._recent(user)
        found = self.inner.vectors(user, [k for k in memory_keys if k not in fresh.upserted])
        for key in memory_keys:
            if key in fresh.upserted:
                vector = self._vector(fresh.upserted[key][0])
                if vector is not None:
                    found[key] = vector
        return {k: v for k, v in found.items() if k not in fresh.removed}

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        """The index's nearest, less what was retired since, with the memories written since among them: a save
        restating one saved a moment ago finds it."""
        fresh = self._recent(user)
        found = self.inner.nearest(user, vectors, k)
        if not fresh.upserted and not fresh.removed:
            return found
        written = [(m, v) for m, _ in fresh.upserted.values() if (v := self._vector(m)) is not None]
        merged = []
        for row, candidates in zip(vectors, found, strict=True):
            by_key = {c.memory.memory_key: c for c in candidates
                      if c.memory.memory_key not in fresh.removed and c.memory.memory_key not in fresh.upserted}
            for memory, vector in written:
                by_key[memory.memory_key] = Candidate(memory=memory, vector=float(np.dot(row, vector)),
                                                      embedding=vector)
            merged.append(sorted(by_key.values(), key=lambda c: -(c.vector or 0.0))[:k])
        return merged

    def memory_cache(self) -> MemoryCache | None:
        """What it holds of a user is keyed to the store's version: the inner tier's copy, if any, is the one."""
        return self.inner.memory_cache()

    def _recent(self, user: ScopeRef) -> RecentWrites:
        """The writes of the window, read once per version of the user's counter: while it has not moved nothing
        was written since the read, so what it found, less what has left the window, is all there is."""
        if self._window <= 0:
            return RecentWrites()
        version, since = self._store.versions(user), self._clock() - self._window
        with self._lock:
            cached = self._cache.get(user)
            if cached is not None and cached[0] == version:
                self._cache.move_to_end(user)
                return cached[1].since(since)
        recent = self._store.recent_writes(user, since, limit=MAX_RECORDS)
        with self._lock:
            self._cache[user] = (version, recent)
            self._cache.move_to_end(user)
            while len(self._cache) > MAX_USERS:
                self._cache.popitem(last=False)
        return recent

    def _vector(self, memory: Memory) -> np.ndarray | None:
        """The stored embedding, L2-normalised, when the embedder in use wrote it (another model's is not
        comparable: that memory is then found once indexed, where it was embedded again)."""
        embedder = self._embedder()
        if embedder is None or not memory.embedding or memory.embedding_model != embedder.model_id:
            return None
        vector = decode_vector(memory.embedding).astype(np.float32)
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else None

    def __getattr__(self, name: str) -> object:  # the inner tier's own (its admin, its stats)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.inner, name)


def _cosine(query: np.ndarray | None, vector: np.ndarray | None) -> float | None:
    if query is None or vector is None:
        return None
    return float(np.clip(np.dot(query, vector), -1.0, 1.0))
