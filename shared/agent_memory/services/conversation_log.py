"""L1, the conversation log (流水账, the running record): append, hybrid search, and log-and-forget extraction.

- `append` stores one message or a batch: contents embedded in one call, `expires_at` from the log's
  TTL, the scope's active weeks marked for the rollup, all in one transaction. With `extract: true`
  each user message is then queued for memory extraction (as save_info does), off the request path.
- `search` ranks the scope's unexpired log against a query: BM25 blended with cosine similarity
  (`domain.hybrid`: 0.5 x BM25 normalised by the best match + 0.5 x cosine, lexical only for messages
  without a vector of the current model), the same fusion intent context uses for the log.
- `LogExtractionWorker` runs a queued extraction once per message, however often SQS delivers it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails

from agent_memory.domain.hybrid import rank_stored
from agent_memory.domain.keys import Id, new_memory_key
from agent_memory.domain.layers import (
    EmbeddingJob,
    ExtractionJob,
    LogHit,
    LogKey,
    LogMessage,
    scope_label,
    week_start_of,
)
from agent_memory.domain.models import ScopeRef, TimeRange, not_in_the_future, require_utc, utcnow
from agent_memory.domain.requests import RequestModel, max_utf8_bytes
from agent_memory.domain.vectors import encode_vector
from agent_memory.errors import InvalidInput
from agent_memory.ports import ConversationTurn, Embedder, ExtractionQueue, LayerStore
from agent_memory.services.save import SaveService

MAX_LOG_MESSAGE_BYTES = 32 * 1024
MAX_LOG_BATCH = 100  # DynamoDB's transaction limit (the active-week markers are written apart)
# A batch of 100 messages of 32 KB, JSON-escaped; stays under Lambda's 6 MB synchronous payload.
MAX_LOG_BODY_BYTES = 4 * 1024 * 1024
# How far ahead of the server's clock a caller's created_at may be (clock skew, not scheduling).
MAX_CLOCK_SKEW = timedelta(minutes=5)
DEFAULT_SEARCH_LIMIT = 5
MAX_SEARCH_LIMIT = 20
_JUST_AFTER = timedelta(milliseconds=1)
_LAST_INSTANT = datetime.max.replace(tzinfo=UTC)



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

    def field_name(self, index: int, field: str) -> str:
        """How a message's field is named in errors: `createdAt` for one message, `messages.3.createdAt`."""
        name = to_camel(field)
        return name if self._single else f"messages.{index}.{name}"


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


class LogSearchRequest(RequestModel):
    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
    conversation_id: Id | None = None
    role: Literal["user", "assistant"] | None = None
    intent: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] | None = None
    time_range: TimeRange | None = None  # [start, end], both inclusive
    limit: int = Field(default=DEFAULT_SEARCH_LIMIT, ge=1, le=MAX_SEARCH_LIMIT)


class LogSearchResult(BaseModel):
    scope: dict[str, str]
    total_found: int
    results: list[LogHit]


class ConversationLogService:
    def __init__(
        self,
        *,
        layers: LayerStore,
        embedder: Callable[[], Embedder | None],
        queue: Callable[[], ExtractionQueue | None] = lambda: None,
        ttl_days: int = 30,
        timezone: tzinfo = UTC,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._layers = layers
        self._embedder = embedder  # a provider: the model loads on first use
        self._queue = queue  # a provider: the SQS client is made on the first `extract: true` only
        self._ttl = timedelta(days=ttl_days)
        self._tz = timezone
        self._clock = clock

    # ---- append --------------------------------------------------------------------------------

    def append(self, scope: ScopeRef, conversation_id: str, request: AppendMessagesRequest) -> AppendResult:
        queue = self._queue()
        if request.extract and queue is None:
            raise InvalidInput("extraction queue not configured (LOG_EXTRACTION_QUEUE_URL)", details=[
                {"field": "extract", "message": "extraction queue not configured", "type": "unavailable"}])
        store = self._store()
        now = self._clock()
        messages = self._messages(conversation_id, request, now)
        weeks: set[date] = {week_start_of(m.created_at, self._tz) for m in messages}
        if len(messages) > MAX_LOG_BATCH:
            raise InvalidInput("too many messages for one transaction", details=[{
                "field": "messages", "type": "too_long", "message": f"at most {MAX_LOG_BATCH} messages"}])
        # With a work queue the messages are stored first and embedded by the worker moments later, so
        # an append costs its write only; without one (or if the queue refuses) they are embedded here.
        deferred = queue is not None and self._embedder() is not None
        if not deferred:
            messages = self._embed(messages)
        store.append_messages(scope, messages, weeks)
        if deferred and queue is not None and not queue.enqueue_embedding(_embedding_job(scope, messages)):
            store.set_log_embeddings(scope, self._embed(messages))  # refused: embed the messages in hand

        jobs = _extraction_jobs(scope, conversation_id, messages) if request.extract else []
        failed = queue.enqueue(jobs) if jobs and queue is not None else []  # queue is set when extract is
        return AppendResult(
            scope=scope_label(scope), conversation_id=conversation_id, stored_count=len(messages),
            message_ids=[m.message_id for m in messages],
            messages=[StoredMessage(message_id=m.message_id, role=m.role, created_at=m.created_at,
                                    expires_at=m.expires_at) for m in messages],
            expires_at=min(m.expires_at for m in messages),
            queued_extractions=[j.message_id for j in jobs if j.message_id not in failed],
            failed_extractions=failed,
        )

    def _messages(self, conversation_id: str, request: AppendMessagesRequest, now: datetime) -> list[LogMessage]:
        """Checks that need the clock and the TTL (the request model cannot know them); all at once."""
        problems: list[dict[str, str]] = []
        messages: list[LogMessage] = []
        seen: set[str] = set()
        for index, item in enumerate(request.messages):
            created_at = item.created_at or now
            expires_at = created_at + self._ttl
            if created_at > now + MAX_CLOCK_SKEW:
                problems.append({"field": request.field_name(index, "created_at"), "type": "future",
                                 "message": "is in the future"})
            elif expires_at <= now:
                problems.append({"field": request.field_name(index, "created_at"), "type": "expired",
                                 "message": f"is older than the log keeps ({self._ttl.days} days)"})
            if item.message_id is not None and item.created_at is None:
                problems.append({"field": request.field_name(index, "created_at"), "type": "missing",
                                 "message": "is required with messageId (a retry must carry the same time)"})
            if item.message_id is not None and item.message_id in seen:
                problems.append({"field": request.field_name(index, "message_id"), "type": "duplicate",
                                 "message": "appears twice in the batch"})
            message_id = item.message_id or new_message_id()
            seen.add(message_id)
            messages.append(LogMessage(message_id=message_id, conversation_id=conversation_id, role=item.role,
                                       content=item.content, intent=item.intent, author_id=item.author_id,
                                       created_at=created_at, expires_at=expires_at))
        if problems:
            summary = "; ".join(f"{p['field']}: {p['message']}" for p in problems[:5])
            raise InvalidInput(f"invalid request: {summary}", details=problems)
        return messages

    def embed_logged(self, job: EmbeddingJob) -> int:
        """The worker's side: embed the job's messages that are still there and not yet embedded by this
        model (a redelivery costs one read). Returns how many were embedded."""
        embedder = self._embedder()
        if embedder is None:
            return 0
        store = self._store()
        pending = [m for m in store.logged_messages(job.scope, job.messages)
                   if not (m.embedding and m.embedding_model == embedder.model_id)]
        if pending:
            store.set_log_embeddings(job.scope, self._embed(pending))
        return len(pending)

    def _embed(self, messages: list[LogMessage]) -> list[LogMessage]:
        embedder = self._embedder()
        if embedder is None:
            return messages
        vectors = embedder.embed_documents([m.content for m in messages])
        return [m.model_copy(update={"embedding": encode_vector(v), "embedding_model": embedder.model_id})
                for m, v in zip(messages, vectors, strict=True)]

    # ---- search --------------------------------------------------------------------------------

    def search(self, scope: ScopeRef, request: LogSearchRequest) -> LogSearchResult:
        start, end = request.time_range or (None, None)
        # The store's end is exclusive; at the last representable instant nothing lies beyond it anyway.
        after_end = end + _JUST_AFTER if end is not None and end < _LAST_INSTANT - _JUST_AFTER else None
        found: list[LogMessage] = self._store().log_messages(scope, start=start, end=after_end, now=self._clock())
        intent = request.intent.lower() if request.intent else None
        messages = [m for m in found
                    if (request.conversation_id is None or m.conversation_id == request.conversation_id)
                    and (request.role is None or m.role == request.role)
                    and (intent is None or (m.intent or "").lower() == intent)]
        scores = rank_stored(request.query, [m.content for m in messages],
                             [(m.embedding, m.embedding_model) for m in messages], self._embedder)
        ranked = sorted(zip(messages, scores, strict=True), key=lambda p: (p[1], p[0].created_at), reverse=True)
        hits = [LogHit(message_id=m.message_id, conversation_id=m.conversation_id, role=m.role, content=m.content,
                       intent=m.intent, created_at=m.created_at, similarity=min(1.0, score))
                for m, score in ranked if score > 0]
        return LogSearchResult(scope=scope_label(scope), total_found=len(hits), results=hits[:request.limit])

    def _store(self) -> Any:
        if self._layers is None:
            raise InvalidInput("the conversation log needs the DynamoDB store", details=[{"field": "scope"}])
        return self._layers


def new_message_id() -> str:
    """Time-ordered, like memory keys: a batch's messages with one created_at keep their order."""
    return "msg_" + new_memory_key().removeprefix("mem_")


def _embedding_job(scope: ScopeRef, messages: list[LogMessage]) -> EmbeddingJob:
    return EmbeddingJob(tenant_id=scope.tenant_id, scope_id=scope.user_id, messages=[
        LogKey(conversation_id=m.conversation_id, message_id=m.message_id, created_at=m.created_at)
        for m in messages])


def _extraction_jobs(scope: ScopeRef, conversation_id: str, messages: list[LogMessage]) -> list[ExtractionJob]:
    """One job per user message, with the assistant message before it in the batch (what it answers)."""
    jobs = []
    previous_assistant = ""
    for message in messages:
        if message.role == "assistant":
            previous_assistant = message.content
            continue
        jobs.append(ExtractionJob(tenant_id=scope.tenant_id, scope_id=scope.user_id, conversation_id=conversation_id,
                                  message_id=message.message_id, user_message=message.content,
                                  assistant_message=previous_assistant))
    return jobs


# ---- the extraction worker ----------------------------------------------------------------------

class ExtractionOutcome(BaseModel):
    message_id: str
    status: Literal["extracted", "skipped"]  # skipped: already extracted, or another delivery holds it
    saved_count: int = 0


class LogExtractionWorker:
    """Log and forget, the consuming side: each queued user message is extracted at most once.

    The claim (a conditional put of `LOGX#<message_id>`) makes a redelivery a no-op; a failure
    releases it so the next delivery (SQS retries, then the DLQ) tries again. Saves are idempotent
    by content, so a crash between saving and `finish` stores nothing twice either.
    """

    def __init__(self, *, layers: LayerStore, save: SaveService, lease_seconds: int = 300) -> None:
        self._layers = layers
        self._save = save
        self._lease = lease_seconds

    def process(self, job: ExtractionJob) -> ExtractionOutcome:
        if self._layers is None:
            raise InvalidInput("the extraction worker needs the DynamoDB store")
        scope = job.scope
        if not self._layers.claim_extraction(scope, job.message_id, self._lease):
            return ExtractionOutcome(message_id=job.message_id, status="skipped")
        try:
            output = self._save.extract_and_save(
                scope, ConversationTurn(user_message=job.user_message, assistant_message=job.assistant_message),
                conversation_id=job.conversation_id)
        except Exception:
            self._layers.release_extraction(scope, job.message_id)
            raise
        self._layers.finish_extraction(scope, job.message_id, output.saved_count)
        return ExtractionOutcome(message_id=job.message_id, status="extracted", saved_count=output.saved_count)
