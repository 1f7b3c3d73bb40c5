"""The in-container layer of the context cache, in front of a shared one (DynamoDB)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from agent_memory.domain.models import ScopeRef
from agent_memory.ports import CachedContext, ContextCache


class LocalContextCache:
    """A bounded LRU of fresh entries, for one container."""

    def __init__(self, *, max_entries: int = 4096) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str, str], CachedContext] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, user: ScopeRef, key: str, *, now: float) -> CachedContext | None:
        slot = (user.tenant_id, user.user_id, key)
        with self._lock:
            entry = self._entries.get(slot)
            if entry is None:
                return None
            if entry.expires_at <= now:
                del self._entries[slot]
                return None
            self._entries.move_to_end(slot)
            return entry

    def put(self, user: ScopeRef, key: str, entry: CachedContext) -> None:
        if self._max_entries <= 0:
            return
        with self._lock:
            self._entries[(user.tenant_id, user.user_id, key)] = entry
            self._entries.move_to_end((user.tenant_id, user.user_id, key))
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)


class LayeredContextCache:
    """Local first; a shared hit is copied into the local layer; writes go to both."""

    def __init__(self, *, local: LocalContextCache, shared: ContextCache | None) -> None:
        self._local = local
        self._shared = shared

    def get(self, user: ScopeRef, key: str, *, now: float) -> CachedContext | None:
        entry = self._local.get(user, key, now=now)
        if entry is None and self._shared is not None:
            entry = self._shared.get(user, key, now=now)
            if entry is not None:
                self._local.put(user, key, entry)
        return entry

    def put(self, user: ScopeRef, key: str, entry: CachedContext) -> None:
        self._local.put(user, key, entry)
        if self._shared is not None:
            self._shared.put(user, key, entry)
