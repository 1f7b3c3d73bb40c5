"""Hot memory, the weekly reports and intent context over HTTP: their requests and answers, and how
they map to the memory layers service."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from agent_memory.domain.models import ScopeRef
from agent_memory.domain.requests import RequestModel
from agent_memory.domain.tiers.memory_layers import (
    ContextPart,
    HotMemoryEntry,
    HotMemoryType,
    Intent,
    PromptContext,
    UnreadableHotEntry,
    WeeklyReport,
    scope_label,
)

MAX_HOT_VALUE_BYTES = 4 * 1024


def _small_json(value: Any) -> Any:
    size = len(json.dumps(value, ensure_ascii=False).encode())
    if size > MAX_HOT_VALUE_BYTES:
        raise ValueError(f"is {size} bytes as JSON; the limit is {MAX_HOT_VALUE_BYTES}")
    return value


class PutHotMemoryRequest(RequestModel):
    value: Annotated[Any, AfterValidator(_small_json)]
    priority: int = Field(default=0, ge=-1000, le=1000)


class RefreshHotMemoryRequest(RequestModel):
    """The hot-memory refresh takes no fields: no body, or `{}`."""


class HotMemoryView(BaseModel):
    """Hot memory grouped by section (meta, status, decisions, preferences), plus the flat list."""

    scope: dict[str, str]
    entries: list[HotMemoryEntry]
    meta: list[HotMemoryEntry]
    status: list[HotMemoryEntry]
    decisions: list[HotMemoryEntry]
    preferences: list[HotMemoryEntry]
    # Entries stored before values were limited to MAX_JSON_DEPTH levels and nested deeper: not in `entries`
    # (nor injected), so that one of them does not make every read of the scope's hot memory fail.
    unreadable: list[UnreadableHotEntry] = Field(default_factory=list)

    @classmethod
    def of(cls, scope: ScopeRef, hot_memory: tuple[list[HotMemoryEntry], list[UnreadableHotEntry]]) -> HotMemoryView:
        entries, unreadable = hot_memory
        by_type = {t: [e for e in entries if e.type == t] for t in HotMemoryType}
        return cls(scope=scope_label(scope), entries=entries, meta=by_type[HotMemoryType.META],
                   status=by_type[HotMemoryType.STATUS], decisions=by_type[HotMemoryType.DECISION],
                   preferences=by_type[HotMemoryType.PREFERENCE], unreadable=unreadable)


class HotMemoryDeleted(BaseModel):
    deleted: bool = True
    type: HotMemoryType
    key: str


class ReportView(BaseModel):
    week_start: date
    week_end: date
    summary: str
    key_events: list[str]
    metrics: dict[str, Any]
    generated_by: str
    created_at: datetime
    similarity: float | None = None

    @classmethod
    def of(cls, report: WeeklyReport, similarity: float | None = None) -> ReportView:
        return cls(week_start=report.week_start, week_end=report.week_end, summary=report.summary,
                   key_events=report.key_events, metrics=report.metrics, generated_by=report.generated_by,
                   created_at=report.created_at.astimezone(UTC), similarity=similarity)


class ReportList(BaseModel):
    scope: dict[str, str]
    reports: list[ReportView]

    @classmethod
    def of(cls, scope: ScopeRef, reports: list[WeeklyReport]) -> ReportList:
        return cls(scope=scope_label(scope), reports=[ReportView.of(r) for r in reports])

    @classmethod
    def found(cls, scope: ScopeRef, matches: list[tuple[WeeklyReport, float]]) -> ReportList:
        return cls(scope=scope_label(scope), reports=[ReportView.of(r, similarity) for r, similarity in matches])


class ReportSearchRequest(RequestModel):
    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
    limit: int = Field(default=3, ge=1, le=20)


class IntentContextRequest(RequestModel):
    intent: Intent
    max_tokens: int | None = Field(default=None, ge=100, le=50_000)


class IntentContext(BaseModel):
    scope: dict[str, str]
    context: str
    parts: list[ContextPart]
    skipped: list[str]  # layers left out: not asked for by the intent, nothing found, or over the budget
    tokens: int
    max_tokens: int

    @classmethod
    def of(cls, scope: ScopeRef, context: PromptContext) -> IntentContext:
        return cls(scope=scope_label(scope), context=context.text, parts=context.parts, skipped=context.skipped,
                   tokens=context.tokens, max_tokens=context.max_tokens)
