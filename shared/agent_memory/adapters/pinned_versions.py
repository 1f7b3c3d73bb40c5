"""A user's version counters read once per request, however many parts of the request ask.

A warm inject asks for the user's versions three times: its cache keys (user_memory, hot memory), then
the in-process index twice (the memories, then the search's candidates), each a consistent GetItem on the
request's critical path. Inside `pinned_versions()`, a store wrapped in `VersionPinningStore` reads each
user's versions on the first ask and answers every later ask in that request (on any thread the request
hands its context to) with the same value; concurrent first asks wait for one read. Outside such a scope
it reads every time, as the store does.

Pinned, the request is served as of one version: the blocks it caches under version v are built from the
index of version v, never from one a save moved on meanwhile. A save during the request is seen by the
next request, as a save just after it would be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from agent_memory.adapters.single_flight import SingleFlight
from agent_memory.domain.index_changes import IndexChanges, RecentWrites
from agent_memory.domain.models import (
    AccessStats,
    Memory,
    MemoryPage,
    MemoryType,
    NewMemory,
    SaveResult,
    ScopeRef,
    StoreVersions,
)
from agent_memory.ports import MemoryStore


class _Pins:
    def __init__(self) -> None:
        self._reads: SingleFlight[ScopeRef, StoreVersions] = SingleFlight(keep=True)

    def versions(self, user: ScopeRef, read: Callable[[ScopeRef], StoreVersions]) -> StoreVersions:
        return self._reads.run(user, lambda: read(user))  # a failed read is not pinned: the next ask reads again


_pins: ContextVar[_Pins | None] = ContextVar("pinned_versions", default=None)


@contextmanager
def pinned_versions() -> Iterator[None]:
    """Within: each user's versions are read once. Threads see the pins when they run in a copy of this
    context (`contextvars.copy_context().run`); a nested scope keeps the outer one's pins."""
    if _pins.get() is not None:
        yield
        return
    token = _pins.set(_Pins())
    try:
        yield
    finally:
        _pins.reset(token)


class VersionPinningStore:
    """`inner`, with `versions` and `user_version` answered from the request's pins when there are any."""

    def __init__(self, inner: MemoryStore) -> None:
        self._inner = inner

    def versions(self, user: ScopeRef) -> StoreVersions:
        pins = _pins.get()
        return self._inner.versions(user) if pins is None else pins.versions(user, self._inner.versions)

    def user_version(self, user: ScopeRef) -> int:
        if _pins.get() is None:
            return self._inner.user_version(user)
        return self.versions(user).content

    def changes(self, user: ScopeRef, after: StoreVersions, through: StoreVersions, *,
                every_version: bool = False) -> IndexChanges | None:
        return self._inner.changes(user, after, through, every_version=every_version)

    def recent_writes(self, user: ScopeRef, since: float, *, limit: int = 50) -> RecentWrites:
        return self._inner.recent_writes(user, since, limit=limit)

    def save(self, user: ScopeRef, memory: NewMemory) -> SaveResult:
        return self._inner.save(user, memory)

    def save_many(self, user: ScopeRef, memories: list[NewMemory]) -> list[SaveResult]:
        return self._inner.save_many(user, memories)

    def get(self, user: ScopeRef, memory_key: str) -> Memory | None:
        return self._inner.get(user, memory_key)

    def history(self, user: ScopeRef, memory: Memory) -> list[Memory]:
        return self._inner.history(user, memory)

    def list_current(self, user: ScopeRef, *, memory_type: MemoryType | None = None, limit: int = 50,
                     cursor: str | None = None) -> MemoryPage:
        return self._inner.list_current(user, memory_type=memory_type, limit=limit, cursor=cursor)

    def all_current(self, user: ScopeRef) -> list[Memory]:
        return self._inner.all_current(user)

    def all_versions(self, user: ScopeRef) -> list[Memory]:
        return self._inner.all_versions(user)

    def delete(self, user: ScopeRef, memory_key: str) -> Memory:
        return self._inner.delete(user, memory_key)

    def purge(self, user: ScopeRef, memory_key: str) -> list[Memory]:
        return self._inner.purge(user, memory_key)

    def access_stats(self, user: ScopeRef) -> dict[str, AccessStats]:
        return self._inner.access_stats(user)

    def record_access(self, user: ScopeRef, memory_keys: list[str], accessed_at: datetime) -> None:
        self._inner.record_access(user, memory_keys, accessed_at)
