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
from typing import Literal

from pydantic import (
    BaseModel,
)

from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.models import Origin, Provenance, ScopeRef, utcnow
from agent_memory.domain.search.hybrid import rank_stored
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.domain.tiers.memory_layers import (
    MAX_LOG_BATCH,
    EmbeddingJob,
    ExtractionJob,
    LogAppend,
    LogAppended,
    LogHit,
    LogKey,
    LogMessage,
    LogQuery,
    week_start_of,
)
from agent_memory.errors import InvalidInput
from agent_memory.ports import ConversationTurn, Embedder, ExtractionQueue, LayerStore
from agent_memory.services.save import SaveService

# How far ahead of the server's clock a caller's created_at may be (clock skew, not scheduling).
MAX_CLOCK_SKEW = timedelta(minutes=5)
_JUST_AFTER = timedelta(milliseconds=1)
_LAST_INSTANT = datetime.max.replace(tzinfo=UTC)



class ConversationLogService:
    def __init__(
        self,
        *,
        layers: LayerStore,
        embedder: Callable[[], Embedder | None],
        queue: Callable[[], ExtractionQueue | None] = lambda: None,
        ttl_days: int | Callable[[str], int] = 30,
        timezone: tzinfo = UTC,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """`ttl_days`: how long the log is kept, for every tenant or by tenant (its retention policy's LOG)."""
        self._layers = layers
        self._embedder = embedder  # a provider: the model loads on first use
        self._queue = queue  # a provider: the SQS client is made on the first `extract: true` only
        self._ttl_days = ttl_days if callable(ttl_days) else (lambda _tenant: ttl_days)
        self._tz = timezone
        self._clock = clock

    # ---- append --------------------------------------------------------------------------------

    def append(self, scope: ScopeRef, conversation_id: str, request: LogAppend, *,
               written_by: str | None = None) -> LogAppended:
        """`written_by`: the token subject that sent the messages, recorded on what their extraction stores."""
        queue = self._queue()
        if request.extract and queue is None:
            raise InvalidInput("extraction queue not configured (LOG_EXTRACTION_QUEUE_URL)", details=[
                {"field": "extract", "message": "extraction queue not configured", "type": "unavailable"}])
        store = self._layers
        now = self._clock()
        messages = self._messages(conversation_id, request, now, timedelta(days=self._ttl_days(scope.tenant_id)))
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

        jobs = _extraction_jobs(scope, conversation_id, messages, written_by) if request.extract else []
        failed = queue.enqueue(jobs) if jobs and queue is not None else []  # queue is set when extract is
        return LogAppended(messages=messages, queued=[j.message_id for j in jobs if j.message_id not in failed],
                           failed=failed)

    def _messages(self, conversation_id: str, request: LogAppend, now: datetime, ttl: timedelta
                  ) -> list[LogMessage]:
        """Checks that need the clock and the TTL (the request model cannot know them); all at once."""
        problems: list[dict[str, str]] = []
        messages: list[LogMessage] = []
        seen: set[str] = set()
        for index, item in enumerate(request.messages):
            created_at = item.created_at or now
            expires_at = created_at + ttl
            if created_at > now + MAX_CLOCK_SKEW:
                problems.append({"field": request.field_name(index, "created_at"), "type": "future",
                                 "message": "is in the future"})
            elif expires_at <= now:
                problems.append({"field": request.field_name(index, "created_at"), "type": "expired",
                                 "message": f"is older than the log keeps ({ttl.days} days)"})
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
        store = self._layers
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

    def search(self, scope: ScopeRef, request: LogQuery) -> list[LogHit]:
        """The scope's unexpired messages that match, best first."""
        start, end = request.time_range or (None, None)
        # The store's end is exclusive; at the last representable instant nothing lies beyond it anyway.
        after_end = end + _JUST_AFTER if end is not None and end < _LAST_INSTANT - _JUST_AFTER else None
        found: list[LogMessage] = self._layers.log_messages(scope, start=start, end=after_end, now=self._clock())
        intent = request.intent.lower() if request.intent else None
        messages = [m for m in found
                    if (request.conversation_id is None or m.conversation_id == request.conversation_id)
                    and (request.role is None or m.role == request.role)
                    and (intent is None or (m.intent or "").lower() == intent)]
        scores = rank_stored(request.query, [m.content for m in messages],
                             [(m.embedding, m.embedding_model) for m in messages], self._embedder)
        ranked = sorted(zip(messages, scores, strict=True), key=lambda p: (p[1], p[0].created_at), reverse=True)
        return [LogHit(message_id=m.message_id, conversation_id=m.conversation_id, role=m.role, content=m.content,
                       intent=m.intent, created_at=m.created_at, similarity=min(1.0, score))
                for m, score in ranked if score > 0]


def new_message_id() -> str:
    """Time-ordered, like memory keys: a batch's messages with one created_at keep their order."""
    return "msg_" + new_memory_key().removeprefix("mem_")


def _embedding_job(scope: ScopeRef, messages: list[LogMessage]) -> EmbeddingJob:
    return EmbeddingJob(tenant_id=scope.tenant_id, scope_id=scope.user_id, messages=[
        LogKey(conversation_id=m.conversation_id, message_id=m.message_id, created_at=m.created_at)
        for m in messages])


def _extraction_jobs(scope: ScopeRef, conversation_id: str, messages: list[LogMessage],
                     written_by: str | None) -> list[ExtractionJob]:
    """One job per user message, with the assistant message before it in the batch (what it answers)."""
    jobs = []
    previous_assistant = ""
    for message in messages:
        if message.role == "assistant":
            previous_assistant = message.content
            continue
        jobs.append(ExtractionJob(tenant_id=scope.tenant_id, scope_id=scope.user_id, conversation_id=conversation_id,
                                  message_id=message.message_id, user_message=message.content,
                                  assistant_message=previous_assistant, queued_at=utcnow(),
                                  written_by=written_by))
    return jobs


# ---- the extraction worker ----------------------------------------------------------------------

class ExtractionOutcome(BaseModel):
    message_id: str
    # skipped: already extracted, or another delivery holds it; erased: queued before its scope was erased
    status: Literal["extracted", "skipped", "erased"]
    saved_count: int = 0


class LogExtractionWorker:
    """Log and forget, the consuming side: each queued user message is extracted at most once.

    The claim (a conditional put of `LOGX#<message_id>`) makes a redelivery a no-op; a failure
    releases it so the next delivery (SQS retries, then the DLQ) tries again. Saves are idempotent
    by content, so a crash between saving and `finish` stores nothing twice either.
    """

    def __init__(self, *, layers: LayerStore, save: SaveService, lease_seconds: int = 300,
                 dropped: Callable[[ScopeRef, datetime | None], bool] = lambda _scope, _queued_at: False) -> None:
        """`dropped`: whether work queued then was queued before its scope's erasure (ErasureService.dropped)."""
        self._layers = layers
        self._save = save
        self._lease = lease_seconds
        self._dropped = dropped

    def process(self, job: ExtractionJob) -> ExtractionOutcome:
        scope = job.scope
        if self._dropped(scope, job.queued_at):  # nothing of an erased scope comes back from its old queue
            return ExtractionOutcome(message_id=job.message_id, status="erased")
        if not self._layers.claim_extraction(scope, job.message_id, self._lease):
            return ExtractionOutcome(message_id=job.message_id, status="skipped")
        try:
            output = self._save.extract_and_save(
                scope, ConversationTurn(user_message=job.user_message, assistant_message=job.assistant_message),
                conversation_id=job.conversation_id,
                provenance=Provenance(origin=Origin.EXTRACT, written_by=job.written_by))
        except Exception:
            self._layers.release_extraction(scope, job.message_id)
            raise
        self._layers.finish_extraction(scope, job.message_id, output.saved_count)
        return ExtractionOutcome(message_id=job.message_id, status="extracted", saved_count=output.saved_count)
