"""inject: assemble prioritized context blocks into an Anthropic Messages request (seed 08).

Flow, per the seed: fetch every block concurrently (through the context cache), drop empty ones,
sort by priority, fit them into the token budget (P2 dropped first, then P1; P0 never), place them
(the seed's leading user/assistant pair, or `system` content blocks with `cache_control`), then
auto-compact the history when it uses more than 80% of the budget. The output is always a valid
Messages array that ends with the current user message, untouched.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field, StringConstraints, field_validator, model_validator

from agent_memory.domain.context import (
    FRAME,
    ContextBlock,
    Locale,
    Priority,
    context_message,
    detect_locale,
    empty_block,
    frame_overhead_tokens,
    tagged_block,
)
from agent_memory.domain.conversation import auto_compact, turn_starts, validate_messages
from agent_memory.domain.models import UserRef
from agent_memory.domain.requests import OpenRequestModel, RequestModel
from agent_memory.domain.tokens import estimate_message_tokens
from agent_memory.errors import InvalidInput
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import CachedContext, ContextCache, TokenCounter
from agent_memory.services.memory_layers import Intent

Message = dict[str, Any]
MAX_MESSAGES = 5000
MAX_AGENT_RECORDS = 200
MAX_CALLER_ITEMS = 50
# Anthropic allows four cache breakpoints per request; we add one only when the caller left room.
MAX_CACHE_BREAKPOINTS = 4


# ---- request and result (the seed's ContextInjectionRequest / ContextInjectionResult) -------------

class MessageParam(RequestModel):
    role: Literal["user", "assistant"]
    content: str | Annotated[list[dict[str, Any]], Field(min_length=1)]

    @field_validator("content")
    @classmethod
    def _blocks_have_types(cls, value: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
        if isinstance(value, list):
            for i, block in enumerate(value):
                if not isinstance(block.get("type"), str):
                    raise ValueError(f"content[{i}] needs a string 'type' (text, image, tool_use, tool_result, ...)")
        return value


class StageRecord(OpenRequestModel):
    stage_id: str
    turns_in_stage: int = Field(default=0, ge=0)


class AssessmentResult(OpenRequestModel):
    recommended_programs: list[str] = Field(default_factory=list)
    suitability_score: float | None = None
    highlights: list[str] = Field(default_factory=list)
    concerns: list[str] = Field(default_factory=list)


class ConsultingState(OpenRequestModel):
    collected_info: dict[str, Any] = Field(default_factory=dict)
    assessment_result: AssessmentResult | None = None
    current_stage_id: str | None = None
    stage_history: list[StageRecord] = Field(default_factory=list)
    stage_turn_count: int = Field(default=0, ge=0)


class DeviceInfo(OpenRequestModel):
    device_type: str | None = None  # mobile | desktop | tablet
    device_model: str | None = None
    os: str | None = None
    timezone: str | None = None  # IANA name (Asia/Shanghai) or an offset (UTC+8)
    region: str | None = None
    locale: str | None = None


class AgentExecutionRecord(RequestModel):
    agent_name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    invoked_at: int = Field(ge=0)  # epoch milliseconds
    duration_ms: int = Field(default=0, ge=0)
    input_summary: str = ""
    output_summary: str = ""
    tokens_used: int = Field(default=0, ge=0)


class KnowledgeItem(RequestModel):
    """A retrieved item, as a caller or a retriever gives it: `{content, source, similarity, category}`."""

    content: Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
    source: str | None = None
    similarity: float | None = None
    category: str | None = None


class ExperienceItem(KnowledgeItem):
    content: Annotated[str, StringConstraints(min_length=1, max_length=5_000)]


Placement = Literal["pair", "system"]


class InjectionRequest(RequestModel):
    user_id: str
    conversation_id: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
    messages: Annotated[list[MessageParam], Field(max_length=MAX_MESSAGES)] = Field(default_factory=list)
    current_user_message: Annotated[str, StringConstraints(max_length=100_000)] = ""
    consulting_state: ConsultingState | None = None
    device_info: DeviceInfo | None = None
    agent_history: Annotated[list[AgentExecutionRecord], Field(max_length=MAX_AGENT_RECORDS)] | None = None
    max_context_tokens: int = Field(default=180_000, ge=1_000, le=2_000_000)
    placement: Placement = "pair"
    # The caller's own system prompt: the `system` placement puts the context after it.
    system: str | list[dict[str, Any]] | None = None
    # Caller-supplied knowledge and experiences; without them, a configured retriever is asked.
    relevant_knowledge: Annotated[list[KnowledgeItem], Field(max_length=MAX_CALLER_ITEMS)] | None = None
    similar_experiences: Annotated[list[ExperienceItem], Field(max_length=MAX_CALLER_ITEMS)] | None = None
    conversation_started_at: datetime | None = None
    # The IIT guide's layers: a project whose hot memory is injected too, and the intent of the current
    # message (question-like intents bring the history book and the conversation log).
    project_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._:@-]{1,128}$")] | None = None
    intent: Intent | None = None

    @model_validator(mode="after")
    def _ends_with_the_user(self) -> InjectionRequest:
        last = self.messages[-1] if self.messages else None
        if not self.current_user_message.strip() and (last is None or last.role != "user"):
            raise ValueError("current_user_message: required when messages is empty or ends with an assistant turn")
        if self.conversation_started_at is not None and self.conversation_started_at.tzinfo is None:
            raise ValueError("conversation_started_at: must include a timezone, e.g. 2026-02-05T10:00:00Z")
        return self


class InjectedBlock(BaseModel):
    type: str
    priority: str  # P0 | P1 | P2
    tokens: int
    cache_ttl_seconds: float
    cached: bool


class TokenUsage(BaseModel):
    available: int  # max_context_tokens - reserved output - reserved system
    messages_before: int
    messages_after: int
    context: int  # the injected blocks with their frame
    counted_by: Literal["estimate", "anthropic"]


class FailedBlock(BaseModel):
    type: str
    priority: str
    reason: str  # the error's kind, never its text (it may carry user data)


class InjectionResult(BaseModel):
    messages: list[Message]
    system: list[dict[str, Any]] | None = None  # the `system` placement's blocks, or the caller's own, echoed
    injected_contexts: list[str]
    dropped_contexts: list[str]
    # Blocks whose source failed: their content is missing from this context (a retry may bring it).
    failed_contexts: list[FailedBlock] = Field(default_factory=list)
    total_context_tokens: int
    compacted: bool
    compaction_steps: list[str]
    blocks: list[InjectedBlock]
    token_usage: TokenUsage


# ---- block sources ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class FetchContext:
    """What a block source may read: the request, who asks, and facts derived once."""

    request: InjectionRequest
    user: UserRef
    locale: Locale
    now: float  # epoch seconds
    turn_number: int  # 1 = the conversation's first user message
    # Version counters read during this request: sources that key on the same scope's version (user
    # memory, hot memory) share one read instead of each doing a consistent GetItem.
    _versions: dict[UserRef, int] = field(default_factory=dict, compare=False, repr=False)
    _versions_lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def user_version(self, scope: UserRef, read: Callable[[UserRef], int]) -> int:
        with self._versions_lock:
            if scope not in self._versions:
                self._versions[scope] = read(scope)
            return self._versions[scope]

    def message_hash(self) -> str:
        return hashlib.sha256(self.request.current_user_message.strip().encode()).hexdigest()[:16]


class BlockCache:
    """The context cache as one source sees it: `get_or_build` serves a fresh entry or builds and
    stores one. A source may cache its block in parts (user_memory: the top memories by version,
    the relevant ones by version and message); lookups and hits are counted for the hit-rate metric."""

    def __init__(self, cache: ContextCache, user: UserRef, now: float) -> None:
        self._cache = cache
        self._user = user
        self._now = now
        self.lookups = 0
        self.hits = 0

    def get_or_build(self, key: str, ttl_seconds: float, build: Callable[[], str]) -> str:
        self.lookups += 1
        entry = self._cache.get(self._user, key, now=self._now)
        if entry is not None:
            self.hits += 1
            return entry.content
        content = build()
        self._cache.put(self._user, key, CachedContext(content=content, created_at=self._now,
                                                       expires_at=self._now + ttl_seconds))
        return content

    @property
    def all_hits(self) -> bool:
        return self.lookups > 0 and self.hits == self.lookups


class BlockSource(Protocol):
    """One block type. Register a new one in `context_sources.default_sources`."""

    type: str
    priority: Priority
    ttl_seconds: float  # 0 = real time; CONVERSATION_LIFETIME; else seconds (use `cache` to honour it)
    does_io: bool  # fetched on the thread pool, concurrently with the other I/O sources

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        """The block's body, without its tags; "" = nothing to inject."""
        ...


@dataclass
class _Fetched:
    blocks: list[ContextBlock] = field(default_factory=list)
    failed: list[FailedBlock] = field(default_factory=list)
    hits: int = 0
    lookups: int = 0


@dataclass(frozen=True)
class InjectLimits:
    reserved_output_tokens: int = 4096
    reserved_system_tokens: int = 10_000
    compaction_threshold: float = 0.8
    keep_recent_turns: int = 10


class InjectService:
    def __init__(
        self,
        *,
        sources: list[BlockSource],
        cache: ContextCache,
        executor: Executor,
        counter: Callable[[], TokenCounter | None] = lambda: None,
        summarizer: Callable[[], Callable[[list[Message]], str]],
        limits: InjectLimits = InjectLimits(),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._sources = sources
        self._cache = cache
        self._executor = executor
        self._counter = counter
        self._summarizer = summarizer
        self._limits = limits
        self._clock = clock

    def inject(self, user: UserRef, request: InjectionRequest) -> InjectionResult:
        messages = _with_current_message([m.model_dump() for m in request.messages], request.current_user_message)
        problems = validate_messages(messages)
        if problems:
            raise InvalidInput("messages is not a valid Messages array",
                               details=[{"field": "messages", "message": p, "type": "structure"} for p in problems])
        limits = self._limits
        available = request.max_context_tokens - limits.reserved_output_tokens - limits.reserved_system_tokens
        if available <= 0:
            raise InvalidInput("max_context_tokens leaves no room for context", details=[{
                "field": "max_context_tokens", "type": "range",
                "message": f"must exceed the reserved output + system tokens "
                           f"({limits.reserved_output_tokens + limits.reserved_system_tokens})"}])

        now = self._clock()
        locale = detect_locale(request.current_user_message, *_user_texts(messages[-3:]))
        ctx = FetchContext(request=request, user=user, locale=locale, now=now,
                           turn_number=max(1, len(turn_starts(messages))))
        fetched = self._fetch_all(ctx)
        _record_cache_metrics(fetched)

        # The history's size: Anthropic's count_tokens when configured, the local estimate otherwise. The
        # estimate, scaled by their ratio, then prices the compaction steps without more API calls.
        estimated = estimate_message_tokens(messages)
        counted, counted_by = self._count(messages)
        scale = counted / estimated if estimated else 1.0

        def count(ms: list[Message]) -> int:
            return round(estimate_message_tokens(ms) * scale)

        blocks = sorted((b for b in fetched.blocks if not b.is_empty), key=lambda b: b.priority)
        frame = frame_overhead_tokens(locale)
        injected, dropped = _fit(blocks, available - counted - frame)
        context_tokens = _context_tokens(injected, frame)

        compacted, steps, final = False, [], messages
        if counted + context_tokens > available * limits.compaction_threshold:
            result = auto_compact(
                messages, budget_tokens=available - context_tokens, count_tokens=count,
                summarize=self._summarizer(), threshold=limits.compaction_threshold,
                keep_turns=limits.keep_recent_turns,
            )
            final, steps = result.messages, list(result.steps)
            compacted = bool(steps)  # over the threshold, yet nothing to compact: not compacted
        # The seed's last resort (its steps 4-5): still over the budget, drop P2 and then P1 blocks.
        final_tokens = count(final) if compacted else counted
        while final_tokens + context_tokens > available and any(b.priority > Priority.CRITICAL for b in injected):
            worst = max(range(len(injected)), key=lambda i: (injected[i].priority, i))
            dropped.append(injected.pop(worst))
            context_tokens = _context_tokens(injected, frame)

        placed, system = self._place(request, final, injected, locale)
        if compacted:
            logger.info("context compacted", steps=steps, tokens_before=counted, tokens_after=final_tokens)
        return InjectionResult(
            messages=placed,
            system=system,
            injected_contexts=[b.type for b in injected],
            dropped_contexts=[b.type for b in dropped],
            failed_contexts=fetched.failed,
            total_context_tokens=context_tokens,
            compacted=compacted,
            compaction_steps=steps,
            blocks=[InjectedBlock(type=b.type, priority=f"P{int(b.priority)}", tokens=b.estimated_tokens,
                                  cache_ttl_seconds=b.cache_ttl_seconds, cached=b.cached) for b in injected],
            token_usage=TokenUsage(available=available, messages_before=counted, messages_after=final_tokens,
                                   context=context_tokens, counted_by=counted_by),
        )

    # ---- internals ---------------------------------------------------------------------------

    def _fetch_all(self, ctx: FetchContext) -> _Fetched:
        """I/O sources run concurrently on the pool; local ones are computed here meanwhile."""
        fetched = _Fetched()
        futures = [self._executor.submit(self._fetch_one, s, ctx) for s in self._sources if s.does_io]
        results = [self._fetch_one(s, ctx) for s in self._sources if not s.does_io]
        results += [f.result() for f in futures]
        order = {s.type: i for i, s in enumerate(self._sources)}
        for block, cache, failure in sorted(results, key=lambda r: order[r[0].type]):
            fetched.blocks.append(block)
            if failure is not None:
                fetched.failed.append(failure)
            fetched.lookups += cache.lookups
            fetched.hits += cache.hits
        return fetched

    def _fetch_one(
        self, source: BlockSource, ctx: FetchContext
    ) -> tuple[ContextBlock, BlockCache, FailedBlock | None]:
        cache = BlockCache(self._cache, ctx.user, ctx.now)
        try:
            body = source.build(ctx, cache)
        except Exception as error:  # a failing source costs its block, never the request; the result says so
            logger.exception("context source failed", context_type=source.type)
            metrics.add_metric(name="ContextSourceErrors", unit=MetricUnit.Count, value=1)
            failure = FailedBlock(type=source.type, priority=f"P{int(source.priority)}", reason=type(error).__name__)
            return empty_block(source.type, source.priority, source.ttl_seconds, ctx.now), cache, failure
        block = tagged_block(source.type, source.priority, source.ttl_seconds, ctx.now, body)
        return (replace(block, cached=True) if cache.all_hits else block), cache, None

    def _count(self, messages: list[Message]) -> tuple[int, Literal["estimate", "anthropic"]]:
        counter = self._counter()
        if counter is not None:
            counted = counter.count(messages)
            if counted is not None:
                return counted, "anthropic"
        return estimate_message_tokens(messages), "estimate"

    def _place(
        self, request: InjectionRequest, messages: list[Message], blocks: list[ContextBlock], locale: Locale
    ) -> tuple[list[Message], list[dict[str, Any]] | None]:
        if request.placement == "system":
            return messages, _system_blocks(request.system, blocks, locale)
        # The pair placement leaves the caller's system prompt as it came (echoed back, so `system` in the
        # result is always what to send).
        system = _system_blocks(request.system, [], locale) if request.system is not None else None
        text = context_message(blocks, locale)
        if not text:
            return messages, system
        return [{"role": "user", "content": text}, {"role": "assistant", "content": FRAME[locale]["ack"]},
                *messages], system


def _fit(blocks: list[ContextBlock], budget: int) -> tuple[list[ContextBlock], list[ContextBlock]]:
    """The seed's fit over priority-sorted blocks: P0 always goes in (it may force compaction); every
    other block goes in if it fits in what is left, in priority order, so a small lower-priority block
    still goes in after a large higher-priority one did not fit."""
    injected: list[ContextBlock] = []
    dropped: list[ContextBlock] = []
    for block in blocks:
        if block.priority == Priority.CRITICAL or block.estimated_tokens <= budget:
            injected.append(block)
            budget -= block.estimated_tokens
        else:
            dropped.append(block)
    return injected, dropped


def _context_tokens(blocks: list[ContextBlock], frame: int) -> int:
    return sum(b.estimated_tokens for b in blocks) + (frame if blocks else 0)


def _system_blocks(
    caller_system: str | list[dict[str, Any]] | None, blocks: list[ContextBlock], locale: Locale
) -> list[dict[str, Any]]:
    """The caller's system prompt first, then the context most-stable-first: blocks that live longer
    (device, experiences, memories) before real-time ones, with one cache breakpoint after the stable part,
    so the cached prefix survives turns in which only the real-time blocks change."""
    system: list[dict[str, Any]] = (
        [{"type": "text", "text": caller_system}] if isinstance(caller_system, str)
        else [dict(b) for b in caller_system or []]
    )
    if not blocks:
        return system
    ordered = sorted(blocks, key=lambda b: (-b.stability, b.priority))
    stable = [b for b in ordered if b.cache_ttl_seconds != 0]
    live = [b for b in ordered if b.cache_ttl_seconds == 0]
    header = FRAME[locale]["system_header"]
    breakpoints_used = sum(1 for b in system if "cache_control" in b)
    if stable:
        part: dict[str, Any] = {"type": "text", "text": "\n\n".join([header, *(b.content for b in stable)])}
        if breakpoints_used < MAX_CACHE_BREAKPOINTS:
            part["cache_control"] = {"type": "ephemeral"}
        system.append(part)
    if live:
        texts = [b.content for b in live]
        system.append({"type": "text", "text": "\n\n".join(texts if stable else [header, *texts])})
    return system


def _with_current_message(messages: list[Message], current: str) -> list[Message]:
    """The current user message ends the array: already there (the last human turn), appended as a new
    user turn, or, when the history ends with a user turn of tool results, added to it as a text block."""
    current = current.strip()
    if not current:
        return messages
    starts = turn_starts(messages)
    texts = _user_texts(messages[starts[-1]:] if starts else [])
    if any(current == t.strip() for t in texts):
        return messages
    if messages and messages[-1]["role"] == "user":
        last = messages[-1]
        content = last["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        return [*messages[:-1], {**last, "content": [*blocks, {"type": "text", "text": current}]}]
    return [*messages, {"role": "user", "content": current}]


def _user_texts(messages: list[Message]) -> list[str]:
    texts: list[str] = []
    for message in messages:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts


def _record_cache_metrics(fetched: _Fetched) -> None:
    """ContextCacheHits / ContextCacheLookups: the hit rate is their ratio (CloudWatch metric math)."""
    if fetched.lookups:
        metrics.add_metric(name="ContextCacheLookups", unit=MetricUnit.Count, value=fetched.lookups)
        metrics.add_metric(name="ContextCacheHits", unit=MetricUnit.Count, value=fetched.hits)

