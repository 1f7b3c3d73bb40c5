"""L2 hot memory, the L3 history book's reads, and intent-driven context for a prompt."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from agent_memory.domain.inject.context import neutralize, one_line
from agent_memory.domain.inject.injection import KnowledgeItem
from agent_memory.domain.models import ScopeRef, is_cjk_text, utcnow
from agent_memory.domain.requests import TOO_DEEP, nests_too_deep
from agent_memory.domain.search.hybrid import rank_stored
from agent_memory.domain.text.tokens import estimate_tokens
from agent_memory.domain.tiers.memory_layers import (
    INTENT_RETRIEVALS,
    ContextPart,
    HotMemoryEntry,
    HotMemoryType,
    Intent,
    LogQuery,
    PromptContext,
    UnreadableHotEntry,
    WeeklyReport,
    format_hot_memory,
)
from agent_memory.ports import Embedder, LayerStore, Retriever
from agent_memory.services.conversation_log import ConversationLogService

# A question gets at most this many weekly reports and this many lines of the conversation log.
REPORTS_PER_QUESTION = 2
LOG_LINES_PER_QUESTION = 3
# What an intent type retrieves besides hot memory: a QC task the SOPs, a protocol question the protocol's
# knowledge base (its part's layer, zh title, en title).
RETRIEVED_ITEMS = 3
ITEM_CHARS = 1000  # the most of one retrieved item a part shows


class MemoryLayersService:
    def __init__(
        self,
        *,
        layers: LayerStore,
        log: ConversationLogService,
        embedder: Callable[[], Embedder | None],
        question_intents: frozenset[str],
        retrievers: Mapping[str, Retriever | None] | None = None,
        max_tokens: int = 2000,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """`retrievers`: by name (`sop`, `protocol`: INTENT_RETRIEVALS), the sources an intent type retrieves
        from; a missing one leaves its part out."""
        self._retrievers = dict(retrievers or {})
        self._layers = layers
        self._log = log
        self._embedder = embedder
        self._questions = question_intents
        self._max_tokens = max_tokens
        self._clock = clock

    # ---- L2 ------------------------------------------------------------------------------------

    def put_hot(self, scope: ScopeRef, type_: HotMemoryType, key: str, value: Any, priority: int) -> HotMemoryEntry:
        now = self._clock()
        entry = HotMemoryEntry(type=type_, key=key, value=value, priority=priority, source="api", created_at=now,
                               updated_at=now)
        stored: HotMemoryEntry = self._layers.put_hot(scope, entry)
        return stored

    def hot_memory(self, scope: ScopeRef) -> tuple[list[HotMemoryEntry], list[UnreadableHotEntry]]:
        """The scope's entries, those nested deeper than a value may be set apart (written before the limit)."""
        readable: list[HotMemoryEntry] = []
        unreadable: list[UnreadableHotEntry] = []
        for entry in self._layers.hot_memory(scope):
            if not nests_too_deep(entry.value):
                readable.append(entry)
            else:
                unreadable.append(UnreadableHotEntry(
                    type=entry.type, key=entry.key,
                    reason=f"the value {TOO_DEEP}; delete the entry or set it again"))
        return readable, unreadable

    def delete_hot(self, scope: ScopeRef, type_: HotMemoryType, key: str) -> None:
        self._layers.delete_hot(scope, type_, key)

    def hot_memory_text(self, scope: ScopeRef, *, zh: bool) -> str:
        entries, _ = self.hot_memory(scope)
        return format_hot_memory(entries, zh=zh, project=scope.is_project,
                                 clean=lambda t: one_line(t, 500))

    # ---- L3 ------------------------------------------------------------------------------------

    def reports(self, scope: ScopeRef) -> list[WeeklyReport]:
        reports: list[WeeklyReport] = self._layers.reports(scope)
        return reports

    def search_reports(self, scope: ScopeRef, query: str, limit: int) -> list[tuple[WeeklyReport, float]]:
        """The reports that match `query`, best first, each with its similarity."""
        reports: list[WeeklyReport] = self._layers.reports(scope)
        scored = rank_stored(query, [_report_text(r) for r in reports],
                             [(r.embedding, r.embedding_model) for r in reports], self._embedder)
        ranked = sorted(zip(reports, scored, strict=True), key=lambda p: (p[1], p[0].week_start), reverse=True)
        return [(r, s) for r, s in ranked[:limit] if s > 0]

    # ---- intent-driven context -----------------------------------------------------------------

    def context_for_prompt(self, scope: ScopeRef, intent: Intent, max_tokens: int | None = None, *,
                           hot_memory: bool = True, message: str = "", requester: ScopeRef | None = None
                           ) -> PromptContext:
        """Context for a prompt by the intent's type: hot memory always; for a question about the past, the
        history book (up to two weekly reports) and the conversation log (up to three lines); for a QC task
        the SOPs, for a protocol question the protocol knowledge base, from their retrievers. All under a
        token budget, in that order, whole parts only. The intent's query is what is searched, else `message`
        (inject's latest user message); `requester` is whom the retrievers are asked for (default: `scope`).
        `hot_memory=False` leaves hot memory out, neither read nor charged to the budget (inject has it as
        its own block)."""
        budget = max_tokens or self._max_tokens
        query = intent.text or message.strip()
        kind = intent.type.upper()
        question = intent.type.lower() in self._questions and bool(query)
        zh = is_cjk_text(query) if query else True
        parts: list[ContextPart] = []
        skipped: list[str] = []

        hot = self.hot_memory_text(scope, zh=zh) if hot_memory else ""
        if hot:
            parts.append(ContextPart(layer="hot_memory", items=hot.count("\n- ") + 1, tokens=estimate_tokens(hot),
                                     text=hot))
        else:
            skipped.append("hot_memory")
        if question:
            found = self.search_reports(scope, query, REPORTS_PER_QUESTION)
            if found:
                title = "## 相关历史记录" if zh else "## Related history"
                text = "\n---\n".join([title, *(neutralize(r.summary) for r, _ in found)])
                parts.append(ContextPart(layer="reports", items=len(found), tokens=estimate_tokens(text), text=text))
            else:
                skipped.append("reports")
            lines = self._log_lines(scope, query, LOG_LINES_PER_QUESTION)
            if lines:
                title = "## 相关对话记录" if zh else "## Related conversation"
                text = "\n".join([title, *lines])
                parts.append(ContextPart(layer="log", items=len(lines), tokens=estimate_tokens(text), text=text))
            else:
                skipped.append("log")
        else:
            skipped += ["reports", "log"]
        if kind in INTENT_RETRIEVALS:
            retrieved = self._retrieved(requester or scope, kind, query, zh=zh)
            if retrieved is not None:
                parts.append(retrieved)
            else:
                skipped.append(INTENT_RETRIEVALS[kind][0])

        # In priority order, whole parts only; once one does not fit, neither do the ones after it.
        kept: list[ContextPart] = []
        used = 0
        for part in parts:
            if used + part.tokens <= budget and len(kept) == parts.index(part):
                kept.append(part)
                used += part.tokens
            else:
                skipped.append(part.layer)
        return PromptContext(parts=kept, skipped=skipped, max_tokens=budget)

    def _retrieved(self, requester: ScopeRef, kind: str, query: str, *, zh: bool) -> ContextPart | None:
        """The intent type's retrieval as a part: each item a line under the title (its own lines, a
        checklist or steps, indented under it); None when there is no retriever, no query or nothing found."""
        layer, title_zh, title_en = INTENT_RETRIEVALS[kind]
        retriever = self._retrievers.get(layer)
        if retriever is None or not query:
            return None
        items = [KnowledgeItem.model_validate(i) for i in retriever.retrieve(requester, query, RETRIEVED_ITEMS)]
        if not items:
            return None
        lines = [title_zh if zh else title_en]
        for item in items:
            source = f"[{one_line(item.source, 200)}] " if item.source else ""
            content = item.content if len(item.content) <= ITEM_CHARS else item.content[:ITEM_CHARS - 1] + "…"
            text = "\n  ".join(one_line(line, ITEM_CHARS) for line in content.splitlines() if line.strip())
            lines.append(f"- {source}{neutralize(text)}")
        text = "\n".join(lines)
        return ContextPart(layer=layer, items=len(items), tokens=estimate_tokens(text), text=text)

    # ---- internals ------------------------------------------------------------------------------

    def _log_lines(self, scope: ScopeRef, query: str, limit: int) -> list[str]:
        found = self._log.search(scope, LogQuery(query=query))
        return [f"{hit.role}: {one_line(hit.content, 500)}" for hit in found[:limit]]


def _report_text(report: WeeklyReport) -> str:
    return "\n".join([report.summary, *report.key_events])
