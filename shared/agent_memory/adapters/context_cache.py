"""The in-container layer of the context cache, in front of a shared one (DynamoDB)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Executor, Future, wait

from agent_memory.domain.models import ScopeRef
from agent_memory.observability import error_fields, logger
from agent_memory.ports import CachedContext, ContextCache

# Shared writes waiting on the writer beyond this are skipped (a slow table must not pile them up in memory):
# a skipped write costs another container one miss.
MAX_PENDING_WRITES = 64
# Expired entries are dropped at most this often (a walk over the LRU): most blocks live 30-300 s while the LRU
# holds thousands, so without the sweep a busy container kept megabytes of dead blocks until LRU order reached them.
SWEEP_INTERVAL_SECONDS = 60.0


class LocalContextCache:
    """A bounded LRU of fresh entries, for one container; expired ones are swept out as time passes."""

    def __init__(self, *, max_entries: int = 4096) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str, str], CachedContext] = OrderedDict()
        self._lock = threading.Lock()
        self._next_sweep = 0.0

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
            if entry.created_at >= self._next_sweep:
                self._sweep(now=entry.created_at)

    def __len__(self) -> int:
        return len(self._entries)

    def _sweep(self, *, now: float) -> None:
        for slot in [slot for slot, entry in self._entries.items() if entry.expires_at <= now]:
            del self._entries[slot]
        self._next_sweep = now + SWEEP_INTERVAL_SECONDS


class LayeredContextCache:
    """Local first; a shared hit is copied into the local layer; writes go to both.

    With a `writer`, the shared write runs on it, off the request path (a put is one table round trip, and
    the request already holds the entry locally). A cache write is best effort either way: one still
    pending when Lambda freezes the container finishes when it thaws, and one lost with the container
    costs another container a miss. Entries carry their expiry and keys their user's version, so a late
    write is never served stale."""

    def __init__(self, *, local: LocalContextCache, shared: ContextCache | None,
                 writer: Executor | None = None) -> None:
        self._local = local
        self._shared = shared
        self._writer = writer
        self._pending: set[Future[None]] = set()
        self._lock = threading.Lock()

    def get(self, user: ScopeRef, key: str, *, now: float) -> CachedContext | None:
        entry = self._local.get(user, key, now=now)
        if entry is None and self._shared is not None:
            entry = self._shared.get(user, key, now=now)
            if entry is not None:
                self._local.put(user, key, entry)
        return entry

    def put(self, user: ScopeRef, key: str, entry: CachedContext) -> None:
        self._local.put(user, key, entry)
        if self._shared is None:
            return
        if self._writer is None:
            self._shared.put(user, key, entry)
            return
        with self._lock:
            if len(self._pending) >= MAX_PENDING_WRITES:
                logger.warning("context cache write skipped: too many pending", pending=len(self._pending))
                return
            try:
                future = self._writer.submit(self._write_shared, user, key, entry)
            except RuntimeError:  # the writer is shut down (interpreter exit): written here instead
                future = None
            if future is not None:
                self._pending.add(future)
        if future is None:
            self._write_shared(user, key, entry)
        else:
            future.add_done_callback(self._done)  # outside the lock: a finished future calls back at once

    def flush(self, timeout: float | None = None) -> None:
        """Wait for the shared writes under way (tests; a shutdown that wants them in the table)."""
        with self._lock:
            pending = list(self._pending)
        wait(pending, timeout=timeout)

    def _write_shared(self, user: ScopeRef, key: str, entry: CachedContext) -> None:
        assert self._shared is not None
        try:
            self._shared.put(user, key, entry)
        except Exception as error:  # best effort: the shared layer's own errors are already misses
            logger.warning("context cache write failed", extra=error_fields(error))

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)
