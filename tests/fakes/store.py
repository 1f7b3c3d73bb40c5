"""In-memory fakes of the ports. The store fake runs the same contract tests as the DynamoDB store."""

from __future__ import annotations

import hashlib
import re
import threading
import time
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from agent_memory.domain.keys import active_shard, new_memory_key, partition_key
from agent_memory.domain.layers import HotMemoryEntry, HotMemoryType, LogKey, LogMessage, WeeklyReport
from agent_memory.domain.models import (
    AccessStats,
    ExtractedMemory,
    Memory,
    MemoryPage,
    MemoryType,
    NewMemory,
    PartialSave,
    SaveOutcome,
    SaveResult,
    ScopeRef,
    StoreVersions,
    utcnow,
)
from agent_memory.domain.supersession import CurrentMemories, plan_saves
from agent_memory.errors import AgentMemoryError, NotFound
from agent_memory.ports import ConversationTurn


class InMemoryMemoryStore:
    def __init__(self) -> None:
        self._memories: dict[tuple[ScopeRef, str], Memory] = {}
        self._versions: dict[ScopeRef, int] = {}
        self._access_versions: dict[ScopeRef, int] = {}
        self._lock = threading.Lock()

    def _bump(self, user: ScopeRef) -> None:
        self._versions[user] = self._versions.get(user, 0) + 1

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
                self._bump(user)
        return result

    def get(self, user: ScopeRef, memory_key: str) -> Memory | None:
        return self._memories.get((user, memory_key))

    def history(self, user: ScopeRef, memory: Memory) -> list[Memory]:
        if not memory.field:
            return [memory]
        return sorted((m for m in self._user_memories(user) if m.field == memory.field),
                      key=lambda m: (m.valid_from, m.memory_key))

    def list_current(self, user: ScopeRef, *, memory_type: MemoryType | None = None, limit: int = 50,
                     cursor: str | None = None) -> MemoryPage:
        from agent_memory.adapters.dynamodb.store import _decode_cursor, _encode_cursor

        start = _decode_cursor(cursor) if cursor else None
        ordered = sorted(self._user_memories(user), key=lambda m: m.memory_key, reverse=True)
        matching = [m for m in ordered if m.is_current and (memory_type is None or m.memory_type == memory_type)
                    and (start is None or m.memory_key < start)]
        items = matching[:limit]
        return MemoryPage(items=items, next_cursor=_encode_cursor(items[-1].memory_key)
                          if len(matching) > limit else None)

    def all_current(self, user: ScopeRef) -> list[Memory]:
        return sorted((m for m in self._user_memories(user) if m.is_current), key=lambda m: m.memory_key)

    def delete(self, user: ScopeRef, memory_key: str) -> Memory:
        with self._lock:
            memory = self._memories.pop((user, memory_key), None)
            if memory is None:
                raise NotFound(f"memory {memory_key} not found", details=[{"field": "memory_key"}])
            self._bump(user)
        return memory

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


class FakeExtractor:
    """Returns what it was told to, and records the turns it saw."""

    def __init__(self, memories: list[ExtractedMemory] | None = None) -> None:
        self.memories = memories or []
        self.turns: list[ConversationTurn] = []

    def extract(self, turn: ConversationTurn) -> list[ExtractedMemory]:
        self.turns.append(turn)
        return list(self.memories)


class FakeLayerStore:
    """The LayerStore port in memory, with the DynamoDB store's semantics (the layer-store contract runs
    on both): expiry is checked on read, a lease can be taken over once it lapses, reports are written
    once, and active-scope markers are kept per week and shard."""

    def __init__(self, shards: int = 16, fail: Exception | None = None) -> None:
        self.shards = shards
        self.fail = fail  # raised by every write, to test what a failing store leaves behind
        self._log: dict[tuple[ScopeRef, str], LogMessage] = {}  # (scope, sort key) -> message
        self._claims: dict[tuple[ScopeRef, str], tuple[str, float]] = {}  # -> (status, lease until)
        self._hot: dict[tuple[ScopeRef, str, str], HotMemoryEntry] = {}
        self._reports: dict[tuple[ScopeRef, date], tuple[WeeklyReport, str]] = {}  # -> (report, stage)
        self._active: dict[tuple[date, int], dict[str, ScopeRef]] = {}
        self.versions: dict[ScopeRef, int] = {}
        self._lock = threading.Lock()

    def _write(self) -> None:
        if self.fail is not None:
            raise self.fail

    # L1
    def append_messages(self, scope: ScopeRef, messages: list[LogMessage], weeks: set[date]) -> None:
        self._write()
        with self._lock:
            for message in messages:
                self._log[(scope, self._log_key(message))] = message
            if messages:
                for week in weeks:
                    self._active.setdefault((week, active_shard(scope, self.shards)), {})[partition_key(scope)] = scope

    def _unexpired(self, scope: ScopeRef, now: datetime | None) -> list[LogMessage]:
        cutoff = now or utcnow()
        return [m for (s, _), m in sorted(self._log.items(), key=lambda kv: kv[0][1])
                if s == scope and m.expires_at > cutoff]

    def log_messages(self, scope: ScopeRef, *, start: datetime | None = None, end: datetime | None = None,
                     now: datetime | None = None) -> list[LogMessage]:
        return [m for m in self._unexpired(scope, now)
                if (start is None or m.created_at >= start) and (end is None or m.created_at < end)]

    def recent_log(self, scope: ScopeRef, *, limit: int, now: datetime | None = None) -> list[LogMessage]:
        return self._unexpired(scope, now)[-limit:] if limit > 0 else []

    @staticmethod
    def _log_key(message: LogMessage | LogKey) -> str:
        return f"{message.created_at.astimezone(UTC).isoformat()}#{message.conversation_id}#{message.message_id}"

    def logged_messages(self, scope: ScopeRef, keys: list[LogKey]) -> list[LogMessage]:
        found = [self._log.get((scope, self._log_key(k))) for k in keys]
        return sorted((m for m in found if m is not None), key=self._log_key)

    def set_log_embeddings(self, scope: ScopeRef, messages: list[LogMessage]) -> None:
        self._write()
        with self._lock:
            for message in messages:
                key = (scope, self._log_key(message))
                if key in self._log and message.embedding:
                    self._log[key] = self._log[key].model_copy(update={
                        "embedding": message.embedding, "embedding_model": message.embedding_model})

    def delete_expired_log(self, scope: ScopeRef, now: datetime) -> int:
        self._write()
        expired = [key for key, m in self._log.items() if key[0] == scope and m.expires_at <= now]
        for key in expired:
            del self._log[key]
        return len(expired)

    def claim_extraction(self, scope: ScopeRef, message_id: str, lease_seconds: int = 300) -> bool:
        self._write()
        now = time.time()
        with self._lock:
            status, until = self._claims.get((scope, message_id), ("", 0.0))
            if status == "done" or (status == "running" and until >= now):
                return False
            self._claims[(scope, message_id)] = ("running", now + lease_seconds)
            return True

    def finish_extraction(self, scope: ScopeRef, message_id: str, saved: int) -> None:
        self._write()
        self._claims[(scope, message_id)] = ("done", 0.0)

    def release_extraction(self, scope: ScopeRef, message_id: str) -> None:
        self._write()
        self._claims.pop((scope, message_id), None)

    # L2
    def put_hot(self, scope: ScopeRef, entry: HotMemoryEntry) -> HotMemoryEntry:
        self._write()
        with self._lock:
            slot = (scope, entry.type.value, entry.key)
            existing = self._hot.get(slot)
            stored = entry.model_copy(update={"created_at": existing.created_at}) if existing else entry
            self._hot[slot] = stored
            self.versions[scope] = self.versions.get(scope, 0) + 1
        return stored

    def hot_memory(self, scope: ScopeRef) -> list[HotMemoryEntry]:
        entries = [e for (s, _, _), e in self._hot.items() if s == scope]
        return sorted(entries, key=lambda e: (-e.priority, -e.updated_at.timestamp(), e.type, e.key))

    def delete_hot(self, scope: ScopeRef, type_: HotMemoryType, key: str) -> None:
        self._write()
        with self._lock:
            if self._hot.pop((scope, type_.value, key), None) is None:
                raise NotFound(f"no hot memory {type_.value}/{key}")
            self.versions[scope] = self.versions.get(scope, 0) + 1

    # L3
    def put_report_if_absent(self, scope: ScopeRef, report: WeeklyReport) -> bool:
        self._write()
        with self._lock:
            if (scope, report.week_start) in self._reports:
                return False
            self._reports[(scope, report.week_start)] = (report, "written")
            return True

    def report_stage(self, scope: ScopeRef, week_start: date) -> str | None:
        found = self._reports.get((scope, week_start))
        return found[1] if found else None

    def replace_report(self, scope: ScopeRef, report: WeeklyReport) -> bool:
        self._write()
        with self._lock:
            found = self._reports.get((scope, report.week_start))
            if found is None or found[0].metrics.get("messages", 0) >= report.metrics.get("messages", 0):
                return False
            self._reports[(scope, report.week_start)] = (report, "written")
            return True

    def mark_report_stage(self, scope: ScopeRef, week_start: date, stage: str) -> None:
        self._write()
        if (scope, week_start) not in self._reports:
            raise NotFound(f"no report for the week of {week_start}")
        self._reports[(scope, week_start)] = (self._reports[(scope, week_start)][0], stage)

    def reports(self, scope: ScopeRef) -> list[WeeklyReport]:
        return [r for (s, _), (r, _) in sorted(self._reports.items(), key=lambda kv: kv[0][1], reverse=True)
                if s == scope]

    # the rollup's fan-out
    def active_weeks(self, scope: ScopeRef) -> set[date]:
        """The weeks the scope is marked active in (for tests)."""
        return {week for (week, _), scopes in self._active.items() if partition_key(scope) in scopes}

    def active_scopes(self, week_start: date, shard: int, *, cursor: dict[str, Any] | None = None,
                      limit: int = 500) -> tuple[list[ScopeRef], dict[str, Any] | None]:
        marked = sorted(self._active.get((week_start, shard), {}).items())
        after = (cursor or {}).get("after", "")
        page = [(pk, scope) for pk, scope in marked if pk > after][:limit]
        more = len(page) == limit and page[-1][0] < marked[-1][0]
        return [scope for _, scope in page], ({"after": page[-1][0]} if more else None)


class FakeSqs:
    """SendMessageBatch of an SQS client: records each call's entries; can be unreachable for the first
    `fail_calls` calls, refuse some entry ids on every call (`refuse_ids`) or on the first call only
    (`refuse_once`), as a sender's or the service's fault."""

    def __init__(self, *, fail_calls: int = 0, refuse_ids: set[str] | None = None,
                 refuse_once: set[str] | None = None, sender_fault: bool = False) -> None:
        self.calls: list[list[dict[str, str]]] = []
        self._fail_calls = fail_calls
        self._refuse = set(refuse_ids or ())
        self._refuse_once = set(refuse_once or ())
        self._sender_fault = sender_fault

    @property
    def bodies(self) -> list[list[str]]:
        return [[entry["MessageBody"] for entry in call] for call in self.calls]

    def send_message(self, *, QueueUrl: str, MessageBody: str) -> dict[str, Any]:
        self.calls.append([{"Id": "0", "MessageBody": MessageBody}])
        if len(self.calls) <= self._fail_calls:
            raise ConnectionError("SQS unreachable")
        return {"MessageId": f"m-{len(self.calls)}"}

    def send_message_batch(self, *, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
        self.calls.append(Entries)
        if len(self.calls) <= self._fail_calls:
            raise ConnectionError("SQS unreachable")
        refused = self._refuse | self._refuse_once
        self._refuse_once = set()
        failed = [{"Id": e["Id"], "Code": "InternalError", "SenderFault": self._sender_fault}
                  for e in Entries if e["Id"] in refused]
        return {"Successful": [{"Id": e["Id"]} for e in Entries if e["Id"] not in refused], "Failed": failed}


class HashingEmbedder:
    """Bag-of-words vectors (each word hashed to one of `dimension` dimensions): texts sharing words are
    similar. Records the queries it embeds."""

    model_id = "hashing-test"

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension
        self.queries: list[str] = []

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
        return vector / max(float(np.linalg.norm(vector)), 1.0)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self._vector(text)
