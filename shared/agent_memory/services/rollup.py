"""The weekly rollup (weekly report, hot-memory refresh and expired-log cleanup), as a fan-out.

    schedule, Monday 01:00 ─ plan ──────────▶ one shard task per active-scope shard ──▶ RollupQueue
                                               (services/rollup_schedule.py)
    worker: shard task ─── expand_shard ────▶ one scope task per scope that logged that week
                                               (paged; near its deadline it re-enqueues itself with the cursor)
    worker: scope task ─── rollup_scope ────▶ the week's report (conditional put: once per scope and week),
                                               then hot memory refreshed (LLM only), then expired log removed

No invocation ever loops over every scope: the schedule sends `shards` messages, a shard task pages
through one shard's markers, a scope task handles one scope. Every step is safe to repeat: the report
is a conditional put and records how far its rollup got (`rollup_stage`), so a redelivery resumes
where the last attempt stopped and a re-run of a finished week changes nothing and calls no LLM.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date, datetime
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field, TypeAdapter

from agent_memory.domain.keys import Id, ScopeId
from agent_memory.domain.models import ScopeRef, utcnow
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.domain.tiers.memory_layers import (
    HotMemoryEntry,
    HotMemoryRefresh,
    LogMessage,
    WeeklyReport,
    scope_label,
    week_bounds,
)
from agent_memory.domain.tiers.reports import ReportDraft, WeekLog, week_metrics
from agent_memory.observability import logger
from agent_memory.ports import Embedder, HotMemoryRefresher, LayerStore, TaskQueue, WeeklyReportWriter
from agent_memory.services.rollup_schedule import ShardTask

STAGE_WRITTEN = "written"
STAGE_COMPLETE = "complete"
NO_LLM = "no LLM provider is configured (LLM_PROVIDER); hot memory is refreshed by the LLM only"


# ---- tasks on the queue -------------------------------------------------------------------------

class ScopeTask(BaseModel):
    """Roll up one scope's week."""

    kind: Literal["scope"] = "scope"
    week: date
    tenant_id: Id
    scope_id: ScopeId
    # When it was queued: a task queued before its scope was erased is dropped (None: queued by older code).
    queued_at: datetime | None = None

    @property
    def scope(self) -> ScopeRef:
        return ScopeRef(tenant_id=self.tenant_id, user_id=self.scope_id)


RollupTask = Annotated[ShardTask | ScopeTask, Field(discriminator="kind")]
_TASK: TypeAdapter[ShardTask | ScopeTask] = TypeAdapter(RollupTask)


def parse_task(body: str) -> ShardTask | ScopeTask:
    return _TASK.validate_json(body)


# ---- requests and results -----------------------------------------------------------------------

class ShardResult(BaseModel):
    week_start: date
    shard: int
    pages: int
    scopes_queued: int
    continued: bool  # the shard re-enqueued itself with a cursor, to go on in a fresh invocation


class ScopeResult(BaseModel):
    scope: dict[str, str]
    week_start: date
    report: Literal["written", "updated", "already_existed", "no_messages", "erased"]
    generated_by: str | None = None
    messages: int = 0
    hot_memory: Literal["refreshed", "skipped", "no_messages", "already_done", "not_run"] = "not_run"
    hot_entries: int = 0
    expired_removed: int = 0


class TaskResult(BaseModel):
    kind: Literal["shard", "scope"]
    outcome: str
    shard: ShardResult | None = None
    scope: ScopeResult | None = None


# ---- the service --------------------------------------------------------------------------------

class RollupService:
    def __init__(
        self,
        *,
        layers: LayerStore,
        queue: Callable[[], TaskQueue],
        writer: Callable[[], WeeklyReportWriter],
        refresher: Callable[[], HotMemoryRefresher | None],
        embedder: Callable[[], Embedder | None] = lambda: None,
        timezone: str = "UTC",
        refresh_messages: int = 50,
        page_size: int = 500,
        shard_margin_seconds: float = 30.0,
        scope_margin_seconds: float = 120.0,
        clock: Callable[[], datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
        dropped: Callable[[ScopeRef, datetime | None], bool] = lambda _scope, _queued_at: False,
    ) -> None:
        """`dropped`: whether a task queued then was queued before its scope's erasure (ErasureService.dropped)."""
        # Providers, not instances: the SQS client, the LLM SDK and the embedder load on first use only.
        self._layers = layers
        self._queue = queue
        self._writer = writer
        self._refresher = refresher
        self._embedder = embedder
        self._timezone = timezone
        self._refresh_messages = refresh_messages
        self._page_size = page_size
        self._shard_margin = shard_margin_seconds
        self._scope_margin = scope_margin_seconds
        self._clock = clock
        self._monotonic = monotonic
        self._dropped = dropped

    # ---- the worker ----------------------------------------------------------------------------

    def batch(self, remaining_seconds: Callable[[], float]) -> RollupBatch:
        """One worker invocation: runs its tasks one by one within the invocation's time."""
        return RollupBatch(self, remaining_seconds)

    def run_task(self, body: str, *, remaining_seconds: float, may_defer: bool = True) -> TaskResult:
        """A queued task. A shard task pages until its margin before the invocation's end; a scope task
        that may not finish in the time left is re-enqueued as a fresh message (not failed: that would
        spend one of its receives) unless `may_defer` is False (an invocation's first task always runs,
        so every invocation makes progress)."""
        task = parse_task(body)
        if isinstance(task, ShardTask):
            shard = self.expand_shard(task, self._monotonic() + remaining_seconds - self._shard_margin)
            return TaskResult(kind="shard", outcome="continued" if shard.continued else "expanded", shard=shard)
        if may_defer and remaining_seconds < self._scope_margin:
            self._queue().send([task.model_dump_json()])
            logger.info("rollup scope task deferred to a fresh invocation", extra={"week": task.week.isoformat()})
            return TaskResult(kind="scope", outcome="deferred")
        if self._dropped(task.scope, task.queued_at):  # the scope was erased since: nothing is written for it
            erased = ScopeResult(scope=scope_label(task.scope), week_start=task.week, report="erased")
            return TaskResult(kind="scope", outcome="erased", scope=erased)
        result = self.rollup_scope(task.scope, task.week, self._clock())
        return TaskResult(kind="scope", outcome=result.report, scope=result)

    def expand_shard(self, task: ShardTask, deadline: float) -> ShardResult:
        """Page through the shard's active scopes, one scope task each. At least one page is always done
        (progress); after that, past `deadline` (a `time.monotonic()` value) the shard continues itself."""
        cursor, pages, queued = task.cursor, 0, 0
        while True:
            scopes, cursor = self._layers.active_scopes(task.week, task.shard, cursor=cursor, limit=self._page_size)
            pages += 1
            self._queue().send([ScopeTask(week=task.week, tenant_id=s.tenant_id, scope_id=s.user_id,
                                          queued_at=self._clock()).model_dump_json() for s in scopes])
            queued += len(scopes)
            if not cursor:
                return ShardResult(week_start=task.week, shard=task.shard, pages=pages, scopes_queued=queued,
                                   continued=False)
            if self._monotonic() >= deadline:
                self._queue().send([task.model_copy(update={"cursor": cursor}).model_dump_json()])
                return ShardResult(week_start=task.week, shard=task.shard, pages=pages, scopes_queued=queued,
                                   continued=True)

    def rollup_scope(self, scope: ScopeRef, week_start: date, now: datetime) -> ScopeResult:
        """The week's report, then hot memory (LLM only), then the expired log. Raises when the writer or
        the store fails, so the task is retried; the stage on the report makes retries cheap. A report
        written before messages of its week arrived (logged late) is written again from the whole week."""
        result = ScopeResult(scope=scope_label(scope), week_start=week_start, report="already_existed")
        stage = self._layers.report_stage(scope, week_start)
        start, end = week_bounds(week_start, ZoneInfo(self._timezone))
        if stage is not None:
            messages: list[LogMessage] = self._layers.log_messages(scope, start=start, end=end, now=now)
            stored = next((r for r in self._layers.reports(scope) if r.week_start == week_start), None)
            if stored is not None and len(messages) > int(stored.metrics.get("messages", 0) or 0):
                result.messages = len(messages)
                if self._layers.replace_report(scope, self._report(scope, week_start, messages, now)):
                    result.report, stage = "updated", STAGE_WRITTEN
        else:
            messages = self._layers.log_messages(scope, start=start, end=end, now=now)
            result.messages = len(messages)
            if not messages:
                result.report = "no_messages"
            else:
                report = self._report(scope, week_start, messages, now)
                if self._layers.put_report_if_absent(scope, report):
                    result.report, result.generated_by, stage = "written", report.generated_by, STAGE_WRITTEN
                else:  # a concurrent delivery of the same task won; it refreshes hot memory
                    stage = STAGE_COMPLETE
        if stage == STAGE_WRITTEN:
            refresh = self.refresh_hot_memory(scope, now)
            result.hot_memory, result.hot_entries = refresh.status, len(refresh.entries)
            self._layers.mark_report_stage(scope, week_start, STAGE_COMPLETE)
        elif stage == STAGE_COMPLETE:
            result.hot_memory = "already_done"
        result.expired_removed = self._layers.delete_expired_log(scope, now)
        return result

    # ---- hot memory ----------------------------------------------------------------------------

    def refresh_hot_memory(self, scope: ScopeRef, now: datetime | None = None) -> HotMemoryRefresh:
        """Hot-memory refresh: the LLM reads the scope's recent log and updates status, decisions
        and preferences. Entries set through the API are never overwritten; unchanged ones are not rewritten
        (a write bumps the scope's version and so invalidates cached context). Offline: skipped."""
        now = now or self._clock()
        label = scope_label(scope)
        refresher = self._refresher()
        if refresher is None:
            return HotMemoryRefresh(scope=label, status="skipped", reason=NO_LLM)
        messages: list[LogMessage] = self._layers.recent_log(scope, limit=self._refresh_messages, now=now)
        if not messages:
            return HotMemoryRefresh(scope=label, status="no_messages")
        existing: list[HotMemoryEntry] = self._layers.hot_memory(scope)
        by_slot = {(e.type, e.key): e for e in existing}
        proposed = refresher.refresh(messages, existing, project=_is_project(scope), now=now)
        result = HotMemoryRefresh(scope=label, status="refreshed", messages_read=len(messages))
        for entry in proposed:
            current = by_slot.get((entry.type, entry.key))
            if current is not None and current.source == "api":
                result.kept_api_entries.append(f"{entry.type.value}/{entry.key}")
            elif current is not None and (current.value, current.priority) == (entry.value, entry.priority):
                result.unchanged += 1
            else:
                result.entries.append(self._layers.put_hot(scope, entry))
        return result

    # ---- internals -----------------------------------------------------------------------------

    def _report(self, scope: ScopeRef, week_start: date, messages: list[LogMessage], now: datetime) -> WeeklyReport:
        week = WeekLog(week_start=week_start, timezone=self._timezone, project=_is_project(scope), messages=messages,
                       metrics=week_metrics(messages, self._timezone))
        writer = self._writer()
        draft = writer.write(week)
        embedding, model = self._embed(draft)
        return WeeklyReport(week_start=week_start, week_end=week.week_end, summary=draft.summary,
                            key_events=draft.key_events, metrics=week.metrics, generated_by=writer.generated_by,
                            created_at=now, embedding=embedding, embedding_model=model)

    def _embed(self, draft: ReportDraft) -> tuple[bytes | None, str | None]:
        embedder = self._embedder()
        if embedder is None:
            return None, None
        # The text report search ranks (memory_layers._report_text): summary, then key events.
        vector = embedder.embed_documents(["\n".join([draft.summary, *draft.key_events])])[0]
        return encode_vector(vector), embedder.model_id


class RollupBatch:
    """One worker invocation's tasks, run one by one in the invocation's time (see `run_task`)."""

    def __init__(self, service: RollupService, remaining_seconds: Callable[[], float]) -> None:
        self._service = service
        self._remaining = remaining_seconds
        self._ran = 0

    def run(self, body: str) -> TaskResult:
        may_defer, self._ran = self._ran > 0, self._ran + 1
        return self._service.run_task(body, remaining_seconds=self._remaining(), may_defer=may_defer)


def _is_project(scope: ScopeRef) -> bool:
    return scope.is_project
