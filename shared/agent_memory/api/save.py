"""Saving memories over HTTP: one, a batch, or those extracted from a conversation turn, and deleting one;
the requests and answers, and how they map to the save service.

Every request accepts snake_case and camelCase names (`memory_type` or `memoryType`); unknown fields are
rejected so a typo never silently drops data.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from agent_memory.api.schemas import (
    MAX_BATCH_ITEMS,
    MAX_MESSAGE_BYTES,
    Content,
    FieldName,
    Message,
    Metadata,
    NonBlank,
    ShortText,
)
from agent_memory.domain.lifecycle.duplicates import EXTRACTED_SOURCE
from agent_memory.domain.models import (
    Keyword,
    Memory,
    MemoryType,
    NewMemory,
    Provenance,
    SaveOutcome,
    SaveResult,
    not_in_the_future,
    require_utc,
)
from agent_memory.domain.packs.immigration import IMMIGRATION
from agent_memory.domain.requests import QueryFlag, RequestModel, max_utf8_bytes
from agent_memory.ports import ConversationTurn

if TYPE_CHECKING:
    from agent_memory.services.save import TurnSaved

CATEGORY_DESCRIPTION = (
    "One of the tenant's categories, case-insensitive: its domain pack's (the immigration pack: "
    f"{', '.join(IMMIGRATION.categories)}; the general pack: any short text), or MEMORY_CATEGORIES when set; "
    "any other is a 422. An empty MEMORY_CATEGORIES accepts any category.")

class CreateMemoryRequest(RequestModel):
    """The save_user_memory tool's input, plus the optional slot and import fields."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"memory_type": "FACT", "content": "用户32岁，在杭州做前端开发", "importance": 80},
        {"memory_type": "PREFERENCE", "content": "Prefers short answers by email", "field": "contact_channel"},
    ]})

    memory_type: MemoryType
    content: Content
    category: ShortText | None = Field(default=None, description=CATEGORY_DESCRIPTION)
    field: FieldName | None = None
    importance: int | None = Field(default=None, ge=0, le=100)
    keywords: list[Keyword] = Field(default_factory=list, max_length=32)
    # Where the memory came from. Unstated: `conversation` with a conversation id (a memory an agent took from
    # that conversation), else `api`. `transcript` marks a verbatim turn of a conversation: kept as said, it gets
    # no profile field and merges only with turns of its own conversation.
    source: ShortText | None = Field(default=None, description=(
        "Where the memory came from. Default: `conversation` when `conversation_id` is given, else `api`. "
        "`transcript`: a verbatim turn of a conversation (no profile field is read from it; it never supersedes "
        "or merges into a memory outside its conversation)."))
    conversation_id: ShortText | None = None
    metadata: Metadata = Field(default_factory=dict)
    created_at: Annotated[datetime | None, AfterValidator(require_utc), AfterValidator(not_in_the_future)] = None
    # The preceding turn of the conversation, indexed for search only (batch items get it from the
    # previous item of the same conversation when omitted).
    context: Content | None = None
    retraction: bool = Field(default=False, description=(
        "true: the memory says its slot no longer holds (\"I'm not allergic to peanuts\", \"我不考虑高才通了\"); "
        "`field` is required, and for a list field the item is named by `category` or `metadata.value` as for "
        "any save of it (none: the whole field). It retires the slot's current memory (kept in its history, "
        "`superseded_by` this one; a whole list field's items are deleted) and fills no profile field. "
        "Without it, a memory whose field is inferred from its text is a retraction when the text says so."))

    @field_validator("retraction")
    @classmethod
    def _retracts_a_field(cls, retraction: bool, info: ValidationInfo) -> bool:
        if retraction and not info.data.get("field"):
            raise ValueError("a retraction names the field it takes back: set `field`")
        return retraction

    def to_new_memory(self, provenance: Provenance | None = None) -> NewMemory:
        """The memory to store, with the provenance the entry point records (never the body's to say)."""
        source = self.source or (EXTRACTED_SOURCE if self.conversation_id else "api")
        return NewMemory.model_validate({**self.model_dump(), "source": source,
                                         **(provenance or Provenance()).model_dump()})

class BatchRequest(RequestModel):
    memories: list[CreateMemoryRequest] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)

class ExtractRequest(RequestModel):
    """The save_info action: extract memories from a conversation turn."""

    action: Literal["save_info"] | None = None
    user_message: Annotated[str, NonBlank, AfterValidator(max_utf8_bytes(MAX_MESSAGE_BYTES))]
    assistant_message: Message = ""
    existing_info: Metadata = Field(default_factory=dict)
    conversation_id: ShortText | None = None

    def to_turn(self) -> ConversationTurn:
        return ConversationTurn(user_message=self.user_message, assistant_message=self.assistant_message,
                                existing_info=self.existing_info)

# Outcomes that stored nothing: the memory answered is the one already there.
NOT_STORED = frozenset({SaveOutcome.DUPLICATE, SaveOutcome.MERGED})

class SavedMemoryResponse(BaseModel):
    outcome: SaveOutcome
    memory: Memory
    superseded: Memory | None
    skipped_fields: list[str]  # the field of the memory already there (an identical one, or one it restates)

    @classmethod
    def of(cls, result: SaveResult) -> SavedMemoryResponse:
        kept = result.outcome in NOT_STORED
        return cls(outcome=result.outcome, memory=result.memory, superseded=result.superseded,
                   skipped_fields=[result.memory.field or ""] if kept else [])

    @property
    def status(self) -> int:
        return 200 if self.outcome in NOT_STORED else 201


class BatchItemResult(BaseModel):
    index: int
    memory_key: str
    outcome: SaveOutcome
    superseded_key: str | None


class BatchSaveResponse(BaseModel):
    saved_count: int  # created or superseding: not the duplicates nor the merged
    memory_keys: list[str]
    results: list[BatchItemResult]

    @classmethod
    def of(cls, results: list[SaveResult]) -> BatchSaveResponse:
        return cls(
            saved_count=sum(1 for r in results if r.outcome not in NOT_STORED),
            memory_keys=[r.memory.memory_key for r in results],
            results=[BatchItemResult(index=i, memory_key=r.memory.memory_key, outcome=r.outcome,
                                     superseded_key=r.superseded.memory_key if r.superseded else None)
                     for i, r in enumerate(results)],
        )

class DeleteMemoryQuery(RequestModel):
    purge: QueryFlag = Field(default=False, description=(
        "false (default): the memory leaves everything current and stays in its field's history, marked deleted, "
        "so an as_of read before the delete still knows it. true: the memory and every version of its field "
        "(deleted ones too) are removed for good, with the saved search indexes and cached contexts that held "
        "their text; works on a memory deleted before."))


class DeletedMemory(BaseModel):
    deleted: bool = True
    memory_key: str
    purged_versions: list[str] = Field(default_factory=list, exclude_if=lambda keys: not keys, description=(
        "With purge=true only: the memory keys of every version removed, oldest first."))

class SavedMemory(BaseModel):
    """A memory extract saved. `memoryType` is camelCase because the save_info action's output specifies it so
    (save, search and the memory itself answer `memory_type`); `field` is the slot the memory fills, as stored
    and as save and search answer it: the field (`age`), or for a list field the field and its value
    (`preference.tea`, `targetCategory.TTPS`)."""

    memoryType: MemoryType = Field(description="The memory's type; `memory_type` in every other answer (save_info's "
                                               "specified name).")
    content: str
    field: str = Field(description="The slot the memory fills, as stored: `age`, `preference.tea`, "
                                   "`targetCategory.TTPS` (`extracted_info` names the field alone).")
    retraction: bool = Field(default=False, exclude_if=lambda value: not value, description=(
        "Present and true when the memory takes its slot back (\"我不考虑高才通了\", \"my dog passed away\"): it "
        "retired the slot's current memory, and the profile no longer shows that value."))


# The extract answer's note when the offline rules read the turn.
OFFLINE_RULES_NOTE = ("Read by the offline rules, which know a fixed set of fields and phrasings; an LLM extractor "
                      "(LLM_PROVIDER=anthropic or bedrock) reads more of what the user says.")


class SaveInfoOutput(BaseModel):
    """The save_info action's answer: what was extracted and what was saved, and what of the user's message
    gave nothing. Its shape is the save_info action's specified output (snake_case members, with
    `saved_memories[].memoryType` in camelCase) plus `skipped_sentences` and `note`."""

    action: str = "save_info"
    extracted_info: dict[str, Any] = Field(default_factory=dict)
    retracted_info: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda info: not info, description=(
        "The fields the turn takes back, each with the item it names (a list of them for a list field given "
        "several), null for the whole field (\"I don't have any pets\"). Present only when there are some."))
    saved_count: int = 0
    saved_memories: list[SavedMemory] = Field(default_factory=list)
    skipped_fields: list[str] = Field(default_factory=list)
    skipped_sentences: list[str] = Field(default_factory=list, description=(
        "The user's sentences, in order, that no extracted memory came from (greetings and questions included): "
        "a memory comes from the sentences its value is written in, else from those its text shares a word with."))
    note: str | None = Field(default=None, description=(
        "Set when the offline rules read the turn (no LLM configured): an LLM extractor reads more."))

    @classmethod
    def of(cls, turn: TurnSaved) -> SaveInfoOutput:
        return cls(extracted_info=turn.extracted_info, retracted_info=turn.retracted_info,
                   saved_count=turn.saved_count,
                   saved_memories=[SavedMemory(memoryType=memory.memory_type, content=memory.content, field=field,
                                               retraction=memory.retraction)
                                   for field, memory in turn.saved],
                   skipped_fields=turn.skipped_fields, skipped_sentences=turn.skipped_sentences,
                   note=OFFLINE_RULES_NOTE if turn.read_by_rules else None)
