"""The user_memory block: what the stored memories say about this user."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from agent_memory.domain.inject.context import ContextType, Priority, one_line
from agent_memory.domain.inject.injection import ContextRequest
from agent_memory.domain.inject.memory_selection import (
    DEFAULT_IMPORTANCE_MARGIN,
    DEFAULT_MAX_SHARE,
    DEFAULT_MAX_TOKENS,
    TRADE_OFF,
    SelectableMemory,
    diversify,
    importance_slots,
    memory_budget,
    near_duplicate,
    search_depth,
    selectable,
)
from agent_memory.domain.lifecycle.duplicates import DuplicateRule
from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.domain.search.search import DEFAULT_MIN_RELEVANCE, MAX_QUERY_CHARS, SearchMode, SearchQuery
from agent_memory.domain.text.tokens import estimate_joined_tokens, estimate_tokens
from agent_memory.ports import MemoryStore
from agent_memory.services.blocks.base import BlockCache, FetchContext
from agent_memory.services.search import SearchService

LINE_FRAME = 16  # a line's tokens besides the memory's text: "- [FACT] ... (importance: 70)"


class UserMemorySource:
    """The memories of the fields that matter to any request (the pack's always-relevant ones: allergies,
    health, diet), the memories importance singles out, then the ones relevant to the current message up to a
    token budget, without near-duplicates (rules: `domain/inject/memory_selection.py`). Cached in two parts keyed by
    the user's version counter, so a save invalidates them with no call."""

    type = ContextType.USER_MEMORY
    priority = Priority.CRITICAL
    ttl_seconds = 60.0
    does_io = True

    def __init__(
        self,
        *,
        store: MemoryStore,
        search: SearchService,
        current_memories: Callable[[ScopeRef], list[Memory]] | None = None,
        top_n: int = 5,
        relevant_n: int = 3,
        min_relevance: float = DEFAULT_MIN_RELEVANCE,
        search_mode: SearchMode | None = None,
        importance_margin: int = DEFAULT_IMPORTANCE_MARGIN,
        max_share: float = DEFAULT_MAX_SHARE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        duplicates: DuplicateRule | None = None,
        always_relevant: Callable[[str], frozenset[str]] | None = None,
    ) -> None:
        """`top_n` top slots (importance's where it separates memories); at least `top_n + relevant_n`
        memories when there are that many; past them, lines up to `max_share` of the tokens the user's
        memories hold, at most `max_tokens`; never two near-duplicates (by `duplicates`, None: the default
        rule). `always_relevant`: a tenant's always-relevant fields, whose memories come first, most important
        first, within the budget."""
        self._store = store
        self._always = always_relevant or (lambda tenant: frozenset())
        self._search = search
        self._current = current_memories or store.all_current
        self._top_n = top_n
        self._relevant_n = relevant_n
        self._min_relevance = min_relevance
        self._search_mode = search_mode
        self._margin = importance_margin
        self._share = max_share
        self._max_tokens = max_tokens
        self._duplicates = duplicates or DuplicateRule()
        # Cache keys name what a part's selection depends on besides the version, message and locale (and the
        # form of the relevant part's value).
        self._top_key = _digest(top_n, importance_margin, self._duplicates, max_share, max_tokens, "always")
        self._relevant_key = _digest(top_n, relevant_n, importance_margin, max_share, max_tokens, min_relevance,
                                     search_mode, TRADE_OFF, self._duplicates, "lines+covered", "score-order")

    def prepare(self, request: ContextRequest) -> None:
        """Start the relevant memories' query embedding (~20 ms of CPU), so that it runs while the request
        is checked and the version and the cache are read, instead of after them."""
        query = request.current_user_message.strip()
        if query and self._relevant_n:
            self._search.prefetch(self._relevant_request(query, depth=self._top_n + self._relevant_n))

    def _relevant_request(self, query: str, depth: int) -> SearchQuery:
        return SearchQuery(query=query[:MAX_QUERY_CHARS].strip(), limit=min(max(depth, 1), 20),
                           min_relevance_score=self._min_relevance, search_mode=self._search_mode)

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        """Two cached parts: the top slots change only with the version counter; the relevant memories
        also with the message. An agent loop's repeated calls within one user turn hit both."""
        version = self._store.versions(ctx.user).tag
        top = json.loads(cache.get_or_build(f"{self.type}#top#v{version}#{ctx.locale}#{self._top_key}",
                                            self.ttl_seconds, lambda: json.dumps(self._top(ctx)),
                                            valid_until=_first_expiry))
        query = ctx.request.current_user_message.strip()
        relevant = json.loads(cache.get_or_build(
            f"{self.type}#rel#v{version}#{ctx.locale}#{ctx.message_hash()}#{self._relevant_key}", self.ttl_seconds,
            lambda: json.dumps({**self._relevant(ctx, query, top), "first_expiry": top.get("first_expiry")}),
            valid_until=_first_expiry)) if query and self._relevant_n else {}
        lines = list(dict.fromkeys([*(line for _, line in top.get("always", [])), *(line for _, line in top["earned"]),
                                    *relevant.get("lines", [])]))
        covered = set(relevant.get("covered", []))
        for key, line in top["fallback"]:  # top slots relevance left empty keep the importance order
            if len(lines) >= self._top_n:
                break
            if line not in lines and key not in covered:
                lines.append(line)
        if not lines:
            return ""
        intro = ctx.pick("以下是该用户的历史记录摘要（来自之前的对话）：",
                         "What we know about this user from earlier conversations:")
        return "\n".join([intro, *lines])

    def _line(self, memory: Memory, ctx: FetchContext) -> str:
        label = ctx.pick("重要度", "importance")
        return f"- [{memory.memory_type.value}] {one_line(memory.content)} ({label}: {memory.importance})"

    def _top(self, ctx: FetchContext) -> dict[str, Any]:
        """The top slots as [memory key, line] pairs (of the importance order less near-duplicates of a memory
        before them), and the tokens the user's memories hold."""
        memories = self._current(ctx.user)
        split = importance_slots(memories, self._top_n, self._margin, self._duplicates)
        stored_tokens = estimate_joined_tokens([m.content for m in memories])
        budget = memory_budget(stored_tokens, self._share, self._max_tokens)
        return {"always": self._always_lines(ctx, memories, budget),
                "earned": [[m.memory_key, self._line(m, ctx)] for m in split.earned],
                "fallback": [[m.memory_key, self._line(m, ctx)] for m in split.fallback],
                # As one text, a line break between two (each text's counts kept: a new version counts its new
                # memories only).
                "stored_tokens": stored_tokens,
                # The parts are stale when the first of the user's memories expires (epoch seconds; less one: an
                # expiry is stamped rounded up to the second).
                "first_expiry": min((m.expires_at.timestamp() - 1 for m in memories if m.expires_at), default=None)}

    def _always_lines(self, ctx: FetchContext, memories: list[Memory], budget: int) -> list[list[str]]:
        """[memory key, line] of the memories of the tenant's always-relevant fields (a list field's slot
        `allergy.peanuts` is of `allergy`), most important first: as many as the block's least number of lines, or
        more while the budget holds them."""
        fields = self._always(ctx.user.tenant_id)
        chosen = sorted((m for m in memories if m.field and m.field.split(".", 1)[0] in fields),
                        key=lambda m: (-m.importance, m.created_at))
        lines: list[list[str]] = []
        used = 0
        for memory in chosen:
            line = self._line(memory, ctx)
            used += estimate_tokens(line)
            if used > budget and len(lines) >= self._top_n + self._relevant_n:
                break
            lines.append([memory.memory_key, line])
        return lines

    def _relevant(self, ctx: FetchContext, query: str, top: dict[str, Any]) -> dict[str, list[str]]:
        """The relevant memories' lines, and the top slots' fallbacks they near-duplicate (`covered`: not shown
        beside them)."""
        memories = {m.memory_key: m for m in self._current(ctx.user)}
        if not memories:
            return {"lines": [], "covered": []}
        # A memory both always relevant and earning a top slot is one line, counted once.
        first_lines = dict([*top.get("always", []), *top["earned"]])
        shown = [selectable(memories[key], 1.0, estimate_tokens(line))
                 for key, line in first_lines.items() if key in memories]
        budget = memory_budget(top["stored_tokens"], self._share, self._max_tokens)
        min_count = self._top_n + self._relevant_n
        depth = search_depth(budget - sum(c.tokens for c in shown), top["stored_tokens"] / len(memories) + LINE_FRAME,
                             min_count - len(shown))
        # Score order: the picks below diversify it under the block's budget and duplicate rule.
        found = self._search.search(ctx.user, self._relevant_request(query, depth), max_results=depth,
                                    diversified=False)
        lines: dict[str, str] = {}
        ranked: list[SelectableMemory] = []
        for hit in found.hits:
            memory = memories.get(hit.memory.memory_key)
            if memory is not None:
                lines[memory.memory_key] = self._line(memory, ctx)
                ranked.append(selectable(memory, hit.relevance_score, estimate_tokens(lines[memory.memory_key])))
        picks = diversify(shown, ranked, budget=budget, min_count=min_count, duplicates=self._duplicates)
        fallback = [selectable(memories[key], 0.0, 0) for key, _ in top["fallback"] if key in memories]
        covered = [c.key for c in fallback if any(near_duplicate(c, pick, self._duplicates) for pick in picks)]
        return {"lines": [lines[c.key] for c in picks], "covered": covered}


def _first_expiry(part: str) -> float | None:
    value = json.loads(part).get("first_expiry")
    return float(value) if value is not None else None


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:8]
