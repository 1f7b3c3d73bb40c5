"""Retention on the search tiers' read path: a tier wrapped in `RetainedIndex` proposes no memory its tenant's
policy has ended, in a search, a duplicate check, a read of its cached current memories or of the past.

The store applies the same policy to what it reads (adapters/dynamodb/store.py); together they are the only
places retention is enforced on reads, so a service reading either never sees an expired memory.

A search's query carries each type's cut-off (`CandidateQuery.expired_before`), so a tier leaves expired memories
out before it picks its top candidates (OpenSearch in the query itself); what it proposes is then checked
against the full rule, which also honours the expiry stamped on a memory at save (a policy lengthened since).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from agent_memory.domain.lifecycle.retention import RetentionPolicy
from agent_memory.domain.models import Memory, ScopeRef, utcnow
from agent_memory.domain.search.ranking import Candidate
from agent_memory.ports import CandidateQuery, MemoryCache, SearchIndex

if TYPE_CHECKING:
    from agent_memory.adapters.as_of_index import AsOfIndex


class RetainedIndex(SearchIndex):
    """`inner` with its tenant's retention applied to everything it returns; every member it does not read
    through (statistics, flushing a snapshot) is the inner tier's own, looked up on it."""

    def __init__(self, inner: SearchIndex, retention: Callable[[str], RetentionPolicy]) -> None:
        self._inner = inner
        self._retention = retention

    @property
    def inner(self) -> SearchIndex:
        return self._inner

    def _keeper(self, user: ScopeRef) -> Callable[[Memory], bool]:
        return self._retention(user.tenant_id).keeper(utcnow())

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]:
        now = utcnow()
        policy = self._retention(user.tenant_id)
        bounded = query.model_copy(update={"expired_before": policy.expired_before(now)})
        kept = policy.keeper(now)
        return [c for c in self._inner.candidates(user, bounded) if kept(c.memory)]

    def vectors(self, user: ScopeRef, memory_keys: list[str]) -> dict[str, np.ndarray]:
        return self._inner.vectors(user, memory_keys)  # of memories already proposed, hence kept

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        kept = self._keeper(user)
        return [[c for c in row if kept(c.memory)] for row in self._inner.nearest(user, vectors, k)]

    def memory_cache(self) -> MemoryCache | None:
        cache = self._inner.memory_cache()
        return None if cache is None else _RetainedCache(cache, self._keeper)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class RetainedPastIndex(RetainedIndex):
    """The as-of tier, retained: its reads of the past too leave out what has expired since, so an expired
    version is read by nothing, not even as of a time it was valid."""

    def __init__(self, inner: AsOfIndex, retention: Callable[[str], RetentionPolicy]) -> None:
        super().__init__(inner, retention)
        self._past = inner

    def memories_at(self, user: ScopeRef, at: datetime) -> list[Memory]:
        kept = self._keeper(user)
        return [m for m in self._past.memories_at(user, at) if kept(m)]


class _RetainedCache:
    def __init__(self, inner: MemoryCache, keeper: Callable[[ScopeRef], Callable[[Memory], bool]]) -> None:
        self._inner = inner
        self._keeper = keeper

    def current_memories(self, user: ScopeRef) -> list[Memory]:
        kept = self._keeper(user)
        return [m for m in self._inner.current_memories(user) if kept(m)]

    def forget(self, user: ScopeRef) -> None:
        self._inner.forget(user)
