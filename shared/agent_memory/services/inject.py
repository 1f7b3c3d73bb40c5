"""inject: assemble prioritized context blocks into an Anthropic Messages request.

Fetch every block concurrently (through the context cache), drop empty ones, sort by priority, fit them
into the token budget (P2 dropped first, then P1; P0 never), auto-compact the history when it uses more
than the compaction threshold of the budget, then place the blocks (a leading user/assistant pair, or
`system` content blocks with `cache_control`). The output is always a valid Messages array that ends
with the current user message, untouched.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from concurrent.futures import Executor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Literal

from agent_memory.domain.inject.compaction import auto_compact
from agent_memory.domain.inject.context import (
    ContextBlock,
    detect_locale,
    empty_block,
    frame_overhead_tokens,
    tagged_block,
)
from agent_memory.domain.inject.context_budget import ReserveRule, context_tokens, fit, shed
from agent_memory.domain.inject.context_placement import place
from agent_memory.domain.inject.conversation import Message, turn_starts, validate_messages
from agent_memory.domain.inject.current_message import user_texts, with_current_message
from agent_memory.domain.inject.injection import ContextRequest, FailedSource, Injection, TokenUsage
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.text.tokens import estimate_message_tokens
from agent_memory.errors import InvalidInput
from agent_memory.observability import MetricUnit, error_fields, logger, metrics
from agent_memory.ports import ContextCache, TokenCounter
from agent_memory.services.blocks.base import BlockCache, BlockSource, FetchContext


@dataclass
class _Fetched:
    blocks: list[ContextBlock] = field(default_factory=list)
    failed: list[FailedSource] = field(default_factory=list)
    hits: int = 0
    lookups: int = 0


@dataclass(frozen=True)
class InjectLimits:
    reserve: ReserveRule = field(default_factory=ReserveRule)
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
        request_scope: Callable[[], AbstractContextManager[object]] = nullcontext,
        pack_of: Callable[[str], str] = lambda _: "",
    ) -> None:
        """`request_scope`: entered around the fetch, its context carried to the pool's threads (the
        bootstrap's pins each user's version counters for the request: one read, not one per source);
        `pack_of`: a tenant's domain pack's name, which the context cache's keys carry."""
        self._pack_of = pack_of
        self._request_scope = request_scope
        self._sources = sources
        # Sources with work to start before anything else (user_memory: its query's embedding).
        self._preparers = [(s, prepare) for s in sources if (prepare := getattr(s, "prepare", None)) is not None]
        # The pool's first free threads go to the sources with work under way (the longest builds), then by
        # priority: with more I/O sources than threads, the last ones queue.
        self._io_order = sorted((s for s in sources if s.does_io),
                                key=lambda s: (getattr(s, "prepare", None) is None, s.priority))
        self._cache = cache
        self._executor = executor
        self._counter = counter
        self._summarizer = summarizer
        self._limits = limits
        self._clock = clock

    def inject(self, user: ScopeRef, request: ContextRequest) -> Injection:
        self._prepare(request)  # first: what it starts (the query's embedding) overlaps everything below
        messages = with_current_message(request.messages, request.current_user_message)
        problems = validate_messages(messages)
        if problems:
            raise InvalidInput("messages is not a valid Messages array",
                               details=[{"field": "messages", "message": p, "type": "structure"} for p in problems])
        limits = self._limits
        reserves = limits.reserve.reserves(request.max_context_tokens, output=request.reserved_output_tokens,
                                           system=request.reserved_system_tokens)
        available = reserves.available
        if available <= 0:  # only a caller's own reserves can take the whole window
            raise InvalidInput("max_context_tokens leaves no room for context", details=[{
                "field": "max_context_tokens", "type": "range",
                "message": f"must exceed reserved_output_tokens + reserved_system_tokens "
                           f"({reserves.output} + {reserves.system})"}])

        now = self._clock()
        locale = detect_locale(request.current_user_message, *user_texts(messages[-3:]))
        ctx = FetchContext(request=request, user=user, locale=locale, now=now,
                           turn_number=max(1, len(turn_starts(messages))), messages=messages)
        with self._request_scope():
            fetched = self._fetch_all(ctx)
        _record_cache_metrics(fetched)

        # The history's size: Anthropic's count_tokens when configured, the local estimate otherwise. The
        # estimate, scaled by their ratio, then prices the compaction steps without more API calls.
        estimated = estimate_message_tokens(messages)
        counted, counted_by = self._count(messages, estimated)
        scale = counted / estimated if estimated else 1.0

        def count(ms: list[Message]) -> int:
            return round(estimate_message_tokens(ms) * scale)

        blocks = sorted((b for b in fetched.blocks if not b.is_empty), key=lambda b: b.priority)
        frame = frame_overhead_tokens(locale)
        injected, dropped = fit(blocks, available - counted - frame)
        context = context_tokens(injected, frame)

        compacted, steps, final = False, [], messages
        if counted + context > available * limits.compaction_threshold:
            result = auto_compact(
                messages, budget_tokens=available - context, count_tokens=count,
                summarize=self._summarizer(), threshold=limits.compaction_threshold,
                keep_turns=limits.keep_recent_turns,
            )
            final, steps = result.messages, list(result.steps)
            compacted = bool(steps)  # over the threshold, yet nothing to compact: not compacted
        # The last resort: still over the budget after compaction, drop P2 and then P1 blocks.
        final_tokens = count(final) if compacted else counted
        injected, shed_blocks = shed(injected, available - final_tokens, frame)
        dropped += shed_blocks
        context = context_tokens(injected, frame)

        placed, system = place(request.placement, request.system, final, injected, locale)
        if compacted:
            logger.info("context compacted", steps=steps, tokens_before=counted, tokens_after=final_tokens)
        within_budget = final_tokens + context <= available
        if not within_budget:
            logger.warning("context over budget after compaction", available=available, messages=final_tokens,
                           context=context)
        return Injection(
            messages=placed, system=system, injected=injected, dropped=dropped, failed=fetched.failed,
            context_tokens=context, compacted=compacted, compaction_steps=steps,
            token_usage=TokenUsage(available=available, reserved_output=reserves.output,
                                   reserved_system=reserves.system, messages_before=counted,
                                   messages_after=final_tokens, context=context, counted_by=counted_by,
                                   within_budget=within_budget),
        )

    def flush_cache_writes(self, timeout: float | None = None) -> None:
        """Wait for the context cache's shared writes under way (they run off the request path)."""
        flush = getattr(self._cache, "flush", None)
        if flush is not None:
            flush(timeout)

    # ---- internals ---------------------------------------------------------------------------

    def _prepare(self, request: ContextRequest) -> None:
        for source, prepare in self._preparers:
            try:
                prepare(request)
            except Exception as error:  # only ever saves time: the source's build does the work anyway
                logger.warning("context source prepare failed",
                               extra={"context_type": source.type, **error_fields(error)})

    def _fetch_all(self, ctx: FetchContext) -> _Fetched:
        """I/O sources run concurrently on the pool; local ones are computed here meanwhile."""
        fetched = _Fetched()
        futures = [self._executor.submit(contextvars.copy_context().run, self._fetch_one, s, ctx)
                   for s in self._io_order]
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
    ) -> tuple[ContextBlock, BlockCache, FailedSource | None]:
        cache = BlockCache(self._cache, ctx.user, ctx.now, self._pack_of(ctx.user.tenant_id))
        try:
            body = source.build(ctx, cache)
        except Exception as error:  # a failing source costs its block, never the request; the result says so
            logger.error("context source failed", extra={"context_type": source.type, **error_fields(error)})
            metrics.add_metric(name="ContextSourceErrors", unit=MetricUnit.Count, value=1)
            failure = FailedSource(type=source.type, priority=source.priority, reason=type(error).__name__)
            return empty_block(source.type, source.priority, source.ttl_seconds, ctx.now), cache, failure
        block = tagged_block(source.type, source.priority, source.ttl_seconds, ctx.now, body)
        return (replace(block, cached=True) if cache.all_hits else block), cache, None

    def _count(self, messages: list[Message], estimated: int) -> tuple[int, Literal["estimate", "anthropic"]]:
        counter = self._counter()
        if counter is not None:
            counted = counter.count(messages)
            if counted is not None:
                return counted, "anthropic"
        return estimated, "estimate"


def _record_cache_metrics(fetched: _Fetched) -> None:
    """ContextCacheHits / ContextCacheLookups: the hit rate is their ratio (CloudWatch metric math)."""
    if fetched.lookups:
        metrics.add_metric(name="ContextCacheLookups", unit=MetricUnit.Count, value=fetched.lookups)
        metrics.add_metric(name="ContextCacheHits", unit=MetricUnit.Count, value=fetched.hits)
