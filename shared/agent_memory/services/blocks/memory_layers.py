"""The memory layers' blocks: hot memory (always injected) and the intent's context (weekly reports and
the conversation log for a question about the past, SOPs or protocol knowledge from their retrievers)."""

from __future__ import annotations

import hashlib
from functools import partial

from agent_memory.domain.inject.context import ContextType, Priority, one_line
from agent_memory.domain.tiers.memory_layers import scope_label, scope_ref
from agent_memory.ports import MemoryStore
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


class IntentContextSource:
    """What the intent asks for besides hot memory (its own block, so neither read nor charged here), as the
    intent-context route assembles it (MemoryLayersService.context_for_prompt): for a question-like intent
    the matching weekly reports and conversation log, for a QC task the SOPs, for a protocol question the
    protocol knowledge base. Without the intent's own query, the latest user message is what is searched."""

    type = ContextType.INTENT_CONTEXT
    priority = Priority.IMPORTANT
    ttl_seconds = 30.0
    does_io = True

    def __init__(self, *, layers: MemoryLayersService) -> None:
        self._layers = layers

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        intent = ctx.request.intent
        if intent is None:
            return ""
        scope = (scope_ref(ctx.user.tenant_id, "projects", ctx.request.project_id) if ctx.request.project_id
                 else ctx.user)
        message = "" if intent.text else ctx.request.current_user_message
        # The message searched is part of the key when the intent has no query of its own.
        key = hashlib.sha256(f"{scope.user_id}|{intent.model_dump_json()}|{message}".encode()).hexdigest()[:16]

        def context() -> str:
            return self._layers.context_for_prompt(scope, intent, hot_memory=False, message=message,
                                                   requester=ctx.user).text

        return cache.get_or_build(f"{self.type}#{key}", self.ttl_seconds, context)
