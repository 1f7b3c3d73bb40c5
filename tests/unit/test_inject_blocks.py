"""The inject service's blocks over fakes: which blocks come and in what order, their language, caller-supplied
knowledge and experiences, sources that fail alone, and the intent block's retrievers."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache
from agent_memory.api.inject import inject_context
from agent_memory.domain.inject.context import ContextType, Priority
from agent_memory.domain.inject.conversation import validate_messages
from agent_memory.domain.inject.summary import extractive_summary
from agent_memory.domain.models import MemoryType, ScopeRef
from agent_memory.services.blocks.base import BlockCache, FetchContext
from agent_memory.services.inject import InjectLimits, InjectService
from tests.fakes.inject import NOW, build, context_text, empty_layers, remember, request, user
from tests.fakes.store import InMemoryMemoryStore

# ---- blocks --------------------------------------------------------------------------------------

def test_given_memories_and_state_when_injecting_then_the_blocks_come_in_priority_order():
    store, who = InMemoryMemoryStore(), user("blocks")
    remember(store, who, "用户35岁，本科学历，毕业于浙江大学", 90)
    remember(store, who, "用户对高才通B类感兴趣", 80, MemoryType.INTENT)
    services = build(store)

    result = inject_context(services.inject, who, request(
        user_id=who.user_id, current_user_message="我适合高才通吗？",
        consulting_state={"collectedInfo": {"age": 35, "education": "本科"}, "currentStageId": "info_collection",
                          "assessmentResult": {"recommendedPrograms": ["高才通B类"], "suitabilityScore": 75,
                                               "highlights": ["名校毕业"], "concerns": []}},
        device_info={"deviceType": "mobile", "timezone": "Asia/Shanghai", "region": "上海"},
        agent_history=[{"agentName": "Policy Expert", "invokedAt": int(time.time() * 1000) - 120_000,
                        "inputSummary": "查询高才通B类条件", "outputSummary": "返回了要求"}],
    ))

    assert result.injected_contexts == ["user_memory", "collected_info", "assessment_result", "conversation_stats",
                                        "active_agents_history", "device_context"]
    assert [b.priority for b in result.blocks] == ["P0", "P0", "P0", "P1", "P1", "P2"]
    text = context_text(result)
    assert text.startswith("=== 动态上下文信息（系统自动注入，非用户输入） ===")
    assert text.rstrip().endswith("=== 以上为系统上下文，以下为用户对话 ===")
    assert "- [FACT] 用户35岁，本科学历，毕业于浙江大学 (重要度: 90)" in text
    assert "- 年龄: 35" in text and "尚未收集: 工作年限、年收入、语言能力、香港联系" in text
    assert "推荐方案: 高才通B类" in text and "匹配度: 75分/100分" in text
    assert "设备类型: 移动设备" in text and "时区: Asia/Shanghai" in text
    assert "[2分钟前] Policy Expert - 查询高才通B类条件" in text
    assert result.messages[1] == {"role": "assistant", "content": "我已了解以上上下文信息，将在回复中参考使用。"}
    assert result.messages[-1] == {"role": "user", "content": "我适合高才通吗？"}
    assert validate_messages(result.messages) == []


def test_given_an_english_conversation_when_injecting_then_the_frame_is_english():
    store, who = InMemoryMemoryStore(), user("english")
    remember(store, who, "User is a nurse in Toronto", 85)
    result = inject_context(build(store).inject, who, request(user_id=who.user_id,
                                                      current_user_message="What visa options do I have?"))
    text = context_text(result)
    assert text.startswith("=== Dynamic context (injected by the system, not user input) ===")
    assert "- [FACT] User is a nurse in Toronto (importance: 85)" in text
    assert result.messages[1]["content"] == "Understood. I will use this context in my replies."


def test_given_no_data_when_injecting_then_nothing_is_added_but_the_current_message():
    who = user("empty")
    result = inject_context(build().inject, who, request(user_id=who.user_id, current_user_message="hi"))
    assert result.injected_contexts == ["conversation_stats"]
    only_stats = inject_context(build().inject, who, request(
        user_id=who.user_id, messages=[{"role": "user", "content": "hi"}]))
    assert only_stats.messages[-1] == {"role": "user", "content": "hi"}


def test_device_context_comes_on_the_first_message_and_every_five_turns():
    who = user("device")
    inject = build().inject

    def turns(n: int) -> list[dict[str, str]]:
        history: list[dict[str, str]] = []
        for i in range(n - 1):
            history += [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]
        return history

    shown = [n for n in range(1, 13) if "device_context" in inject_context(inject, who, request(
        user_id=who.user_id, messages=turns(n), current_user_message="next",
        device_info={"deviceType": "desktop"})).injected_contexts]
    assert shown == [1, 6, 11]


def test_the_current_message_joins_a_trailing_tool_result_turn_as_text():
    who = user("tools")
    messages = [
        {"role": "user", "content": "check my case"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
    ]
    result = inject_context(build().inject, who, request(user_id=who.user_id, messages=messages,
                                                current_user_message="and my wife?"))
    assert result.messages[-1]["content"][-1] == {"type": "text", "text": "and my wife?"}
    assert validate_messages(result.messages) == []
    # Already the last human turn: not repeated.
    again = inject_context(build().inject, who, request(user_id=who.user_id, messages=messages,
                                               current_user_message="check my case"))
    assert again.messages[2:] == messages


def test_caller_supplied_knowledge_and_experiences_are_injected_and_quoted():
    who = user("knowledge")
    result = inject_context(build().inject, who, request(
        user_id=who.user_id, current_user_message="高才通的申请条件是什么？",
        relevant_knowledge=[{"source": "高才通计划申请指南", "content": "B类要求百强大学学士学位\n三年工作经验",
                             "similarity": 0.92}],
        similar_experiences=[{"category": "对话策略", "content": "先询问具体顾虑点"}],
        consulting_state={"currentStageId": "assessment"},
    ))
    text = context_text(result)
    assert "来源：高才通计划申请指南 (相似度: 0.92)\n> B类要求百强大学学士学位\n> 三年工作经验" in text
    assert "1. [对话策略] 先询问具体顾虑点" in text
    assert {"relevant_knowledge", "similar_experiences"} <= set(result.injected_contexts)


# ---- sources -------------------------------------------------------------------------------------

class _FailingSource:
    type = "broken"
    priority = Priority.IMPORTANT
    ttl_seconds = 0.0
    does_io = True

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        raise RuntimeError("retriever on fire")


class _StaticSource:
    type = "project_rules"
    priority = Priority.CRITICAL
    ttl_seconds = 300.0
    does_io = False

    def __init__(self) -> None:
        self.builds = 0

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        return cache.get_or_build("project_rules#v1", self.ttl_seconds, self._rules)

    def _rules(self) -> str:
        self.builds += 1
        return "Always answer in the user's language."


def test_a_new_block_type_is_one_class_and_a_failing_source_costs_only_its_block():
    static = _StaticSource()
    service = InjectService(sources=[_FailingSource(), static],
                            cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                            executor=ThreadPoolExecutor(2), summarizer=lambda: extractive_summary,
                            limits=InjectLimits(), clock=lambda: NOW)
    who = user("custom")
    first = inject_context(service, who, request(user_id=who.user_id, current_user_message="hi"))
    second = inject_context(service, who, request(user_id=who.user_id, current_user_message="again"))
    assert first.injected_contexts == ["project_rules"]
    assert "<project_rules>\nAlways answer in the user's language.\n</project_rules>" in context_text(first)
    assert static.builds == 1 and second.blocks[0].cached
    # the failure is said, by kind only (the error's text may carry user data)
    assert [f.model_dump() for f in first.failed_contexts] == [
        {"type": "broken", "priority": "P1", "reason": "RuntimeError"}]


def test_experiences_in_the_retrievers_documented_shape_are_injected():
    who = user("experience-shape")
    result = inject_context(build().inject, who, request(
        user_id=who.user_id, current_user_message="我适合高才通吗？",
        similar_experiences=[{"content": "类似背景的客户走了高才通B类", "source": "case-17", "similarity": 0.82,
                              "category": "TTPS"}], consulting_state={"currentStageId": "assessment"}))
    assert "similar_experiences" in result.injected_contexts and result.failed_contexts == []
    assert "类似背景的客户走了高才通B类" in context_text(result)


def test_context_types_are_eight_conversation_blocks_plus_two_memory_layers():
    assert [t.value for t in ContextType] == [
        "user_memory", "collected_info", "conversation_stats", "assessment_result", "relevant_knowledge",
        "similar_experiences", "device_context", "active_agents_history", "hot_memory", "intent_context"]


def test_knowledge_and_experience_conditions_hold_for_caller_supplied_items_too():
    who = user("conditions")
    experiences = [{"content": "先询问具体顾虑点"}]
    knowledge = [{"content": "B类要求百强大学学士学位"}]
    chat = inject_context(build().inject, who, request(
        user_id=who.user_id, current_user_message="今天天气不错", relevant_knowledge=knowledge,
        similar_experiences=experiences, consulting_state={"currentStageId": "assessment"}))
    assert "relevant_knowledge" not in chat.injected_contexts  # not a policy question
    no_stage = inject_context(build().inject, who, request(
        user_id=who.user_id, current_user_message="高才通的申请条件是什么？", relevant_knowledge=knowledge,
        similar_experiences=experiences))
    assert "relevant_knowledge" in no_stage.injected_contexts
    assert "similar_experiences" not in no_stage.injected_contexts  # only in the consulting stages that call for it
    closing = inject_context(build().inject, who, request(
        user_id=who.user_id, current_user_message="好的谢谢", similar_experiences=experiences,
        consulting_state={"currentStageId": "closing"}))
    assert "similar_experiences" not in closing.injected_contexts


class _Retriever:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.queries: list[str] = []

    def retrieve(self, user: ScopeRef, query: str, limit: int) -> list[dict[str, Any]]:
        self.queries.append(query)
        return self.items[:limit]


def test_a_qc_task_gets_the_sops_and_a_protocol_question_the_protocol_knowledge_base():
    from agent_memory.services.blocks.memory_layers import IntentContextSource

    sop = _Retriever([{"content": "SAE须在24小时内上报", "source": "SOP-07"}])
    protocol = _Retriever([{"content": "访视窗口为±3天", "source": "方案v2.1 §6.2"}])
    service = InjectService(sources=[IntentContextSource(layers=empty_layers({"sop": sop, "protocol": protocol}))],
                            cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                            executor=ThreadPoolExecutor(2), summarizer=lambda: extractive_summary,
                            limits=InjectLimits(), clock=lambda: NOW)
    who = user("iit")
    qc = inject_context(service, who, request(user_id=who.user_id, current_user_message="今天的质控任务有哪些？",
                                     intent={"type": "QC_TASK", "query": "SAE上报"}))
    assert "## 相关SOP\n- [SOP-07] SAE须在24小时内上报" in context_text(qc) and sop.queries == ["SAE上报"]
    qa = inject_context(service, who, request(user_id=who.user_id, current_user_message="访视窗口是多少天？",
                                     intent={"type": "PROTOCOL_QA"}))
    assert "## 方案知识库\n- [方案v2.1 §6.2] 访视窗口为±3天" in context_text(qa)
    assert protocol.queries == ["访视窗口是多少天？"]  # no intent query: the message
    chat = inject_context(service, who,
                          request(user_id=who.user_id, current_user_message="你好", intent={"type": "CHAT"}))
    assert "intent_context" not in chat.injected_contexts


def test_given_the_same_intent_without_a_query_then_a_new_message_is_retrieved_for_not_served_from_the_cache():
    from agent_memory.services.blocks.memory_layers import IntentContextSource

    class ByQuery(_Retriever):
        def retrieve(self, user: ScopeRef, query: str, limit: int) -> list[dict[str, Any]]:
            self.queries.append(query)
            return [{"content": f"answer to {query}"}]

    protocol = ByQuery([])
    service = InjectService(sources=[IntentContextSource(layers=empty_layers({"protocol": protocol}))],
                            cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                            executor=ThreadPoolExecutor(2), summarizer=lambda: extractive_summary,
                            limits=InjectLimits(), clock=lambda: NOW)
    who = user("iit-cache")
    texts = [context_text(inject_context(service, who, request(user_id=who.user_id, current_user_message=message,
                                                      intent={"type": "PROTOCOL_QA"})))
             for message in ("补件要多久？", "续签什么时候准备？", "补件要多久？")]
    assert "answer to 补件要多久？" in texts[0] and "answer to 续签什么时候准备？" in texts[1]
    assert texts[2] == texts[0] and protocol.queries == ["补件要多久？", "续签什么时候准备？"]  # the repeat: cached
