"""The memory layers' blocks: hot memory (always injected) and the intent's context (weekly reports and
the conversation log for a question about the past, SOPs or protocol knowledge from their retrievers)."""

from __future__ import annotations

import hashlib
from functools import partial

from agent_memory.domain.context import ContextType, Priority, one_line
from agent_memory.domain.injection import KnowledgeItem
from agent_memory.domain.layers import Intent, scope_label, scope_ref
from agent_memory.ports import MemoryStore, Retriever
from agent_memory.services.blocks.base import BlockCache, FetchContext
from agent_memory.services.memory_layers import MemoryLayersService


class HotMemorySource:
    """Hot memory, always injected (P0): the user's, and the project's when the request names one.
    Cached by each scope's version counter (every hot-memory write bumps it) for 5 minutes."""

    type = ContextType.HOT_MEMORY
    priority = Priority.CRITICAL
    ttl_seconds = 300.0
    does_io = True

    def __init__(self, *, layers: MemoryLayersService, store: MemoryStore) -> None:
        self._layers = layers
        self._store = store

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        zh = ctx.locale == "zh"
        scopes = [ctx.user]
        if ctx.request.project_id:
            scopes.append(scope_ref(ctx.user.tenant_id, "projects", ctx.request.project_id))
        texts = []
        for scope in scopes:
            version = self._store.versions(scope).tag
            text = cache.get_or_build(f"{self.type}#{scope.user_id}#v{version}#{ctx.locale}", self.ttl_seconds,
                                      partial(self._layers.hot_memory_text, scope, zh=zh))
            if text and len(scopes) > 1:  # say whose entries these are
                label = scope_label(scope)
                title = (("【用户】" if label["type"] == "user" else f"【项目 {one_line(label['id'], 80)}】") if zh
                         else ("[User]" if label["type"] == "user" else f"[Project {one_line(label['id'], 80)}]"))
                text = f"{title}\n{text}"
            texts.append(text)
        return "\n\n".join(t for t in texts if t)


ITEM_CHARS = 1000  # the most of one retrieved item the block shows
# Retrieval by intent type: a QC task reads the SOPs, a protocol question the protocol's knowledge base.
INTENT_RETRIEVALS: dict[str, tuple[str, str, str]] = {
    # intent type: (retriever, zh title, en title)
    "QC_TASK": ("sop", "## 相关SOP", "## Relevant SOPs"),
    "PROTOCOL_QA": ("protocol", "## 方案知识库", "## Protocol knowledge base"),
}


class IntentContextSource:
    """What the intent asks for besides hot memory (its own block, so neither read nor charged here):
    for a question-like intent, the matching weekly reports, and the conversation log when they are thin;
    for a QC task the SOPs, for a protocol question the protocol knowledge base, from their retrievers."""

    type = ContextType.INTENT_CONTEXT
    priority = Priority.IMPORTANT
    ttl_seconds = 30.0
    does_io = True

    def __init__(self, *, layers: MemoryLayersService, retrievers: dict[str, Retriever | None] | None = None,
                 limit: int = 3) -> None:
        self._layers = layers
        self._retrievers = retrievers or {}
        self._limit = limit

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        intent = ctx.request.intent
        if intent is None:
            return ""
        scope = (scope_ref(ctx.user.tenant_id, "projects", ctx.request.project_id) if ctx.request.project_id
                 else ctx.user)
        # The retrieval's query is part of the key: without the intent's own, it is the message.
        asked = self._query(ctx, intent) if intent.type.upper() in INTENT_RETRIEVALS else ""
        key = hashlib.sha256(f"{scope.user_id}|{intent.model_dump_json()}|{asked}".encode()).hexdigest()[:16]

        def history() -> str:
            result = self._layers.context_for_prompt(scope, intent, hot_memory=False)
            return "\n\n".join(p for p in [*(part.text for part in result.parts), self._retrieved(ctx, intent)] if p)

        return cache.get_or_build(f"{self.type}#{key}", self.ttl_seconds, history)

    @staticmethod
    def _query(ctx: FetchContext, intent: Intent) -> str:
        return intent.text or ctx.request.current_user_message

    def _retrieved(self, ctx: FetchContext, intent: Intent) -> str:
        name, title_zh, title_en = INTENT_RETRIEVALS.get(intent.type.upper(), ("", "", ""))
        retriever = self._retrievers.get(name)
        if retriever is None:
            return ""
        items = [KnowledgeItem.model_validate(i) for i in retriever.retrieve(ctx.user, self._query(ctx, intent),
                                                                              self._limit)]
        if not items:
            return ""
        lines = [ctx.pick(title_zh, title_en)]
        for item in items:
            source = f"[{one_line(item.source, 200)}] " if item.source else ""
            # An item's own lines (a checklist, steps) stay lines, indented under it.
            content = item.content if len(item.content) <= ITEM_CHARS else item.content[:ITEM_CHARS - 1] + "…"
            text = "\n  ".join(one_line(line, ITEM_CHARS) for line in content.splitlines() if line.strip())
            lines.append(f"- {source}{text}")
        return "\n".join(lines)
