"""The MemoryStore port in memory; it runs the same contract tests as the DynamoDB store."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.lifecycle.supersession import CurrentMemories, plan_saves
from agent_memory.domain.models import (
    AccessStats,
    Memory,
    MemoryPage,
    MemoryType,
    NewMemory,
    PartialSave,
    SaveOutcome,
    SaveResult,
    ScopeRef,
    StoreVersions,
    deleted_version,
    utcnow,
)
from agent_memory.domain.search.index_changes import IndexChanges, RecentWrites
from agent_memory.errors import AgentMemoryError, NotFound


class InMemoryMemoryStore:
    def __init__(self) -> None:
        self._memories: dict[tuple[ScopeRef, str], Memory] = {}
        self._versions: dict[ScopeRef, int] = {}
        self._access_versions: dict[ScopeRef, int] = {}
        # The change log, as the DynamoDB store keeps it: per user, version -> the memory versions it wrote
        # (None: a write that records nothing, as a purge).
        self._changes: dict[ScopeRef, dict[int, list[Memory] | None]] = {}
        self._written_at: dict[ScopeRef, dict[int, float]] = {}
        self._lock = threading.Lock()
        self.clock: Callable[[], float] = time.time  # when a write is recorded (a test may move it)

    def _bump(self, user: ScopeRef, written: list[Memory] | None = None) -> None:
        version = self._versions[user] = self._versions.get(user, 0) + 1
        self._changes.setdefault(user, {})[version] = written
        self._written_at.setdefault(user, {})[version] = self.clock()

    def recent_writes(self, user: ScopeRef, since: float, *, limit: int = 50) -> RecentWrites:
        with self._lock:
            log, times = self._changes.get(user, {}), self._written_at.get(user, {})
            newest = [v for v in sorted(log, reverse=True) if times[v] > since][:limit]
            writes = [(times[v], log[v] or []) for v in reversed(newest)]
        return RecentWrites.folded(writes, kept=lambda m: m.expires_at is None or m.expires_at > utcnow())

    def changes(self, user: ScopeRef, after: StoreVersions, through: StoreVersions, *,
                every_version: bool = False) -> IndexChanges | None:
        with self._lock:
            log = self._changes.get(user, {})
            records = [log.get(version) for version in range(after.content + 1, through.content + 1)]
        if after.content > through.content or any(record is None for record in records):
            return None
        latest = {m.memory_key: m for record in records for m in record or []}
        upserted = sorted((m for m in latest.values() if every_version or m.is_current), key=lambda m: m.memory_key)
        return IndexChanges(upserted=upserted, removed=sorted(set(latest) - {m.memory_key for m in upserted}))

    def save_many(self, user: ScopeRef, memories: list[NewMemory]) -> list[SaveResult]:
        results: list[SaveResult] = []
        for memory in memories:
            try:
                results.append(self.save(user, memory))
            except AgentMemoryError as error:
                raise PartialSave(results, error) from error
        return results

    def save(self, user: ScopeRef, memory: NewMemory) -> SaveResult:
        with self._lock:
            (result,) = plan_saves(user, [memory], CurrentMemories.of(self._user_memories(user)), new_memory_key)
            if result.outcome is not SaveOutcome.DUPLICATE:
                self._memories[(user, result.memory.memory_key)] = result.memory
                if result.superseded is not None:
                    self._memories[(user, result.superseded.memory_key)] = result.superseded
                self._bump(user, [m for m in (result.superseded, result.memory) if m is not None])
        return result

    def get(self, user: ScopeRef, memory_key: str) -> Memory | None:
        memory = self._memories.get((user, memory_key))
        return None if memory is None or memory.is_deleted else memory

    def all_versions(self, user: ScopeRef) -> list[Memory]:
        return sorted(self._user_memories(user), key=lambda m: m.memory_key)

    def history(self, user: ScopeRef, memory: Memory) -> list[Memory]:
        if not memory.field:
            return [memory]
        return sorted((m for m in self._user_memories(user) if m.field == memory.field),
                      key=lambda m: (m.valid_from, m.memory_key))

    def list_current(self, user: ScopeRef, *, memory_type: MemoryType | None = None, limit: int = 50,
                     cursor: str | None = None) -> MemoryPage:
        from agent_memory.adapters.dynamodb.cursors import decode_cursor, encode_cursor

        start = decode_cursor(cursor) if cursor else None
        ordered = sorted(self._user_memories(user), key=lambda m: m.memory_key, reverse=True)
        matching = [m for m in ordered if m.is_current and (memory_type is None or m.memory_type == memory_type)
                    and (start is None or m.memory_key < start)]
        items = matching[:limit]
        return MemoryPage(items=items, next_cursor=encode_cursor(items[-1].memory_key)
                          if len(matching) > limit else None)

    def all_current(self, user: ScopeRef) -> list[Memory]:
        return sorted((m for m in self._user_memories(user) if m.is_current), key=lambda m: m.memory_key)

    def delete(self, user: ScopeRef, memory_key: str) -> Memory:
        with self._lock:
            memory = self._memories.get((user, memory_key))
            if memory is None or memory.is_deleted:
                raise NotFound(f"memory {memory_key} not found", details=[{"field": "memory_key"}])
            retired = self._memories[(user, memory_key)] = deleted_version(memory, utcnow())
            self._bump(user, [retired])
        return memory

    def purge(self, user: ScopeRef, memory_key: str) -> list[Memory]:
        with self._lock:
            memory = self._memories.get((user, memory_key))
            if memory is None:
                raise NotFound(f"memory {memory_key} not found", details=[{"field": "memory_key"}])
            versions = [m for m in self._user_memories(user) if m.field == memory.field] if memory.field else [memory]
            for version in versions:
                del self._memories[(user, version.memory_key)]
            self._changes.pop(user, None)  # the log holds copies of the text too
            self._bump(user)
        return sorted(versions, key=lambda m: (m.valid_from, m.memory_key))

    def record_access(self, user: ScopeRef, memory_keys: list[str], accessed_at: datetime) -> None:
        with self._lock:
            for key in memory_keys:
                memory = self._memories.get((user, key))
                if memory is not None:
                    self._memories[(user, key)] = memory.model_copy(update={
                        "access_count": memory.access_count + 1, "last_accessed_at": accessed_at})
                    self._access_versions[user] = self._access_versions.get(user, 0) + 1

    def user_version(self, user: ScopeRef) -> int:
        return self._versions.get(user, 0)

    def versions(self, user: ScopeRef) -> StoreVersions:
        return StoreVersions(content=self._versions.get(user, 0), access=self._access_versions.get(user, 0))

    def access_stats(self, user: ScopeRef) -> dict[str, AccessStats]:
        return {m.memory_key: AccessStats(access_count=m.access_count, last_accessed_at=m.last_accessed_at)
                for m in self._user_memories(user) if m.access_count}

    def _user_memories(self, user: ScopeRef) -> list[Memory]:
        return [m for (owner, _), m in self._memories.items() if owner == user]


class CountingStore(InMemoryMemoryStore):
    """The store fake, counting its reads: of the whole partition's current memories (the search index, a save
    that looks for duplicates), of every version (the as-of index) and of listing pages."""

    def __init__(self) -> None:
        super().__init__()
        self.partition_reads = 0
        self.version_reads = 0
        self.pages = 0

    def list_current(self, user: ScopeRef, **kwargs: Any) -> MemoryPage:
        self.pages += 1
        return super().list_current(user, **kwargs)

    def all_current(self, user: ScopeRef) -> list[Memory]:
        self.partition_reads += 1
        return super().all_current(user)

    def all_versions(self, user: ScopeRef) -> list[Memory]:
        self.version_reads += 1
        return super().all_versions(user)
