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
from typing import Any

from agent_memory.adapters.single_flight import SingleFlight
from agent_memory.domain.models import ScopeRef, StoreVersions
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
    """`inner`, with `versions` and `user_version` answered from the request's pins when there are any; every
    other member is the inner store's own (looked up on it, so a member the port gains needs nothing here)."""

    def __init__(self, inner: MemoryStore) -> None:
        self._inner = inner

    def versions(self, user: ScopeRef) -> StoreVersions:
        pins = _pins.get()
        return self._inner.versions(user) if pins is None else pins.versions(user, self._inner.versions)

    def user_version(self, user: ScopeRef) -> int:
        if _pins.get() is None:
            return self._inner.user_version(user)
        return self.versions(user).content

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
