"""The sources whose blocks only restate the request (no I/O): each hands its part of the request to
its formatter in `domain.request_blocks`."""

from __future__ import annotations

from collections.abc import Callable

from agent_memory.domain.inject.context import CONVERSATION_LIFETIME, ContextType, Priority
from agent_memory.domain.inject.current_message import user_texts
from agent_memory.domain.inject.request_blocks import (
    agents_text,
    assessment_text,
    collected_info_text,
    conversation_stats_text,
    device_text,
)
from agent_memory.domain.packs import AssessmentWording, default_pack
from agent_memory.services.blocks.base import BlockCache, FetchContext

# One wording for every tenant, or a tenant's (its pack's).
Wording = AssessmentWording | Callable[[str], AssessmentWording]


def _for_tenant(wording: Wording, ctx: FetchContext) -> AssessmentWording:
    return wording(ctx.user.tenant_id) if callable(wording) else wording


class CollectedInfoSource:
    type = ContextType.COLLECTED_INFO
    priority = Priority.CRITICAL
    ttl_seconds = 0.0
    does_io = False

    def __init__(self, *, wording: Wording | None = None) -> None:
        self._wording = wording or default_pack().assessment

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        return collected_info_text(ctx.request.consulting_state, _for_tenant(self._wording, ctx), ctx.locale)


class ConversationStatsSource:
    type = ContextType.CONVERSATION_STATS
    priority = Priority.IMPORTANT
    ttl_seconds = 0.0
    does_io = False

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        request = ctx.request
        return conversation_stats_text(user_texts=user_texts(ctx.messages), turn_number=ctx.turn_number,
                                       state=request.consulting_state, started_at=request.conversation_started_at,
                                       now=ctx.now, locale=ctx.locale)


class AssessmentResultSource:
    type = ContextType.ASSESSMENT_RESULT
    priority = Priority.CRITICAL
    ttl_seconds = 0.0
    does_io = False

    def __init__(self, *, wording: Wording | None = None) -> None:
        self._wording = wording or default_pack().assessment

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        return assessment_text(ctx.request.consulting_state, _for_tenant(self._wording, ctx), ctx.locale)


class DeviceContextSource:
    """Device and locale facts: on the conversation's first message and every `every_turns` turns."""

    type = ContextType.DEVICE_CONTEXT
    priority = Priority.NICE_TO_HAVE
    ttl_seconds = CONVERSATION_LIFETIME
    does_io = False

    def __init__(self, *, every_turns: int = 5) -> None:
        self._every = every_turns

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        return device_text(ctx.request.device_info, now=ctx.now, turn_number=ctx.turn_number,
                           every_turns=self._every, locale=ctx.locale)


class ActiveAgentsHistorySource:
    type = ContextType.ACTIVE_AGENTS_HISTORY
    priority = Priority.IMPORTANT
    ttl_seconds = 0.0
    does_io = False

    def __init__(self, *, keep_last: int = 5) -> None:
        self._keep = keep_last

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        return agents_text(ctx.request.agent_history, now=ctx.now, keep_last=self._keep, locale=ctx.locale)
