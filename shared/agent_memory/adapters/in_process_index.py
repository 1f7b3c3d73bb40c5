"""The serverless search tier: candidates from the user's own memories, searched inside the Lambda.

Exact cosine over the stored embeddings plus in-process BM25. A per-container cache keyed by the
user's version counter means a repeated search costs one GetItem, not a partition read. Recorded
reads move a second counter: then only the access statistics are read again (a projection query,
at most every `access_refresh_seconds`), so the interaction score follows them without a rebuild.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from agent_memory.domain.bm25 import Bm25Index
from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.domain.ranking import Candidate
from agent_memory.domain.vectors import decode_vector
from agent_memory.ports import CandidateQuery, Embedder, MemoryStore


@dataclass
class _UserIndex:
    version: int
    memories: list[Memory]
    bm25: Bm25Index
    vectors: np.ndarray | None  # (n, dim), rows L2-normalised
    access_version: int = 0
    access_read_at: float = 0.0  # monotonic seconds


def searchable_text(memory: Memory) -> str:
    """What the lexical index sees: the content, its keywords and category, and its conversation context.

    The context (the turn before, in the same conversation) is a measured gain: on LoCoMo it lifts
    hybrid hit@5 from 0.66 to 0.72, because an answer often only makes sense with its question."""
    extras = " ".join(k.term for k in memory.keywords)
    return " ".join(part for part in (memory.content, extras, memory.category or "", memory.context or "") if part)


class InProcessIndex:
    def __init__(
        self, *, store: MemoryStore, embedder: Callable[[], Embedder | None], max_users: int = 256,
        access_refresh_seconds: float = 10.0, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._access_refresh = access_refresh_seconds
        self._clock = clock
        self._embedder = embedder
        self._max_users = max_users
        self._cache: OrderedDict[ScopeRef, _UserIndex] = OrderedDict()
        self._lock = threading.Lock()
        self.stats = {"hits": 0, "misses": 0}

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]:
        index = self._index(user)
        if not index.memories:
            return []
        lexical = index.bm25.scores(query.terms) if query.terms else np.zeros(len(index.memories), np.float32)
        vector = index.vectors @ query.vector if index.vectors is not None and query.vector is not None else None
        allowed = np.array([self._allowed(m, query) for m in index.memories], dtype=bool)
        chosen: set[int] = set()
        for signal in (lexical, vector):
            if signal is None:
                continue
            masked = np.where(allowed, signal, -np.inf)
            top = np.argsort(-masked)[: query.k]
            chosen.update(int(i) for i in top if np.isfinite(masked[i]) and (signal is vector or masked[i] > 0))
        return [
            Candidate(
                memory=index.memories[i],
                lexical=float(lexical[i]) if lexical[i] > 0 else None,
                vector=float(vector[i]) if vector is not None else None,
            )
            for i in sorted(chosen)
        ]

    def current_memories(self, user: ScopeRef) -> list[Memory]:
        """The user's current memories from the version-keyed cache (one GetItem when warm)."""
        return list(self._index(user).memories)

    @staticmethod
    def _allowed(memory: Memory, query: CandidateQuery) -> bool:
        if query.memory_types and memory.memory_type not in query.memory_types:
            return False
        if query.created_from and memory.created_at < query.created_from:
            return False
        return not (query.created_to and memory.created_at > query.created_to)

    def _index(self, user: ScopeRef) -> _UserIndex:
        versions = self._store.versions(user)
        with self._lock:
            cached = self._cache.get(user)
            hit = cached is not None and cached.version == versions.content
            if hit:
                self._cache.move_to_end(user)
                self.stats["hits"] += 1
        if hit and cached is not None:
            if cached.access_version != versions.access and (
                    self._clock() - cached.access_read_at >= self._access_refresh):
                self._refresh_access(user, cached, versions.access)
            return cached
        self.stats["misses"] += 1
        memories = self._store.all_current(user)
        built = _UserIndex(versions.content, memories, Bm25Index([searchable_text(m) for m in memories]),
                           self._vectors(memories), versions.access, self._clock())
        if self._max_users:
            with self._lock:
                self._cache[user] = built
                self._cache.move_to_end(user)
                while len(self._cache) > self._max_users:
                    self._cache.popitem(last=False)
        return built

    def _refresh_access(self, user: ScopeRef, cached: _UserIndex, access_version: int) -> None:
        """New access statistics on the cached memories; same memories, same order, same index."""
        stats = self._store.access_stats(user)
        cached.memories = [
            m.model_copy(update=stats[m.memory_key].model_dump()) if m.memory_key in stats else m
            for m in cached.memories
        ]
        cached.access_version, cached.access_read_at = access_version, self._clock()
        self.stats["access_refreshes"] = self.stats.get("access_refreshes", 0) + 1

    def _vectors(self, memories: list[Memory]) -> np.ndarray | None:
        embedder = self._embedder()
        if embedder is None or not memories:
            return None
        model = embedder.model_id
        matrix = np.zeros((len(memories), embedder.dimension), dtype=np.float32)
        stale = []
        for row, memory in enumerate(memories):
            if memory.embedding and memory.embedding_model == model:
                matrix[row] = decode_vector(memory.embedding)
            else:
                stale.append(row)
        if stale:  # another model (or none) wrote these: embed them now rather than compare across models
            matrix[stale] = embedder.embed_documents([memories[row].content for row in stale])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)
