"""The LayerStore port in memory (the conversation log, hot memory, weekly reports, active scopes)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, date, datetime
from typing import Any

from agent_memory.domain.keys import active_shard, partition_key
from agent_memory.domain.models import (
    ScopeRef,
    utcnow,
)
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType, LogKey, LogMessage, WeeklyReport
from agent_memory.errors import NotFound


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
