"""An in-memory fake of the IndexSnapshotStore port: the same contract tests run it and the DynamoDB adapter."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from agent_memory.domain.models import ScopeRef


class InMemoryIndexSnapshotStore:
    """One snapshot per user, as the port promises: exactly the version asked for, a newer one never replaced
    by an older one, a newer version's saved only once the last one is `min_interval_seconds` old (a same
    version's always). `fail` makes every call a miss and every save a refusal, as a failing table would."""

    def __init__(self, *, min_interval_seconds: float = 0.0, clock: Callable[[], float] = time.time) -> None:
        self.snapshots: dict[ScopeRef, tuple[int, bytes, float]] = {}  # user -> (version, payload, saved at)
        self.gets = 0
        self.puts = 0
        self.fail = False
        self._min_interval = min_interval_seconds
        self._clock = clock
        self._lock = threading.Lock()

    def get(self, user: ScopeRef, version: int) -> bytes | None:
        with self._lock:
            self.gets += 1
            saved = self.snapshots.get(user)
        if self.fail or saved is None or saved[0] != version:
            return None
        return saved[1]

    def newest(self, user: ScopeRef, at_most: int) -> bytes | None:
        with self._lock:
            self.gets += 1
            saved = self.snapshots.get(user)
        if self.fail or saved is None or saved[0] > at_most:
            return None
        return saved[1]

    def put(self, user: ScopeRef, version: int, encode: Callable[[], bytes]) -> bool:
        now = self._clock()
        with self._lock:
            self.puts += 1
            saved = self.snapshots.get(user)
            if self.fail or (saved is not None and (saved[0] > version or (
                    saved[0] < version and now - saved[2] < self._min_interval))):
                return False
            self.snapshots[user] = (version, bytes(encode()), now)
            return True
