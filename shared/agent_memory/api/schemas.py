"""HTTP request models. Limits here are part of the API contract, not deployment settings.

Every request accepts snake_case and camelCase names (`memory_type` or `memoryType`);
unknown fields are rejected so a typo never silently drops data.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, RootModel, StringConstraints

from agent_memory.domain.duplicates import EXTRACTED_SOURCE
from agent_memory.domain.keys import FIELD_PATTERN
from agent_memory.domain.models import (
    KNOWN_CATEGORIES,
    Keyword,
    MemoryType,
    NewMemory,
    not_in_the_future,
    require_utc,
)
from agent_memory.domain.requests import RequestModel, max_json_depth, max_utf8_bytes

MAX_BODY_BYTES = 256 * 1024
# Inject carries whole conversations: up to Lambda's 6 MB synchronous payload, less the envelope.
MAX_INJECT_BODY_BYTES = 5 * 1024 * 1024
MAX_CONTENT_BYTES = 8 * 1024
MAX_MESSAGE_BYTES = 32 * 1024
MAX_BATCH_ITEMS = 100
MAX_METADATA_BYTES = 4 * 1024


NonBlank = StringConstraints(strip_whitespace=True, min_length=1)
Content = Annotated[str, NonBlank, AfterValidator(max_utf8_bytes(MAX_CONTENT_BYTES))]
Message = Annotated[str, AfterValidator(max_utf8_bytes(MAX_MESSAGE_BYTES))]
ShortText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
FieldName = Annotated[str, StringConstraints(pattern=FIELD_PATTERN)]
Metadata = Annotated[dict[str, Any], AfterValidator(max_utf8_bytes(MAX_METADATA_BYTES))]


CATEGORY_DESCRIPTION = (
    "One of the deployment's categories, case-insensitive (MEMORY_CATEGORIES; by default "
    f"{', '.join(KNOWN_CATEGORIES)}); any other is a 422. An empty MEMORY_CATEGORIES accepts any category.")


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

    def to_new_memory(self) -> NewMemory:
        source = self.source or (EXTRACTED_SOURCE if self.conversation_id else "api")
        return NewMemory.model_validate({**self.model_dump(), "source": source})


class BatchRequest(RequestModel):
    memories: list[CreateMemoryRequest] = Field(min_length=1, max_length=MAX_BATCH_ITEMS)


class ExtractRequest(RequestModel):
    """The save_info action: extract memories from a conversation turn."""

    action: Literal["save_info"] | None = None
    user_message: Annotated[str, NonBlank, AfterValidator(max_utf8_bytes(MAX_MESSAGE_BYTES))]
    assistant_message: Message = ""
    existing_info: Metadata = Field(default_factory=dict)
    conversation_id: ShortText | None = None


class AddSynonymsRequest(RequestModel):
    """Keyword synonyms: a keyword and its synonyms (stored both ways, per tenant)."""

    keyword: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
    synonyms: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]] = Field(
        min_length=1, max_length=50)
    similarity_score: float = Field(default=0.8, ge=0.0, le=1.0)


class SynonymQuery(RequestModel):
    keyword: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class RefreshHotMemoryRequest(RequestModel):
    """The hot-memory refresh takes no fields: no body, or `{}`."""


class SummarizeRequest(RequestModel):
    """The summarize action (optional body)."""

    action: Literal["summarize"] | None = None


class ToolsQuery(RequestModel):
    """GET /v1/tools: the descriptions' language (default: the deployment's TOOLS_LANGUAGE) and whether
    to add the extended tools (log, hot memory, reports, profile) to the four memory tools."""

    lang: Literal["en", "zh"] | None = None
    include: Literal["core", "all"] = "core"


def _shallow_fields(body: dict[str, Any]) -> dict[str, Any]:
    """Each field at most MAX_JSON_DEPTH levels deep, the limit every request field has; named in the error."""
    for name, value in body.items():
        try:
            max_json_depth(value)
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from None
    return body


class MemoryToolRequest(RootModel[Annotated[dict[str, Any], AfterValidator(_shallow_fields)]]):
    """Claude's memory tool (memory_20250818) input, as the model sent it: `command` (view, create,
    str_replace, insert, delete or rename) and that command's fields (path, view_range, file_text, old_str,
    new_str, insert_line, insert_text, old_path, new_path). A command the model got wrong is answered with
    `is_error: true` for it to read, not refused here."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"command": "view", "path": "/memories"},
        {"command": "create", "path": "/memories/客户/偏好.md", "file_text": "喜欢邮件沟通\n"},
        {"command": "str_replace", "path": "/memories/客户/偏好.md", "old_str": "邮件", "new_str": "微信"},
    ]})
