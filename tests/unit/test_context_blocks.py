"""Block sources over fakes: what each reads and shows, and that a failing one logs none of the user's words."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from typing import Any

from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache
from agent_memory.api.inject import InjectionRequest, InjectionResult, inject_context
from agent_memory.domain.inject.caller_state import ConsultingState
from agent_memory.domain.inject.summary import extractive_summary
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType, WeeklyReport
from agent_memory.services.blocks.base import BlockSource
from agent_memory.services.blocks.memory_layers import HotMemorySource, IntentContextSource
from agent_memory.services.blocks.request import ConversationStatsSource
from agent_memory.services.conversation_log import ConversationLogService
from agent_memory.services.inject import InjectLimits, InjectService
from agent_memory.services.memory_layers import MemoryLayersService
from tests.fakes.layer_store import FakeLayerStore
from tests.fakes.store import InMemoryMemoryStore

NOW = 1_795_309_200.0  # 2026-11-22T01:00:00Z


def inject_with(sources: list[BlockSource], who: ScopeRef, **fields: Any) -> InjectionResult:
    service = InjectService(sources=sources, cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                            executor=ThreadPoolExecutor(2), summarizer=lambda: extractive_summary,
                            limits=InjectLimits(), clock=lambda: NOW)
    fields.setdefault("conversation_id", "c-1")
    return inject_context(service, who, InjectionRequest.model_validate({"user_id": who.user_id, **fields}))


def block_text(result: InjectionResult, block_type: str) -> str:
    context = result.messages[0]["content"] if result.injected_contexts else ""
    start, end = f"<{block_type}>\n", f"\n</{block_type}>"
    return context.split(start, 1)[1].split(end, 1)[0] if start in context else ""


# ---- intent_context ------------------------------------------------------------------------------

class CountingLayers(FakeLayerStore):
    """The fake layer store, with its hot-memory reads counted."""

    def __init__(self, hot: list[HotMemoryEntry], reports: list[WeeklyReport], scope: ScopeRef) -> None:
        super().__init__()
        for entry in hot:
            self.put_hot(scope, entry)
        for report in reports:
            self.put_report_if_absent(scope, report)
        self.hot_reads = 0

    def hot_memory(self, scope: ScopeRef) -> list[HotMemoryEntry]:
        self.hot_reads += 1
        return super().hot_memory(scope)


def test_the_intent_block_shows_the_reports_without_reading_or_charging_hot_memory():
    # Given hot memory bigger than the intent's whole token budget, and a report matching the question
    moment = datetime(2026, 11, 20, tzinfo=UTC)
    hot = [HotMemoryEntry(type=HotMemoryType.STATUS, key=f"site-{i}", value="入组进度良好，数据核查按计划进行" * 3,
                          created_at=moment, updated_at=moment) for i in range(10)]
    report = WeeklyReport(week_start=date(2026, 11, 9), week_end=date(2026, 11, 15), created_at=moment,
                          summary="访视窗口由PI确认为±3天")
    who = ScopeRef(tenant_id="t-blocks", user_id="intent-hot")
    store = CountingLayers(hot, [report], who)
    log = ConversationLogService(layers=store, embedder=lambda: None)
    layers = MemoryLayersService(layers=store, log=log, embedder=lambda: None,
                                 question_intents=frozenset({"qa_query"}), max_tokens=300)

    # When inject builds hot memory and the intent's context for a question about the past
    result = inject_with([HotMemorySource(layers=layers, store=InMemoryMemoryStore()),
                          IntentContextSource(layers=layers)], who,
                         current_user_message="访视窗口是多少天？", intent={"type": "QA_QUERY", "query": "访视窗口"})

    # Then hot memory is read once, for its own block, and the report is not crowded out of the intent's
    assert store.hot_reads == 1
    assert result.injected_contexts == ["hot_memory", "intent_context"]
    intent = block_text(result, "intent_context")
    assert "访视窗口由PI确认为±3天" in intent and "site-0" not in intent


# ---- conversation_stats --------------------------------------------------------------------------

def test_conversation_stats_count_the_current_message_once_when_an_agent_loop_resends_it():
    # Given an agent loop: the user asked, the model called a tool, the caller sends the result back
    # together with the same current message
    question = "What documents do I need for the visa application?"
    messages = [{"role": "user", "content": question},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a list"}]}]
    who = ScopeRef(tenant_id="t-blocks", user_id="stats")

    # When the stats block is built
    result = inject_with([ConversationStatsSource()], who, messages=messages, current_user_message=question)

    # Then the question counts once, like in the Messages array that is sent (which does not repeat it)
    assert "- Turns: 1 (1 user messages)" in block_text(result, "conversation_stats")
    assert result.messages[-1] == messages[-1]


def test_conversation_stats_give_the_turn_within_a_stage_only_when_the_caller_names_the_stage():
    from agent_memory.domain.inject.request_blocks import conversation_stats_text

    def stage_line(state: Any) -> str:
        text = conversation_stats_text(user_texts=["hi"], turn_number=3, state=state, started_at=None, now=0.0,
                                       locale="en")
        return next(line for line in text.splitlines() if line.startswith("- Current stage"))

    assert stage_line(None) == "- Current stage: unknown"
    named = ConsultingState.model_validate({"currentStageId": "assessment", "stageTurnCount": 2})
    assert stage_line(named).endswith("(turn 3)")


CANARY = "canary-7f3a-用户秘密"


class LeakySource:
    """A source that fails the way a bad item does: a pydantic error quoting the user's text."""

    type = "relevant_knowledge"
    priority = 1
    ttl_seconds = 0.0
    does_io = False

    def build(self, ctx: Any, cache: Any) -> str:
        from pydantic import BaseModel

        class Item(BaseModel):
            similarity: float

        Item.model_validate({"similarity": ctx.request.current_user_message})
        return ""


def test_a_failing_source_is_logged_without_the_users_words(caplog):
    with caplog.at_level("DEBUG"):
        result = inject_with([LeakySource()], ScopeRef(tenant_id="t", user_id="u-leak"),
                             current_user_message=f"政策是什么 {CANARY}")

    logged = " ".join(f"{record.getMessage()} {record.__dict__} {record.exc_text or ''}" for record in caplog.records)
    assert [f.type for f in result.failed_contexts] == ["relevant_knowledge"]
    assert "context source failed" in logged and "float_parsing" in logged
    assert CANARY not in logged
