"""The conversation log over HTTP: appending messages and searching them, the requests and answers, and
how they map to the conversation log service."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, PrivateAttr, StringConstraints, ValidationError, model_validator
from pydantic_core import InitErrorDetails

from agent_memory.domain.keys import Id
from agent_memory.domain.models import ScopeRef, TimeRange, not_in_the_future, require_utc
from agent_memory.domain.requests import RequestModel, max_utf8_bytes
from agent_memory.domain.tiers.memory_layers import (
    MAX_LOG_BATCH,
    LogAppend,
    LogAppended,
    LogEntry,
    LogHit,
    LogQuery,
    scope_label,
)

if TYPE_CHECKING:
    from agent_memory.services.conversation_log import ConversationLogService

MAX_LOG_MESSAGE_BYTES = 32 * 1024
# A batch of 100 messages of 32 KB, JSON-escaped; stays under Lambda's 6 MB synchronous payload.
MAX_LOG_BODY_BYTES = 4 * 1024 * 1024
DEFAULT_SEARCH_LIMIT = 5
MAX_SEARCH_LIMIT = 20


class LogMessageIn(RequestModel):
    role: Literal["user", "assistant"]
    content: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1),
                       AfterValidator(max_utf8_bytes(MAX_LOG_MESSAGE_BYTES))]
    intent: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] | None = None
    # Default: the time of the request. A client message_id needs it: a retry must carry both to land
    # on the same item (the log's sort key is created_at + message_id).
    created_at: Annotated[datetime | None, AfterValidator(require_utc), AfterValidator(not_in_the_future)] = None
    message_id: Id | None = None
    author_id: Id | None = None  # who said it, in a project scope with many users


class AppendMessagesRequest(RequestModel):
    """One message (its fields at the top level) or a batch (`messages`), and whether to extract."""

    messages: list[LogMessageIn] = Field(min_length=1, max_length=MAX_LOG_BATCH)
    # Log and forget: queue each user message for memory extraction once it is stored.
    extract: bool = False
    _single: bool = PrivateAttr(default=False)

    @model_validator(mode="wrap")
    @classmethod
    def _one_or_many(cls, data: Any, handler: Callable[[Any], AppendMessagesRequest]) -> AppendMessagesRequest:
        if not isinstance(data, dict) or "messages" in data:
            return handler(data)
        message = {k: v for k, v in data.items() if k != "extract"}
        wrapped = {"messages": [message], **({"extract": data["extract"]} if "extract" in data else {})}
        try:
            request = handler(wrapped)
        except ValidationError as error:  # name a single message's fields as sent: `content`, not `messages.0.content`
            raise ValidationError.from_exception_data(cls.__name__, [
                InitErrorDetails(type=e["type"], loc=e["loc"][2:] if e["loc"][:2] == ("messages", 0) else e["loc"],
                                 input=e["input"], ctx=e.get("ctx", {}))
                for e in error.errors()
            ]) from None
        request._single = True
        return request

    def to_append(self) -> LogAppend:
        return LogAppend(messages=[LogEntry(role=m.role, content=m.content, intent=m.intent, created_at=m.created_at,
                                            message_id=m.message_id, author_id=m.author_id) for m in self.messages],
                         extract=self.extract, single=self._single)


class StoredMessage(BaseModel):
    message_id: str
    role: str
    created_at: datetime
    expires_at: datetime


class AppendResult(BaseModel):
    scope: dict[str, str]
    conversation_id: str
    stored_count: int
    message_ids: list[str]
    messages: list[StoredMessage]
    expires_at: datetime  # when the first of these messages leaves the log
    queued_extractions: list[str]  # message ids queued for extraction
    # Stored but not queued (SQS refused): send the same messages again (same message_id and
    # created_at, as returned here) to queue them; the log is overwritten in place.
    failed_extractions: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, scope: ScopeRef, conversation_id: str, appended: LogAppended) -> AppendResult:
        messages = appended.messages
        return cls(scope=scope_label(scope), conversation_id=conversation_id, stored_count=len(messages),
                   message_ids=[m.message_id for m in messages],
                   messages=[StoredMessage(message_id=m.message_id, role=m.role, created_at=m.created_at,
                                           expires_at=m.expires_at) for m in messages],
                   expires_at=min(m.expires_at for m in messages), queued_extractions=appended.queued,
                   failed_extractions=appended.failed)


class LogSearchRequest(RequestModel):
    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
    conversation_id: Id | None = None
    role: Literal["user", "assistant"] | None = None
    intent: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] | None = None
    time_range: TimeRange | None = None  # [start, end], both inclusive
    limit: int = Field(default=DEFAULT_SEARCH_LIMIT, ge=1, le=MAX_SEARCH_LIMIT)

    def to_query(self) -> LogQuery:
        return LogQuery(query=self.query, conversation_id=self.conversation_id, role=self.role, intent=self.intent,
                        time_range=self.time_range)


class LogSearchResult(BaseModel):
    scope: dict[str, str]
    total_found: int
    results: list[LogHit]

    @classmethod
    def of(cls, scope: ScopeRef, hits: list[LogHit], limit: int) -> LogSearchResult:
        """The first `limit` hits; `total_found` counts them all."""
        return cls(scope=scope_label(scope), total_found=len(hits), results=hits[:limit])


def append_to_log(service: ConversationLogService, scope: ScopeRef, conversation_id: str,
                    request: AppendMessagesRequest, *, written_by: str | None = None) -> AppendResult:
    """`written_by`: the token subject, recorded on the memories the queued extractions store."""
    return AppendResult.of(scope, conversation_id, service.append(scope, conversation_id, request.to_append(),
                                                                  written_by=written_by))


def search_log(service: ConversationLogService, scope: ScopeRef, request: LogSearchRequest) -> LogSearchResult:
    return LogSearchResult.of(scope, service.search(scope, request.to_query()), request.limit)
