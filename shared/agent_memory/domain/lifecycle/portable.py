"""The export format: everything a user or project holds, as pages of JSON another deployment can import.

A page (`ExportPage`) names its format and version and holds records of five kinds, each whole in one page:
memories (a field's chain of versions, oldest first, its last version current unless the current one was
deleted), unexpired log messages, hot-memory entries, weekly reports and memory-tool entries (directories
before what they hold), plus the tenant's synonyms those memories use. Embeddings are not part of it: an
import computes them again. A page is sized so that importing it is one DynamoDB transaction (at most
`PAGE_MAX_WRITES` writes, the scope's version counter apart), at most `PAGE_MAX_BYTES` of JSON and at most
`PAGE_MAX_EMBEDDED_TOKENS` of embedding work; the cursor that continues an export is opaque to callers.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from agent_memory.domain.keys import (
    FILE_PREFIX,
    HOT_PREFIX,
    LOG_PREFIX,
    MEMORY_KEY_PATTERN,
    MEMORY_PREFIX,
    REPORT_PREFIX,
    Id,
)
from agent_memory.domain.memory_tool.memory_files import MemoryDirectory, MemoryFile
from agent_memory.domain.memory_tool.memory_paths import ROOT, memory_path
from agent_memory.domain.models import (
    Keyword,
    Memory,
    MemoryType,
    Origin,
    StoredOrigin,
    SupportedDay,
    not_in_the_future,
    require_utc,
)
from agent_memory.domain.profile.field_names import MemoryFieldName
from agent_memory.domain.requests import MAX_CONTENT_BYTES, MAX_MESSAGE_BYTES, RequestModel, max_utf8_bytes
from agent_memory.domain.search.embedding_budget import embedding_costs
from agent_memory.domain.text.keywords import normalize_keyword
from agent_memory.domain.tiers.memory_layers import (
    HOT_MEMORY_KEY_PATTERN,
    HotMemoryEntry,
    HotMemoryType,
    LogMessage,
    WeeklyReport,
)
from agent_memory.errors import InvalidInput

EXPORT_FORMAT: Final = "agent-memory-export"
EXPORT_FORMAT_VERSION: Final = 1
# One import is one TransactWriteItems (100 actions): the page's writes, and the scope's version counter.
PAGE_MAX_WRITES = 90
IMPORT_MAX_WRITES = 99
# Far under API Gateway's 10 MB and Lambda's 6 MB, and under a transaction's 4 MB once embeddings are added.
PAGE_MAX_BYTES = 1_000_000
# What one import may write, as JSON: a transaction holds 4 MB (embeddings and item overhead come on top).
IMPORT_MAX_BYTES = 3_000_000
# Counters (versions, reads) as DynamoDB numbers hold them, with room to spare.
MAX_COUNT = 10**15
# What an import embeds again (the memories', log's and reports' texts), under the save function's budget.
PAGE_MAX_EMBEDDED_TOKENS = 8_000

Timestamp = Annotated[datetime, AfterValidator(require_utc), AfterValidator(not_in_the_future)]
MemoryKey = Annotated[str, StringConstraints(pattern=MEMORY_KEY_PATTERN)]
# A memory's content and context, and a logged message, as a save and a log append take them.
Content = Annotated[str, StringConstraints(min_length=1), AfterValidator(max_utf8_bytes(MAX_CONTENT_BYTES))]
Context = Annotated[str, AfterValidator(max_utf8_bytes(MAX_CONTENT_BYTES))]
MessageText = Annotated[str, AfterValidator(max_utf8_bytes(MAX_MESSAGE_BYTES))]
Label = Annotated[str, StringConstraints(min_length=1, max_length=128)]


class ExportedVersion(RequestModel):
    """One version of a memory, as stored (no embedding)."""

    memory_key: MemoryKey
    memory_type: MemoryType
    content: Content
    category: Label | None = None
    field: MemoryFieldName = None
    importance: int = Field(ge=0, le=100)
    keywords: list[Keyword] = Field(default_factory=list, max_length=64)
    source: Label = "api"
    conversation_id: Label | None = None
    metadata: Annotated[dict[str, Any], AfterValidator(max_utf8_bytes(16 * 1024))] = Field(default_factory=dict)
    context: Context | None = None
    created_at: Timestamp
    updated_at: Timestamp
    valid_from: Timestamp
    superseded_at: Timestamp | None = None
    superseded_by: MemoryKey | None = None
    supersedes: MemoryKey | None = None
    version: int = Field(default=1, ge=1, le=MAX_COUNT)
    access_count: int = Field(default=0, ge=0, le=MAX_COUNT)
    last_accessed_at: Timestamp | None = None
    # A deleted version (its validity ended then: superseded_at, with no superseded_by when it was current).
    deleted_at: Timestamp | None = None
    # Provenance as stored (an import records its own: origin `import`, the importing token's subject).
    origin: StoredOrigin = Origin.UNKNOWN
    written_by: Annotated[str, StringConstraints(max_length=256)] | None = None
    # The version takes its slot back (a denial, a withdrawal, an ending).
    retraction: bool = False

    @model_validator(mode="after")
    def _retired_together(self) -> ExportedVersion:
        if self.superseded_by is not None and self.superseded_at is None:
            raise ValueError("superseded_at: a version superseded_by another has its superseded_at")
        if self.superseded_at is not None and self.superseded_by is None and self.deleted_at is None:
            raise ValueError("superseded_at: a version retired by no successor must have been deleted (deleted_at)")
        # A deleted version ends its chain: its validity ended when it was deleted, and nothing succeeds it.
        if self.deleted_at is not None and (self.superseded_at is None or self.superseded_by is not None):
            raise ValueError("deleted_at: a deleted version ends its chain (superseded_at set, no superseded_by)")
        return self

    @property
    def is_current(self) -> bool:
        return self.superseded_at is None


class ExportedMemory(RequestModel):
    """A memory with its version history, oldest first: each version retired by the next (`superseded_by`,
    `supersedes`), all of one field. The last one is current, unless it was retired by a version since deleted
    (then the chain holds history only). A chain too long for one page continues in the next: its first version
    may name a `supersedes` this record does not hold, its last a `superseded_by`."""

    versions: list[ExportedVersion] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_chain(self) -> ExportedMemory:
        for older, newer in zip(self.versions, self.versions[1:], strict=False):
            if older.superseded_by != newer.memory_key or newer.supersedes != older.memory_key:
                raise ValueError(f"versions: {older.memory_key} and {newer.memory_key} are not one version after "
                                 "the other (superseded_by / supersedes)")
            if newer.field != older.field:
                raise ValueError(f"versions: {newer.memory_key} is of another field than {older.memory_key}")
        return self


class ExportedLogMessage(RequestModel):
    message_id: Id
    conversation_id: Id
    role: Literal["user", "assistant"]
    content: MessageText
    intent: Label | None = None
    author_id: Id | None = None
    created_at: Timestamp
    expires_at: Annotated[datetime, AfterValidator(require_utc)]


class ExportedHotEntry(RequestModel):
    type: HotMemoryType
    key: Annotated[str, StringConstraints(pattern=HOT_MEMORY_KEY_PATTERN)]
    value: Annotated[Any, AfterValidator(max_utf8_bytes(16 * 1024))]
    priority: int = Field(default=0, ge=-1000, le=1000)
    source: Literal["api", "llm"] = "api"
    created_at: Timestamp
    updated_at: Timestamp


class ExportedReport(RequestModel):
    week_start: SupportedDay
    week_end: SupportedDay
    summary: Annotated[str, StringConstraints(max_length=500)]
    key_events: list[Annotated[str, StringConstraints(max_length=2000)]] = Field(default_factory=list, max_length=50)
    metrics: Annotated[dict[str, Any], AfterValidator(max_utf8_bytes(16 * 1024))] = Field(default_factory=dict)
    generated_by: Literal["llm", "extractive"] = "extractive"
    created_at: Timestamp

    @field_validator("metrics")
    @classmethod
    def _messages_counted(cls, metrics: dict[str, Any]) -> dict[str, Any]:
        """`metrics.messages` is how many log messages the report was written from (a rerun compares it)."""
        messages = metrics.get("messages")
        if messages is not None and (isinstance(messages, bool) or not isinstance(messages, int)
                                     or not 0 <= messages <= MAX_COUNT):
            raise ValueError("metrics.messages is the count of messages the report covers, an integer")
        return metrics


def _canonical_path(path: str) -> str:
    """A memory-tool path below /memories, written as the tool stores it."""
    if memory_path(path) != path or path == ROOT:
        raise ValueError(f"must be a path below {ROOT} as the memory tool writes it, e.g. {ROOT}/notes.md")
    return path


class ExportedFile(RequestModel):
    """A memory-tool entry: a file (with its text) or a directory (`is_directory`, no text)."""

    path: Annotated[str, AfterValidator(_canonical_path)]
    is_directory: bool = False
    text: Annotated[str, AfterValidator(max_utf8_bytes(64 * 1024))] | None = None
    created_at: Timestamp
    updated_at: Timestamp | None = None
    version: int = Field(default=1, ge=1, le=MAX_COUNT)

    @model_validator(mode="after")
    def _text_for_files(self) -> ExportedFile:
        if self.is_directory != (self.text is None):
            raise ValueError("text: a file has text, a directory none")
        return self


class ExportedSynonym(RequestModel):
    """One direction of a tenant synonym pair (`keyword` expands to `synonym`)."""

    keyword: Label
    synonym: Label
    similarity_score: float = Field(ge=0.0, le=1.0)


class ExportedScope(BaseModel):
    type: Literal["user", "project"]
    id: str


class LeftOut(RequestModel):
    """A record the export could not write out as an import takes it (a hot-memory value stored deeper than the
    nesting limit, before there was one)."""

    section: Literal["memories", "log", "hot_memory", "reports", "files"]
    key: Annotated[str, StringConstraints(max_length=1024)]
    reason: Annotated[str, StringConstraints(max_length=500)]


class ImportPage(RequestModel):
    """A page as an import takes it: an export page (its `next_cursor`, `left_out` and source fields are
    ignored)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "format": EXPORT_FORMAT, "version": EXPORT_FORMAT_VERSION,
        "memories": [{"versions": [
            {"memory_key": "mem_01jd0000000000000000000000", "memory_type": "FACT", "content": "Lives in Leeds",
             "field": "residence", "importance": 70, "created_at": "2026-01-05T10:00:00Z",
             "updated_at": "2026-03-01T09:00:00Z", "valid_from": "2026-01-05T10:00:00Z",
             "superseded_at": "2026-03-01T09:00:00Z", "superseded_by": "mem_01jg0000000000000000000000"},
            {"memory_key": "mem_01jg0000000000000000000000", "memory_type": "FACT", "content": "Lives in York",
             "field": "residence", "importance": 70, "created_at": "2026-03-01T09:00:00Z",
             "updated_at": "2026-03-01T09:00:00Z", "valid_from": "2026-03-01T09:00:00Z",
             "supersedes": "mem_01jd0000000000000000000000", "version": 2}]}],
    }]})

    format: Literal["agent-memory-export"]
    version: Literal[1]
    source_tenant_id: str | None = None
    scope: ExportedScope | None = None
    exported_at: datetime | None = None
    memories: list[ExportedMemory] = Field(default_factory=list, max_length=IMPORT_MAX_WRITES)
    log: list[ExportedLogMessage] = Field(default_factory=list, max_length=IMPORT_MAX_WRITES)
    hot_memory: list[ExportedHotEntry] = Field(default_factory=list, max_length=IMPORT_MAX_WRITES)
    reports: list[ExportedReport] = Field(default_factory=list, max_length=IMPORT_MAX_WRITES)
    files: list[ExportedFile] = Field(default_factory=list, max_length=IMPORT_MAX_WRITES)
    synonyms: list[ExportedSynonym] = Field(default_factory=list, max_length=IMPORT_MAX_WRITES)
    left_out: list[LeftOut] = Field(default_factory=list, max_length=IMPORT_MAX_WRITES,
                                    exclude_if=lambda records: not records)
    next_cursor: str | None = None

    @model_validator(mode="after")
    def _each_once(self) -> ImportPage:
        """A memory key, a log message, a hot-memory slot, a week or a path appears once in a page."""
        keys = [v.memory_key for m in self.memories for v in m.versions]
        _once("memories", keys)
        # The log keeps a message's time to the millisecond: two times within one are one message's.
        _once("log", [(m.created_at.replace(microsecond=m.created_at.microsecond // 1000 * 1000), m.conversation_id,
                       m.message_id) for m in self.log])
        _once("hot_memory", [(e.type, e.key) for e in self.hot_memory])
        _once("reports", [r.week_start for r in self.reports])
        _once("files", [f.path.rstrip("/") for f in self.files])
        _once("synonyms", [(normalize_keyword(s.keyword), normalize_keyword(s.synonym)) for s in self.synonyms])
        current = [(v.field, v.memory_key) for m in self.memories for v in m.versions if v.is_current and v.field]
        _once("memories", [field for field, _ in current], what="current memory of field")
        return self


def _once(section: str, values: list[Any], what: str = "entry") -> None:
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{section}: the {what} {value} appears twice")
        seen.add(value)


class ExportPage(ImportPage):
    """A page as an export answers it: `next_cursor` continues the export (null: this was the last page)."""

    model_config = ConfigDict(json_schema_extra={"examples": []})

    format: Literal["agent-memory-export"] = EXPORT_FORMAT
    version: Literal[1] = EXPORT_FORMAT_VERSION


# ---- how much a record costs an import ------------------------------------------------------------

def memory_writes(record: ExportedMemory) -> int:
    """A version is one item; a current one also its content marker, its field pointer, and one item per
    distinct keyword (as a save writes it)."""
    writes = 0
    for version in record.versions:
        writes += 1
        if version.is_current:
            writes += 1 + (1 if version.field else 0)
            writes += len({normalize_keyword(k.term) for k in version.keywords})
    return writes


def record_writes(section: str, record: BaseModel) -> int:
    return memory_writes(record) if isinstance(record, ExportedMemory) else 1


def page_writes(page: ImportPage) -> int:
    return (sum(memory_writes(m) for m in page.memories) + len(page.log) + len(page.hot_memory)
            + len(page.reports) + len(page.files) + len(page.synonyms))


def embedded_texts(record: BaseModel) -> list[str]:
    """The texts an import embeds for a record: each memory version's, a log message's, a report's."""
    if isinstance(record, ExportedMemory):
        return [v.content for v in record.versions]
    if isinstance(record, ExportedLogMessage):
        return [record.content]
    if isinstance(record, ExportedReport):
        return [report_text(record.summary, record.key_events)]
    return []


def report_text(summary: str, key_events: list[str]) -> str:
    """What a report's embedding is computed from (the rollup embeds the same)."""
    return "\n".join([summary, *key_events])


def embedded_tokens(record: BaseModel) -> int:
    return sum(embedding_costs(embedded_texts(record)))


def record_bytes(record: BaseModel) -> int:
    return len(record.model_dump_json().encode("utf-8"))


def page_bytes(page: BaseModel) -> int:
    return len(page.model_dump_json().encode("utf-8"))


# ---- the cursor ------------------------------------------------------------------------------------

# The sections in export order, with the sort-key prefix of their items in the scope's partition.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("memories", MEMORY_PREFIX), ("log", LOG_PREFIX), ("hot_memory", HOT_PREFIX), ("reports", REPORT_PREFIX),
    ("files", FILE_PREFIX))
SECTION_NAMES = tuple(name for name, _ in SECTIONS)
_PREFIX = dict(SECTIONS)


class ExportCursor(BaseModel):
    """Where an export goes on: the section, the last item of it already exported (None: from its start), and
    how many versions of the next memory went out already (a chain longer than a page)."""

    model_config = ConfigDict(frozen=True)

    section: str
    after: str | None = None
    skip: int = 0

    def encode(self) -> str:
        raw = json.dumps({"s": self.section, "a": self.after, "n": self.skip}, separators=(",", ":"),
                         ensure_ascii=False)
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, cursor: str | None) -> ExportCursor:
        if not cursor:
            return cls(section=SECTION_NAMES[0])
        try:
            values = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode())
            section, after, skip = values["s"], values["a"], values["n"]
        except (binascii.Error, UnicodeDecodeError, ValueError, KeyError, TypeError):
            section, after, skip = None, None, None
        if section not in _PREFIX or not (after is None or (isinstance(after, str)
                                                            and after.startswith(_PREFIX[section]))) \
                or not isinstance(skip, int) or isinstance(skip, bool) or not 0 <= skip < IMPORT_MAX_WRITES * 100:
            raise InvalidInput("cursor: not a cursor this API returned", details=[{"field": "cursor"}])
        return cls(section=section, after=after, skip=skip)


@dataclass
class ImportBatch:
    """What an import writes to a scope, as the store keeps it (embeddings computed): all of it, or nothing."""

    memories: list[Memory] = field(default_factory=list)
    log: list[LogMessage] = field(default_factory=list)
    hot_memory: list[HotMemoryEntry] = field(default_factory=list)
    reports: list[WeeklyReport] = field(default_factory=list)
    files: list[MemoryFile | MemoryDirectory] = field(default_factory=list)
    synonyms: list[tuple[str, str, float]] = field(default_factory=list)  # (keyword, synonym, similarity)

    def __len__(self) -> int:
        return (len(self.memories) + len(self.log) + len(self.hot_memory) + len(self.reports) + len(self.files)
                + len(self.synonyms))
