"""Domain model: what a memory is, independent of storage and transport."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, JsonValue

from agent_memory.domain.keys import PROJECT_PREFIX, Id, ScopeId
from agent_memory.domain.profile.field_names import MemoryFieldName
from agent_memory.domain.text.text import is_cjk


class MemoryType(StrEnum):
    """The memory types. Add a member (and its default importance) to extend the set."""

    FACT = "FACT"
    PREFERENCE = "PREFERENCE"
    INTENT = "INTENT"


# Importance by type (0-100): intents 80, facts 70, preferences 60.
DEFAULT_IMPORTANCE: dict[MemoryType, int] = {
    MemoryType.FACT: 70,
    MemoryType.INTENT: 80,
    MemoryType.PREFERENCE: 60,
}

def utcnow() -> datetime:
    return datetime.now(UTC)


class Origin(StrEnum):
    """How a memory version came to be stored (its provenance), set by the entry point that wrote it."""

    EXTRACT = "extract"  # read from a conversation turn: save_info, or a logged message's queued extraction
    DIRECT_SAVE = "direct_save"  # POST /memories or /memories/batch
    IMPORT = "import"  # brought in from an export or another memory store
    MEMORY_TOOL = "memory_tool"  # Claude's memory tool
    TOOL_EXECUTOR = "tool_executor"  # a model's tool call run by POST /tools/execute (save_user_memory)
    UNKNOWN = "unknown"  # stored before provenance was recorded, or by a path that did not say


def _origin(value: Any) -> Any:
    """An origin this code does not know (a newer deployment's, a damaged item) reads as unknown: a version is
    never unreadable for its provenance."""
    if value is None:
        return Origin.UNKNOWN
    try:
        return Origin(value)
    except ValueError:
        return Origin.UNKNOWN


StoredOrigin = Annotated[Origin, BeforeValidator(_origin)]


class Provenance(BaseModel):
    """How a memory version came (`origin`) and which token subject wrote it (`written_by`: the token's `sub`
    claim; None without a token, e.g. the local stack or a deployment without authorizer)."""

    model_config = ConfigDict(frozen=True)

    origin: Origin = Origin.UNKNOWN
    written_by: str | None = None


class ScopeRef(BaseModel):
    """Whose a memory is: a tenant's user, or a tenant's project (`user_id` = `project/<id>`). Tenant and scope
    together are the isolation boundary; every entry point (HTTP, queues, the scheduler) builds one of
    these, so every id is checked against the id alphabet here."""

    model_config = ConfigDict(frozen=True)

    tenant_id: Id
    user_id: ScopeId

    @property
    def is_project(self) -> bool:
        """A project's scope (a team's shared memory), not a user's."""
        return self.user_id.startswith(PROJECT_PREFIX)

    @property
    def scope_id(self) -> str:
        """The user's id, or the project's id without its prefix."""
        return self.user_id.removeprefix(PROJECT_PREFIX)


# A JSON object as it crosses a port (a retriever's item, a Messages entry, a pagination cursor).
JsonObject = dict[str, JsonValue]


class StoreVersions(BaseModel):
    """A user's two counters: `content` moves with every write that changes what is stored (caches of
    memories key on it); `access` moves when reads are recorded (access counts, last access)."""

    content: int = 0
    access: int = 0
    # Named when the counter is first written: an erased scope's counter starts again, in a new generation.
    generation: str = ""

    @property
    def tag(self) -> str:
        """The content version as a cache key part: never the same for two generations of the scope."""
        return f"{self.content}.{self.generation}" if self.generation else str(self.content)


class AccessStats(BaseModel):
    access_count: int = 0
    last_accessed_at: datetime | None = None


class Keyword(BaseModel):
    term: str = Field(min_length=1, max_length=100)
    weight: float = Field(default=1.0, ge=0.0, le=1.0)


class NewMemory(BaseModel):
    """A memory as a caller or the extractor proposes it, before it is stored."""

    memory_type: MemoryType
    content: str
    category: str | None = None
    field: MemoryFieldName = None
    importance: int | None = None
    keywords: list[Keyword] = Field(default_factory=list)
    source: str = "api"
    conversation_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None
    # The turn before this one in its conversation: indexed for search (a reply's question often
    # names what the reply is about), never shown as the memory's content.
    context: str | None = None
    embedding: bytes | None = Field(default=None, exclude=True, repr=False)
    embedding_model: str | None = None
    # Provenance, set by the entry point (never by a request body): how the memory came and who wrote it.
    origin: Origin = Origin.UNKNOWN
    written_by: str | None = None
    # Set by the save service from the tenant's retention policy, never by a caller.
    expires_at: datetime | None = Field(default=None, exclude=True)
    # The statement says the slot (or, for a list field, the item `metadata.value` names) no longer holds: it
    # supersedes the slot's current memory, and the profile shows no value for it.
    retraction: bool = False

    def effective_importance(self) -> int:
        return self.importance if self.importance is not None else DEFAULT_IMPORTANCE[self.memory_type]


class Memory(BaseModel):
    """A stored memory version. `superseded_at` set means it is history, never current: a newer version of its
    field took over then (`superseded_by`), or it was deleted then (`deleted_at`). A version is valid (what was
    known) from `valid_from` until `superseded_at`."""

    memory_key: str
    tenant_id: str
    user_id: str
    memory_type: MemoryType
    content: str
    category: str | None = None
    field: MemoryFieldName = None
    importance: int
    keywords: list[Keyword] = Field(default_factory=list)
    source: str = "api"
    conversation_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    content_hash: str
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    superseded_at: datetime | None = None
    superseded_by: str | None = None
    supersedes: str | None = None
    access_count: int = 0
    last_accessed_at: datetime | None = None
    version: int = 1
    # Written at save time: float16 little-endian bytes, and the model that produced them, so a
    # model change is detected (and the memory re-embedded) instead of comparing across models.
    context: str | None = None
    embedding: bytes | None = Field(default=None, exclude=True, repr=False)
    embedding_model: str | None = None
    # When it was deleted (its superseded_at is then the same instant, or earlier when a newer version had
    # already retired it). A deleted version is kept as history, so as-of reads know what was known before.
    deleted_at: datetime | None = Field(default=None, description=(
        "When this version was deleted (its validity ended then: superseded_at is that instant, or earlier when a "
        "newer version had retired it already); null: not deleted."))
    # Provenance: how this version came (old versions stored without it read as unknown) and the token subject
    # that wrote it (None: no token).
    origin: StoredOrigin = Field(default=Origin.UNKNOWN, description=(
        "How this version came: extract, direct_save, import, memory_tool, tool_executor; unknown for versions "
        "stored before provenance was recorded."))
    written_by: str | None = Field(default=None, description=(
        "The subject of the token that wrote this version (its USER_CLAIM, `sub` by default); null without a "
        "token."))
    # When the tenant's retention policy for its type ends it (domain/lifecycle/retention.py; the table's TTL):
    # None = kept.
    expires_at: datetime | None = Field(default=None, description=(
        "When the tenant's retention policy ends this version (GET /v1/retention); null: kept until deleted."))
    retraction: bool = Field(default=False, description=(
        "This version says its slot no longer holds (\"I'm not allergic to peanuts\", \"我不考虑高才通了\"): it "
        "retired the slot's memory (its superseded_by) and fills no profile field."))

    @property
    def is_current(self) -> bool:
        return self.superseded_at is None

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    def valid_at(self, at: datetime) -> bool:
        """Whether this version was current at `at`: from its `valid_from` until it was superseded or deleted."""
        return self.valid_from <= at and (self.superseded_at is None or at < self.superseded_at)

    def while_valid(self) -> Memory:
        """This version as it stood while it was valid: nothing had superseded or deleted it yet."""
        if self.superseded_at is None:
            return self
        return self.model_copy(update={"superseded_at": None, "superseded_by": None, "deleted_at": None})

    def as_it_stood(self, at: datetime) -> Memory:
        """This version as it was at `at` (as it stood while valid, if it was valid then)."""
        return self.while_valid() if self.valid_at(at) else self


def new_memory_version(user: ScopeRef, memory: NewMemory, memory_key: str, previous: Memory | None) -> Memory:
    """The stored form of a proposed memory; `previous` is the field's current memory it replaces."""
    now = utcnow()
    created_at = memory.created_at or now
    return Memory(
        memory_key=memory_key,
        tenant_id=user.tenant_id,
        user_id=user.user_id,
        memory_type=memory.memory_type,
        content=memory.content,
        category=memory.category,
        field=memory.field,
        importance=memory.effective_importance(),
        keywords=memory.keywords,
        source=memory.source,
        conversation_id=memory.conversation_id,
        metadata=memory.metadata,
        content_hash=content_hash(memory.content),
        created_at=created_at,
        updated_at=now,
        valid_from=max(created_at, previous.valid_from) if previous else created_at,
        supersedes=previous.memory_key if previous else None,
        # The field's version: 1 for its first memory, one more for each that supersedes the last.
        version=previous.version + 1 if previous else 1,
        context=memory.context,
        embedding=memory.embedding,
        embedding_model=memory.embedding_model,
        origin=memory.origin,
        written_by=memory.written_by,
        expires_at=memory.expires_at,
        retraction=memory.retraction,
    )


def superseded_by(previous: Memory, successor: Memory) -> Memory:
    """`previous` as history: no longer current from the moment its successor became valid."""
    return previous.model_copy(
        update={
            "superseded_at": successor.valid_from,
            "superseded_by": successor.memory_key,
            "updated_at": successor.valid_from,
        }
    )


def deleted_version(memory: Memory, at: datetime) -> Memory:
    """`memory` deleted at `at`: history from then on (a version a newer one had already retired keeps the end
    of its validity), kept so that what was known before the delete can still be read as of then."""
    return memory.model_copy(update={"deleted_at": at, "superseded_at": memory.superseded_at or at,
                                     "updated_at": at})


class ExtractedMemory(BaseModel):
    """One memory the extractor found in a conversation turn.

    `field` is the profile slot (age, education, ...) and the upsert key; `value` is the
    structured value reported in `extracted_info` (e.g. 32, "硕士", 800000).
    """

    memory_type: MemoryType
    content: str
    field: MemoryFieldName = None
    value: Any = None
    category: str | None = None
    keywords: list[Keyword] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The statement takes the slot back ("我不考虑高才通了": targetCategory TTPS; "I don't have any pets": pet, no
    # value, every item): see NewMemory.retraction.
    retraction: bool = False
    # The sentence of the user's message it was read from, when the extractor knows it (never stored): what
    # extract's skipped_sentences leaves out.
    said_in: str | None = Field(default=None, exclude=True)


class SaveOutcome(StrEnum):
    CREATED = "created"
    SUPERSEDED = "superseded"  # created, and replaced the field's previous current memory
    DUPLICATE = "duplicate"  # identical content already current: nothing stored
    MERGED = "merged"  # restates a current memory in nearly the same words: nothing stored, that one kept


class SaveResult(BaseModel):
    outcome: SaveOutcome
    memory: Memory
    superseded: Memory | None = None


class PartialSave(Exception):
    """A fault stopped `save_many` part-way: `written` are the results of the items stored before it,
    in order; no later item was stored."""

    def __init__(self, written: list[SaveResult], cause: Exception) -> None:
        super().__init__(str(cause))
        self.written = written
        self.cause = cause


class MemoryPage(BaseModel):
    items: list[Memory]
    next_cursor: str | None = None


_IGNORED_CHARS = re.compile(r"[\s]+")


def normalize_content(text: str) -> str:
    """Canonical form for duplicate detection: width, case, spacing and punctuation don't count."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded if not unicodedata.category(ch).startswith(("P", "Z", "C")))
    return _IGNORED_CHARS.sub("", kept)


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_content(text).encode("utf-8")).hexdigest()[:32]


def is_cjk_text(text: str, threshold: float = 0.2) -> bool:
    """True when enough of the letters are CJK that replies should be written in Chinese."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return False
    cjk = sum(1 for ch in letters if is_cjk(ch))
    return cjk / len(letters) >= threshold


# The instants the API accepts. What is computed from an accepted instant stays representable: a week's Mondays
# around it, a time cue's years before it ("去年", "three years ago"), a TTL in epoch seconds (never negative).
EARLIEST_INSTANT = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_INSTANT = datetime(9000, 1, 1, tzinfo=UTC)
_SUPPORTED = "must be between 1970-01-01T00:00:00Z and 9000-01-01T00:00:00Z"


def require_utc(value: datetime | None) -> datetime | None:
    """Timestamps must say their timezone, and lie in the supported range; they are kept in UTC so they sort as
    text too."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("must include a timezone, e.g. 2026-02-05T10:00:00Z")
    try:
        utc = value.astimezone(UTC)
    except OverflowError as error:  # 0001-01-01T00:00:00+01:00 is before the first representable instant
        raise ValueError(_SUPPORTED) from error
    if not EARLIEST_INSTANT <= utc < LATEST_INSTANT:
        raise ValueError(_SUPPORTED)
    return utc


# How far ahead of this clock a caller's clock may run before its timestamp counts as the future.
CLOCK_SKEW = timedelta(minutes=5)


def not_in_the_future(value: datetime | None) -> datetime | None:
    """A memory from the future would never decay and would outrank everything said since."""
    if value is not None and value > utcnow() + CLOCK_SKEW:
        raise ValueError("must not be in the future")
    return value


def _timestamp_text(value: Any) -> Any:
    if not isinstance(value, str | datetime):
        raise ValueError("must be an ISO-8601 timestamp with a timezone, e.g. 2026-02-05T10:00:00Z")
    return value


# An instant to read memories as of: ISO-8601 text with a timezone (kept in UTC), not in the future (CLOCK_SKEW).
AsOf = Annotated[datetime, BeforeValidator(_timestamp_text), AfterValidator(require_utc),
                 AfterValidator(not_in_the_future)]


def require_supported_day(value: date) -> date:
    """A calendar day in the supported range (a week's Mondays around it stay representable)."""
    if not EARLIEST_INSTANT.date() <= value < LATEST_INSTANT.date():
        raise ValueError("must be between 1970-01-01 and 9000-01-01")
    return value


# A calendar day the API accepts (a report's week).
SupportedDay = Annotated[date, AfterValidator(require_supported_day)]


def _ordered_range(value: tuple[datetime, datetime]) -> tuple[datetime, datetime]:
    start, end = value
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("both ends need a timezone, e.g. 2026-02-05T00:00:00Z")
    try:
        utc_start, utc_end = start.astimezone(UTC), end.astimezone(UTC)
    except OverflowError as error:  # 0001-01-01T00:00:00+01:00 is before the first representable instant
        raise ValueError("is out of the representable range of dates") from error
    if utc_start > utc_end:
        raise ValueError("start is after end")
    # Nothing is stored outside the supported range: a filter from year 1 to 9999 is "all time".
    return (min(max(utc_start, EARLIEST_INSTANT), LATEST_INSTANT),
            min(max(utc_end, EARLIEST_INSTANT), LATEST_INSTANT))


# A [start, end] filter, both ends with a timezone, in order, in UTC, each moved into the supported range (an end
# outside the representable dates, as 0001-01-01T00:00:00+01:00 is, is refused).
TimeRange = Annotated[tuple[datetime, datetime], AfterValidator(_ordered_range)]

