"""The relevant_knowledge and similar_experiences blocks: items the caller supplies, or else a
retriever's answer, each only when its condition holds for the current message."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from agent_memory.domain.inject.context import ContextType, Priority, neutralize, one_line
from agent_memory.domain.inject.injection import ExperienceItem, KnowledgeItem
from agent_memory.domain.packs import default_pack
from agent_memory.domain.requests import RequestModel
from agent_memory.domain.tiers.memory_layers import retrieval_of
from agent_memory.ports import Retriever
from agent_memory.services.blocks.base import BlockCache, FetchContext

# The immigration pack's: only policy-like questions are worth a knowledge retrieval call (a pack has its own).
DEFAULT_KNOWLEDGE_TRIGGERS = default_pack().knowledge_triggers
# The words that make a message worth a retrieval: one list for every tenant, or a tenant's (its pack's).
Triggers = tuple[str, ...] | Callable[[str], tuple[str, ...]]
# Stages where experiences help: information collection, assessment and recommendation, objections.
EXPERIENCE_STAGES = ("info_collection", "assessment", "recommendation", "objection_handling")


class _RetrievedSource:
    """When its condition holds (`_wanted`): a block of caller-supplied items when the request has
    them (the caller's to cache), else of a retriever's answer, cached by message for the block's TTL;
    otherwise, or with no source, empty."""

    type: str
    ttl_seconds: float
    _item: builtins.type[RequestModel]  # the retriever's items, validated like caller-supplied ones

    def __init__(self, *, retriever: Retriever | None, limit: int = 3) -> None:
        self._retriever = retriever
        self._limit = limit

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        if not self._wanted(ctx):
            return ""
        supplied = self._supplied(ctx)
        if supplied is not None:
            return self._format(ctx, supplied)
        retriever = self._retriever_for(ctx)
        if retriever is None:
            return ""
        return cache.get_or_build(f"{self.type}#{ctx.message_hash()}", self.ttl_seconds, lambda: self._format(
            ctx, [self._item.model_validate(i) for i in
                  retriever.retrieve(ctx.user, ctx.request.current_user_message, self._limit)]))

    def _retriever_for(self, ctx: FetchContext) -> Retriever | None:
        return self._retriever

    def _supplied(self, ctx: FetchContext) -> list[Any] | None:
        raise NotImplementedError

    def _wanted(self, ctx: FetchContext) -> bool:
        raise NotImplementedError

    def _format(self, ctx: FetchContext, items: list[Any]) -> str:
        raise NotImplementedError


class RelevantKnowledgeSource(_RetrievedSource):
    type = ContextType.RELEVANT_KNOWLEDGE
    priority = Priority.IMPORTANT
    ttl_seconds = 30.0
    does_io = True
    _item = KnowledgeItem

    def __init__(self, *, retriever: Retriever | None, triggers: Triggers = DEFAULT_KNOWLEDGE_TRIGGERS,
                 limit: int = 3, protocol: Retriever | None = None) -> None:
        """`protocol`: without a knowledge retriever, the protocol knowledge base is searched instead, for a
        message naming one of the tenant's trigger words (never for every message: a protocol is one domain's)
        and not for a protocol question, whose intent context carries it already."""
        super().__init__(retriever=retriever, limit=limit)
        self._triggers_of = triggers if callable(triggers) else lambda _: triggers
        self._protocol = protocol

    def _retriever_for(self, ctx: FetchContext) -> Retriever | None:
        if self._retriever is not None or self._protocol is None:
            return self._retriever
        intent = ctx.request.intent
        # An intent that reads the protocol already has it in its own part; no triggers: no knowledge asked for.
        if (intent is not None and retrieval_of(intent.type) == "protocol") or not self._triggers_of(
                ctx.user.tenant_id):
            return None
        return self._protocol

    def _supplied(self, ctx: FetchContext) -> list[Any] | None:
        return ctx.request.relevant_knowledge

    def _wanted(self, ctx: FetchContext) -> bool:
        """A message with one of the triggers (every message when there are none)."""
        message = ctx.request.current_user_message.lower()
        triggers = self._triggers_of(ctx.user.tenant_id)
        return bool(message.strip()) and (not triggers or any(t.lower() in message for t in triggers))

    def _format(self, ctx: FetchContext, items: list[KnowledgeItem]) -> str:
        if not items:
            return ""
        parts = [ctx.pick("以下是与用户最新问题相关的知识库内容（仅供参考，请结合实际情况回答）：",
                          "Knowledge relevant to the user's latest message (for reference; check it fits):")]
        for item in items:
            source = one_line(item.source or ctx.pick("知识库", "knowledge base"), 200)
            similarity = f" ({ctx.pick('相似度', 'similarity')}: {item.similarity:.2f})" if item.similarity else ""
            quoted = "\n".join(f"> {line}" for line in neutralize(item.content).strip().splitlines() if line.strip())
            parts += ["", f"{ctx.pick('来源', 'Source')}：{source}{similarity}", quoted]
        return "\n".join(parts)


class SimilarExperiencesSource(_RetrievedSource):
    type = ContextType.SIMILAR_EXPERIENCES
    priority = Priority.NICE_TO_HAVE
    ttl_seconds = 120.0
    does_io = True
    _item = ExperienceItem

    def __init__(self, *, retriever: Retriever | None, stages: tuple[str, ...] = EXPERIENCE_STAGES,
                 limit: int = 3) -> None:
        super().__init__(retriever=retriever, limit=limit)
        self._stages = stages

    def _supplied(self, ctx: FetchContext) -> list[Any] | None:
        return ctx.request.similar_experiences

    def _wanted(self, ctx: FetchContext) -> bool:
        """Only in the configured stages (by default information collection, assessment and
        recommendation, objections)."""
        state = ctx.request.consulting_state
        stage = state.current_stage_id if state else None
        return bool(ctx.request.current_user_message.strip()) and stage in self._stages

    def _format(self, ctx: FetchContext, items: list[ExperienceItem]) -> str:
        if not items:
            return ""
        lines = [ctx.pick("系统积累的相关经验（可参考但不必逐字照搬）：",
                          "Experience the system has gathered (use as guidance, not a script):")]
        for i, item in enumerate(items, 1):
            category = f"[{one_line(item.category, 40)}] " if item.category else ""
            lines.append(f"{i}. {category}{one_line(item.content, 600)}")
        return "\n".join(lines)
