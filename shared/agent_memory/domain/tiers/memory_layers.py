"""The three memory layers, for any scope.

- L1, the conversation log: every message, kept 30 days (a setting), embedded and searchable.
- L2, hot memory: typed key/value entries with a priority, always injected.
- L3, the history book: one report per scope and week, rolled up from the log every Monday.

A scope is a user or a project under a tenant. Both are a `ScopeRef` whose id says which: a user's
id as is, a project's as ``project/<id>`` ("/" is not allowed in ids, so the two never collide).
The memory table's partition, caches and routes then work the same for both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, computed_field
from pydantic.alias_generators import to_camel

from agent_memory.domain.keys import PROJECT_PREFIX, Id, ScopeId
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.requests import OpenRequestModel

ScopeType = Literal["users", "projects"]


def scope_ref(tenant_id: str, scope_type: ScopeType, scope_id: str) -> ScopeRef:
    return ScopeRef(tenant_id=tenant_id, user_id=scope_id if scope_type == "users" else PROJECT_PREFIX + scope_id)


def scope_label(scope: ScopeRef) -> dict[str, str]:
    """How a scope is shown to callers: `{"type": "project", "id": "p-1"}`."""
    if scope.is_project:
        return {"type": "project", "id": scope.scope_id}
    return {"type": "user", "id": scope.user_id}


# ---- L1 -----------------------------------------------------------------------------------------

class LogMessage(BaseModel):
    """One conversation message in the log."""

    message_id: str
    conversation_id: str
    role: Literal["user", "assistant"]
    content: str
    intent: str | None = None
    author_id: str | None = None  # who said it, in a project scope with many users
    created_at: datetime
    expires_at: datetime
    embedding: bytes | None = None
    embedding_model: str | None = None


MAX_LOG_BATCH = 100  # messages in one append: DynamoDB's transaction limit (the active-week markers apart)


@dataclass(frozen=True)
class LogEntry:
    """A message to append, as its caller sent it: the log gives it an id and a time when it has none."""

    role: Literal["user", "assistant"]
    content: str
    intent: str | None = None
    created_at: datetime | None = None
    message_id: str | None = None
    author_id: str | None = None


@dataclass(frozen=True)
class LogAppend:
    """Messages to append to one conversation, and whether to queue the user's for extraction. `single`: the
    caller sent one message's fields at the top level, so its errors name them as sent (`createdAt`)."""

    messages: list[LogEntry]
    extract: bool = False
    single: bool = False

    def field_name(self, index: int, field: str) -> str:
        """How a message's field is named in errors: `createdAt` for one message, `messages.3.createdAt`."""
        name = to_camel(field)
        return name if self.single else f"messages.{index}.{name}"


@dataclass(frozen=True)
class LogAppended:
    """The messages stored (in order), the user messages queued for extraction, and those the queue refused."""

    messages: list[LogMessage]
    queued: list[str]
    failed: list[str]


@dataclass(frozen=True)
class LogQuery:
    """A search of a scope's log: the query (stripped, non-empty) and the filters on what it ranks."""

    query: str
    conversation_id: str | None = None
    role: Literal["user", "assistant"] | None = None
    intent: str | None = None
    time_range: tuple[datetime, datetime] | None = None  # [start, end], both inclusive


class LogKey(BaseModel):
    """Where a logged message is: its time, conversation and id (its sort key)."""

    conversation_id: Id
    message_id: Id
    created_at: datetime


class EmbeddingJob(BaseModel):
    """Logged messages to embed (an SQS message body): the append writes them without vectors and
    returns; the worker embeds them moments later. Until then a log search ranks them by words alone."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["embed"] = "embed"
    tenant_id: Id
    scope_id: ScopeId
    messages: list[LogKey] = Field(min_length=1, max_length=100)

    @property
    def scope(self) -> ScopeRef:
        return ScopeRef(tenant_id=self.tenant_id, user_id=self.scope_id)


class LogHit(BaseModel):
    """A log search hit (id, content, role, intent, created_at, similarity), plus where from."""

    message_id: str
    conversation_id: str
    role: str
    content: str
    intent: str | None
    created_at: datetime
    similarity: float

    @computed_field  # type: ignore[prop-decorator]
    @property
    def id(self) -> str:
        """The message id, under the name log hits expose it by."""
        return self.message_id


# ---- L2 -----------------------------------------------------------------------------------------

# A hot-memory entry's key: 1-128 characters (it may be Chinese), without '#' or '/' (they build its sort
# key and its URL), control characters or the invisible marks that reorder text (U+202E shows "abc" as "cba").
HOT_MEMORY_KEY_PATTERN = r"^[^#/\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]{1,128}$"
HotMemoryKey = Annotated[str, StringConstraints(strip_whitespace=True, pattern=HOT_MEMORY_KEY_PATTERN)]


class HotMemoryType(StrEnum):
    META = "meta"
    STATUS = "status"
    DECISION = "decision"
    PREFERENCE = "preference"


class HotMemoryEntry(BaseModel):
    """A hot memory entry: unique per (scope, type, key)."""

    type: HotMemoryType
    key: str
    value: Any
    priority: int = 0
    source: Literal["api", "llm"] = "api"
    created_at: datetime
    updated_at: datetime


class UnreadableHotEntry(BaseModel):
    """A stored entry left out of a read, and why (delete it, or set it again, to clear this)."""

    type: HotMemoryType
    key: str
    reason: str


class HotMemoryRefresh(BaseModel):
    scope: dict[str, str]
    status: Literal["refreshed", "skipped", "no_messages"]
    reason: str | None = None
    messages_read: int = 0
    entries: list[HotMemoryEntry] = Field(default_factory=list)  # written (new or changed)
    unchanged: int = 0
    kept_api_entries: list[str] = Field(default_factory=list)  # "type/key" set through the API: never overwritten


# ---- L3 -----------------------------------------------------------------------------------------

class WeeklyReport(BaseModel):
    """A weekly report in the history book: one per (scope, week_start)."""

    week_start: date
    week_end: date
    summary: str = Field(max_length=500)
    key_events: list[str] = Field(default_factory=list)
    metrics: dict[str, Any] = Field(default_factory=dict)
    generated_by: Literal["llm", "extractive"] = "extractive"
    created_at: datetime
    embedding: bytes | None = None
    embedding_model: str | None = None


def week_start_of(moment: datetime, tz: Any = UTC) -> date:
    """The Monday of the week `moment` falls in, in the rollup's timezone."""
    local = moment.astimezone(tz).date()
    return local - timedelta(days=local.weekday())


def previous_week(moment: datetime, tz: Any = UTC) -> date:
    """The week a Monday-morning rollup reports on: the one before `moment`'s week."""
    return week_start_of(moment, tz) - timedelta(days=7)


def week_bounds(week_start: date, tz: Any = UTC) -> tuple[datetime, datetime]:
    """[start, end) of a week in UTC, for querying the log."""
    start = datetime.combine(week_start, datetime.min.time(), tzinfo=tz)
    return start.astimezone(UTC), (start + timedelta(days=7)).astimezone(UTC)


# ---- formatting for prompts ---------------------------------------------------------------------

HOT_SECTIONS = {
    # type: (zh project, zh user, en)
    HotMemoryType.META: ("## 项目信息", "## 基本信息", "## About"),
    HotMemoryType.STATUS: ("## 当前状态", "## 当前状态", "## Current status"),
    HotMemoryType.DECISION: ("## 关键决策", "## 关键决策", "## Key decisions"),
    HotMemoryType.PREFERENCE: ("## 偏好", "## 用户偏好", "## Preferences"),
}


def hot_value_text(value: Any) -> str:
    """A value as hot memory's prompt format writes it: JSON.stringify (strings quoted, no spaces)."""
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def format_hot_memory(entries: list[HotMemoryEntry], *, zh: bool, project: bool,
                      clean: Any = lambda text: text) -> str:
    """Hot memory's prompt format: the sections meta, status and decisions in that order, each entry
    `- key: JSON.stringify(value)`, entries by priority. A project gets exactly those sections; a user's
    preferences follow as a fourth. `clean` neutralizes text
    for a prompt."""
    types = [HotMemoryType.META, HotMemoryType.STATUS, HotMemoryType.DECISION]
    if not project:
        types.append(HotMemoryType.PREFERENCE)
    sections = []
    for type_ in types:
        chosen = sorted((e for e in entries if e.type == type_), key=lambda e: -e.priority)
        if not chosen:
            continue
        title = HOT_SECTIONS[type_][0 if project and zh else 1 if zh else 2]
        lines = [f"- {clean(e.key)}: {clean(hot_value_text(e.value))}" for e in chosen]
        sections.append("\n".join([title, *lines]))
    return "\n\n".join(sections)


# ---- a message's intent ---------------------------------------------------------------------------


# What an intent type retrieves beside hot memory: (retriever name, title in Chinese, in English).
INTENT_RETRIEVALS: dict[str, tuple[Literal["sop", "protocol"], str, str]] = {
    "QC_TASK": ("sop", "## 相关SOP", "## Relevant SOPs"),
    "PROTOCOL_QA": ("protocol", "## 方案知识库", "## Protocol knowledge base"),
}


def retrieval_of(intent_type: str) -> Literal["sop", "protocol"] | None:
    """The retriever an intent type reads (INTENT_RETRIEVALS), None when it reads none."""
    entry = INTENT_RETRIEVALS.get(intent_type.upper())
    return entry[0] if entry else None


class Intent(OpenRequestModel):
    """A message's intent: a type (QA_QUERY, QC_TASK, ...) and what it is about."""

    type: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]
    query: Annotated[str, StringConstraints(max_length=2000)] = ""
    entities: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        return (self.query or str(self.entities.get("query") or "")).strip()


class ContextPart(BaseModel):
    layer: Literal["hot_memory", "reports", "log", "sop", "protocol"]
    items: int
    tokens: int
    text: str


@dataclass(frozen=True)
class PromptContext:
    """Context for a prompt from the memory layers: the parts kept (in priority order, whole parts only,
    within `max_tokens`), and the layers left out."""

    parts: list[ContextPart]
    skipped: list[str]  # not asked for by the intent, nothing found, or over the budget
    max_tokens: int

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.parts)

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.parts)


# ---- log-and-forget extraction ---------------------------------------------------------------------


class ExtractionJob(BaseModel):
    """A queued log-and-forget extraction (the SQS message body)."""

    model_config = ConfigDict(extra="ignore")

    tenant_id: Id
    scope_id: ScopeId
    conversation_id: Id
    message_id: Id
    user_message: str = Field(min_length=1)
    assistant_message: str = ""  # the assistant message before it in the batch, if any
    # When it was queued: a job queued before its scope was erased is dropped (None: queued by older code).
    queued_at: datetime | None = None
    # The token subject that logged the message, recorded on the memories extracted from it (None: no token, or
    # a job queued before it was carried).
    written_by: str | None = None

    @property
    def scope(self) -> ScopeRef:
        return ScopeRef(tenant_id=self.tenant_id, user_id=self.scope_id)
