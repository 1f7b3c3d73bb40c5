"""Dynamic context injection: the eight context blocks, their priorities, caches and formats, the token
budget, the injected message pair, auto-compaction and the performance targets, in Chinese and English."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.domain.inject.conversation import validate_messages
from tests.fakes.api_calls import (
    block_body,
    block_info,
    configure,
    context_text,
    extract,
    inject,
    is_chinese,
    memory_lines,
    save,
    save_many,
)
from tests.fakes.retriever_service import RetrieverService

# Nothing here depends on the domain pack: every test runs on both (conftest.py).
PACKS = ("immigration", "general")

PRIORITIES = {"user_memory": "P0", "collected_info": "P0", "assessment_result": "P0", "conversation_stats": "P1",
              "relevant_knowledge": "P1", "active_agents_history": "P1", "similar_experiences": "P2",
              "device_context": "P2"}
TTLS = {"user_memory": 60, "collected_info": 0, "conversation_stats": 0, "assessment_result": 0,
        "relevant_knowledge": 30, "similar_experiences": 120, "active_agents_history": 0}

LANG: dict[str, dict[str, Any]] = {
    "zh": {
        "facts": ["用户35岁", "本科学历,毕业于浙江大学", "在互联网行业工作8年,目前年薪60万", "已婚,有一个3岁的孩子"],
        "intent": "用户对高才通B类感兴趣",
        "preference": "用户偏好文字交流,回复较简短",
        "hello": ("你好,我想咨询香港身份", "您好!请问您目前的学历和工作情况?"),
        "policy_question": "高才通B类的申请条件是什么?",
        "chat": "今天天气不错",
        "collected": {"age": 35, "education": "本科", "university": "浙江大学", "workYears": "8年",
                      "industry": "互联网/IT", "annualIncome": "约60万人民币", "maritalStatus": "已婚"},
        "assessment": {"recommendedPrograms": ["高才通B类", "优才计划"], "suitabilityScore": 75,
                       "highlights": ["名校毕业+工作经验充足", "年龄优势明显"],
                       "concerns": ["年薪未达高才通A类标准"]},
        "knowledge": [{"source": "高才通计划申请指南", "similarity": 0.92,
                       "content": "B类要求全球百强大学学士学位,并在申请前五年内累积至少三年工作经验"},
                      {"source": "优才计划评分标准", "similarity": 0.85, "content": "综合计分制下学历最高可得45分"}],
        "experiences": [{"category": "对话策略", "content": "当用户表示还在考虑时,先询问具体顾虑点"},
                        {"category": "案例参考", "content": "类似背景的用户通过优才计划成功的案例较多"}],
        "device": {"deviceType": "mobile", "deviceModel": "iPhone", "timezone": "UTC+8", "region": "上海"},
        "agents": [("Policy Expert", "查询高才通B类条件", "返回了详细的学历和工作经验要求"),
                   ("Memory Manager", "保存用户信息:年龄35,浙大本科", "已成功保存")],
        "turns": ["您好,我想了解一下香港的身份政策,主要是人才类的几个计划", "我是本科毕业的,学的是计算机专业,在杭州工作了八年左右",
                  "年薪大概六十万人民币吧,另外每年还有一些奖金和股票收入", "我已经结婚了,孩子今年三岁了,家里人都挺支持我去香港的",
                  "英语水平还可以,之前考过雅思,成绩是六点五分左右吧", "我对高才通比较感兴趣一些,想多了解一下它的具体申请条件",
                  "请问申请需要多长时间才能批下来?整个流程大概是怎样的", "我适合高才通吗?需要准备哪些材料?大概要花多少费用呢"],
        "ack_word": "上下文",
    },
    "en": {
        "facts": ["User is 35 years old", "Bachelor's degree from Zhejiang University",
                  "Has worked in the internet industry for 8 years, earning 600,000 CNY a year",
                  "Married with a 3-year-old child"],
        "intent": "User is interested in TTPS Category B",
        "preference": "User prefers text chat and short replies",
        "hello": ("Hi, I'd like to ask about Hong Kong residency",
                  "Hello! What is your education and work experience?"),
        "policy_question": "What are the requirements for TTPS Category B?",
        "chat": "Nice weather today",
        "collected": {"age": 35, "education": "Bachelor", "university": "Zhejiang University", "workYears": "8 years",
                      "industry": "Internet/IT", "annualIncome": "about 600,000 CNY", "maritalStatus": "married"},
        "assessment": {"recommendedPrograms": ["TTPS Category B", "QMAS"], "suitabilityScore": 75,
                       "highlights": ["Top university and solid experience", "Age is an advantage"],
                       "concerns": ["Income below the TTPS Category A threshold"]},
        "knowledge": [{"source": "TTPS application guide", "similarity": 0.92,
                       "content": "Category B requires a bachelor's degree from a top-100 university and three "
                                  "years of work experience in the last five years"},
                      {"source": "QMAS points table", "similarity": 0.85,
                       "content": "Education earns up to 45 points in the general points test"}],
        "experiences": [{"category": "Dialogue strategy",
                         "content": "When the user says they are still thinking, ask what worries them first"},
                        {"category": "Case reference",
                         "content": "Users with a similar background often succeed through QMAS"}],
        "device": {"deviceType": "mobile", "deviceModel": "iPhone", "timezone": "UTC+8", "region": "Shanghai"},
        "agents": [("Policy Expert", "Looked up TTPS Category B requirements",
                    "Returned the education and experience requirements"),
                   ("Memory Manager", "Saved the user's info: age 35, ZJU bachelor", "Saved")],
        "turns": ["Hi, I'd like to know about HK residency.", "I have a bachelor's degree, 8 years at work.",
                  "My salary is about 600k CNY plus bonus.", "I'm married and my kid is three years old.",
                  "My English is fine, IELTS 6.5 or so.", "TTPS sounds interesting, tell me more.",
                  "How long does an application take?", "Am I a fit for TTPS? What documents?"],
        "ack_word": "context",
    },
}


def ask(lang: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"user_id": f"u-inject-{lang}", "conversation_id": f"c-{lang}", "current_user_message": message, **extra}


def save_profile(api: Any, lang: str) -> None:
    data = LANG[lang]
    save_many(api, f"u-inject-{lang}", [
        *({"memoryType": "FACT", "content": fact} for fact in data["facts"]),
        {"memoryType": "INTENT", "content": data["intent"], "category": "TTPS"},
        {"memoryType": "PREFERENCE", "content": data["preference"]}])


def agent_records(lang: str, count: int) -> list[dict[str, Any]]:
    now = int(time.time() * 1000)
    records = []
    for i in range(count):
        name, did, got = LANG[lang]["agents"][i % 2]
        records.append({"agentName": f"{name} {i}", "invokedAt": now - (count - i) * 60_000, "durationMs": 800,
                        "inputSummary": did, "outputSummary": got, "tokensUsed": 300})
    return records


def history(lang: str, turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i in range(turns):
        messages += [{"role": "user", "content": LANG[lang]["turns"][i % 8]},
                     {"role": "assistant", "content": "好的。" if lang == "zh" else "OK."}]
    return messages


def everything(lang: str) -> dict[str, Any]:
    """A first message with every source present: all eight blocks have something to say."""
    data = LANG[lang]
    return ask(lang, data["policy_question"], consultingState={
        "collectedInfo": data["collected"], "assessmentResult": data["assessment"],
        "currentStageId": "info_collection"}, deviceInfo=data["device"], agentHistory=agent_records(lang, 2),
        relevantKnowledge=data["knowledge"], similarExperiences=data["experiences"])


# ---- 2. overview of the context types: priorities, cache TTLs, unified tags ----

def _overview(api: Any, lang: str) -> None:
    save_profile(api, lang)
    result = inject(api, everything(lang))
    assert set(result["injected_contexts"]) == set(PRIORITIES), result["injected_contexts"]
    blocks = {b["type"]: b for b in result["blocks"]}
    assert {t: b["priority"] for t, b in blocks.items()} == PRIORITIES
    for block_type, ttl in TTLS.items():
        assert blocks[block_type]["cache_ttl_seconds"] == ttl, block_type
    device_ttl = blocks["device_context"]["cache_ttl_seconds"]
    assert device_ttl < 0 or device_ttl >= 3600  # the conversation's lifetime
    context = context_text(result)
    positions = {t: context.index(f"<{t}>") for t in PRIORITIES}
    for t in PRIORITIES:
        assert f"</{t}>" in context  # one tag format for every block
    order = sorted(PRIORITIES, key=lambda t: positions[t])
    assert [PRIORITIES[t] for t in order] == sorted(PRIORITIES[t] for t in order)  # P0, then P1, then P2
    assert is_chinese(context) == (lang == "zh")


def test_context_injection_overview_block_priorities_and_ttls_zh(api):
    # context injection, overview of the context types: eight blocks, priorities P0-P2, cache TTLs, tags
    _overview(api, "zh")


def test_context_injection_overview_block_priorities_and_ttls_en(api):
    _overview(api, "en")


# ---- 3. type definitions: ContextInjectionRequest / ContextInjectionResult ----

def _types(api: Any, lang: str) -> None:
    user_said, assistant_said = LANG[lang]["hello"]
    result = inject(api, {"userId": f"u-inject-{lang}", "conversationId": "c-types",
                          "messages": [{"role": "user", "content": user_said},
                                       {"role": "assistant", "content": assistant_said}],
                          "currentUserMessage": LANG[lang]["policy_question"],
                          "consultingState": {"collectedInfo": {"age": 35}}, "maxContextTokens": 180_000})
    assert {"messages", "injected_contexts", "dropped_contexts", "total_context_tokens", "compacted"} <= set(result)
    assert result["dropped_contexts"] == [] and result["compacted"] is False
    injected_tokens = sum(b["tokens"] for b in result["blocks"] if b["type"] in result["injected_contexts"])
    assert isinstance(result["total_context_tokens"], int) and result["total_context_tokens"] >= injected_tokens > 0
    assert validate_messages(result["messages"]) == []


def test_context_injection_types_request_and_result_fields_zh(api):
    # context injection, type definitions: the request in camelCase, the result's fields
    _types(api, "zh")


def test_context_injection_types_request_and_result_fields_en(api):
    _types(api, "en")


# ---- 4.1 user_memory ----

LINE = re.compile(r"^- \[(FACT|PREFERENCE|INTENT)\] .+ \((?:重要度|importance): (\d+)\)$")


def _user_memory_format(api: Any, lang: str) -> None:
    assert "user_memory" not in inject(api, ask(lang, LANG[lang]["chat"]))["injected_contexts"]  # empty: not injected
    save_profile(api, lang)
    result = inject(api, ask(lang, LANG[lang]["chat"]))
    block = block_body(context_text(result), "user_memory")
    lines = memory_lines(block)
    assert lines and all(LINE.match(line) for line in lines), block
    importance = {"FACT": 70, "INTENT": 80, "PREFERENCE": 60}
    for line in lines:
        kind, value = LINE.match(line).groups()  # type: ignore[union-attr]
        assert int(value) == importance[kind]
    assert LINE.match(lines[0]).group(1) == "INTENT"  # type: ignore[union-attr]  # top memories by importance
    assert len(lines) == len(set(lines))  # top and relevant memories merged without duplicates
    assert is_chinese(block.splitlines()[0]) == (lang == "zh")


def test_context_injection_user_memory_format_zh(api):
    # context injection, user_memory: "- [TYPE] content (importance: N)" lines, top memories first
    _user_memory_format(api, "zh")


def test_context_injection_user_memory_format_en(api):
    _user_memory_format(api, "en")


def _user_memory_relevant(api: Any, lang: str, memory: str, message: str) -> None:
    save_profile(api, lang)
    save_many(api, f"u-inject-{lang}", [  # three more INTENTs crowd the top five
        *({"memoryType": "INTENT", "content": f"{LANG[lang]['intent']} {i}"} for i in range(3)),
        {"memoryType": "PREFERENCE", "content": memory}])
    block = block_body(context_text(inject(api, ask(lang, message))), "user_memory")
    assert memory in block, block


def test_context_injection_user_memory_relevant_to_message_zh(api):
    # context injection, user_memory: top memories plus those relevant to the current message
    _user_memory_relevant(api, "zh", "喜欢用微信沟通", "可以用微信联系我吗?")


def test_context_injection_user_memory_relevant_to_message_en(api):
    _user_memory_relevant(api, "en", "Prefers to be contacted on WhatsApp", "Can you contact me on WhatsApp?")


def _user_memory_freshness(api: Any, lang: str, new_memory: str) -> None:
    save_profile(api, lang)
    first = inject(api, ask(lang, LANG[lang]["policy_question"]))
    second = inject(api, ask(lang, LANG[lang]["policy_question"]))
    save(api, f"u-inject-{lang}", "INTENT", new_memory)
    third = inject(api, ask(lang, LANG[lang]["policy_question"]))
    assert [block_info(r, "user_memory")["cached"] for r in (first, second, third)] == [False, True, False]
    assert new_memory in block_body(context_text(third), "user_memory")


def test_context_injection_user_memory_freshness_zh(api):
    # context injection, user_memory freshness: cached for 60 s, invalidated as soon as a memory is saved
    _user_memory_freshness(api, "zh", "计划明年上半年递交申请")


def test_context_injection_user_memory_freshness_en(api):
    _user_memory_freshness(api, "en", "Plans to submit the application in the first half of next year")


# ---- 4.2 collected_info ----

def _collected_info(api: Any, lang: str, labels: tuple[str, ...], missing: tuple[str, ...], complete_word: str,
                    missing_word: str) -> None:
    data = LANG[lang]
    result = inject(api, ask(lang, data["chat"], consultingState={"collectedInfo": data["collected"]}))
    block = block_body(context_text(result), "collected_info")
    for label in labels:
        assert label.lower() in block.lower(), (label, block)
    for value in data["collected"].values():
        assert str(value) in block
    tail = block.splitlines()[-1].lower()
    assert missing_word in tail and all(word.lower() in tail for word in missing), tail
    full = {**data["collected"], "languageAbility": "IELTS 7", "hasHKConnection": True}
    done = block_body(context_text(inject(api, ask(lang, data["chat"], consultingState={"collectedInfo": full}))),
                      "collected_info")
    assert missing_word not in done.lower() and complete_word in done.lower()
    assert "collected_info" not in inject(api, ask(lang, data["chat"]))["injected_contexts"]


# The consulting fields are the immigration consultation's; a general tenant's labels are its profile's
# (tests/unit/test_context_domain.py).
@pytest.mark.immigration_pack
def test_context_injection_collected_info_zh(api):
    # context injection, collected_info: labelled values and the core fields not collected yet
    _collected_info(api, "zh", ("年龄", "学历", "毕业院校", "工作年限", "行业", "年收入", "婚姻状况"), ("语言能力", "香港联系"),
                    "已收集", "尚未收集")


@pytest.mark.immigration_pack
def test_context_injection_collected_info_en(api):
    _collected_info(api, "en", ("age", "education", "university", "experience", "industry", "income", "marital"),
                    ("language", "hong kong"), "collected", "not collected")


# ---- 4.3 conversation_stats ----

def _conversation_stats(api: Any, lang: str, expected: tuple[str, ...], style: str) -> None:
    messages = history(lang, 7)
    started = (datetime.now(UTC) - timedelta(minutes=12, seconds=10)).isoformat()
    result = inject(api, ask(lang, LANG[lang]["turns"][7], messages=messages, conversationStartedAt=started,
                             consultingState={"currentStageId": "info_collection", "stageTurnCount": 2,
                                              "stageHistory": [{"stageId": "greeting", "turnsInStage": 2},
                                                               {"stageId": "needs_discovery", "turnsInStage": 3}]}))
    block = block_body(context_text(result), "conversation_stats")
    for pattern in expected:
        assert re.search(pattern, block, re.I), (pattern, block)
    assert style.lower() in block.lower(), block


def test_context_injection_conversation_stats_zh(api):
    # context injection, conversation_stats: turns, duration, stage, stage history, reply style
    _conversation_stats(api, "zh", (r"8\s*轮", r"12\s*分钟", r"信息收集\s*\(第\s*3\s*轮\)",
                                    r"开场破冰\s*\(2轮\)\s*→\s*需求了解\s*\(3轮\)"), "较简短")  # the turns average 20-49 characters


def test_context_injection_conversation_stats_en(api):
    _conversation_stats(api, "en", (r"\b8\b", r"\b12 min", r"information collection.*\b3\b",
                                    r"greeting\s*\(2[^)]*\)\s*→\s*needs discovery\s*\(3[^)]*\)"), "short")


# ---- 4.4 assessment_result ----

def _assessment(api: Any, lang: str, score: str) -> None:
    data = LANG[lang]
    assert "assessment_result" not in inject(api, ask(lang, data["chat"]))["injected_contexts"]
    result = inject(api, ask(lang, data["chat"], consultingState={"assessmentResult": data["assessment"]}))
    block = block_body(context_text(result), "assessment_result")
    for text in [*data["assessment"]["recommendedPrograms"], *data["assessment"]["highlights"],
                 *data["assessment"]["concerns"]]:
        assert text in block
    assert re.search(score, block), block
    assert block.index(data["assessment"]["highlights"][0]) < block.index(data["assessment"]["concerns"][0])


def test_context_injection_assessment_result_zh(api):
    # context injection, assessment_result: programs, score out of 100, strengths, concerns; only when assessed
    _assessment(api, "zh", r"75\s*分\s*/\s*100\s*分")


def test_context_injection_assessment_result_en(api):
    _assessment(api, "en", r"75\s*(?:/|out of)\s*100")


# ---- 4.5 relevant_knowledge ----

def _relevant_knowledge(api: Any, lang: str, similarity_word: str) -> None:
    data = LANG[lang]
    result = inject(api, ask(lang, data["policy_question"], relevantKnowledge=data["knowledge"]))
    block = block_body(context_text(result), "relevant_knowledge")
    for item in data["knowledge"]:
        assert item["source"] in block and f"{item['similarity']:.2f}" in block
        assert re.search(rf"^> .*{re.escape(item['content'][:12])}", block, re.M), block
    assert similarity_word in block
    chat = inject(api, ask(lang, data["chat"], relevantKnowledge=data["knowledge"]))
    assert "relevant_knowledge" not in chat["injected_contexts"]  # only for policy, condition or process questions


@pytest.mark.immigration_pack  # the immigration pack's trigger words make a policy question; the general pack has none
def test_context_injection_relevant_knowledge_zh(api):
    # context injection, relevant_knowledge: sources with similarity and quoted excerpts, for policy questions only
    _relevant_knowledge(api, "zh", "相似度")


@pytest.mark.immigration_pack
def test_context_injection_relevant_knowledge_en(api):
    _relevant_knowledge(api, "en", "similarity")


# ---- 4.6 similar_experiences ----

def _similar_experiences(api: Any, lang: str) -> None:
    data = LANG[lang]
    for stage in ("info_collection", "assessment", "recommendation", "objection_handling"):
        result = inject(api, ask(lang, data["chat"], similarExperiences=data["experiences"],
                                 consultingState={"currentStageId": stage}))
        block = block_body(context_text(result), "similar_experiences")
        for i, item in enumerate(data["experiences"], 1):
            assert re.search(rf"^{i}\. \[{re.escape(item['category'])}\] .*{re.escape(item['content'][:10])}",
                             block, re.M), block
    greeting = inject(api, ask(lang, data["chat"], similarExperiences=data["experiences"],
                               consultingState={"currentStageId": "greeting"}))
    assert "similar_experiences" not in greeting["injected_contexts"]


def test_context_injection_similar_experiences_zh(api):
    # context injection, similar_experiences: numbered, categorised, only in the collection/assessment/objection stages
    _similar_experiences(api, "zh")


def test_context_injection_similar_experiences_en(api):
    _similar_experiences(api, "en")


# ---- 4.7 device_context ----

def _device_context(api: Any, lang: str, words: tuple[str, ...]) -> None:
    data = LANG[lang]
    first = inject(api, ask(lang, data["turns"][0], deviceInfo=data["device"]))
    block = block_body(context_text(first), "device_context")
    for word in words:
        assert word.lower() in block.lower(), (word, block)
    assert re.search(r"\d{4}-\d{2}-\d{2}", block)  # the user's current local time
    second = inject(api, ask(lang, data["turns"][1], messages=history(lang, 1), deviceInfo=data["device"]))
    assert "device_context" not in second["injected_contexts"]
    sixth = inject(api, ask(lang, data["turns"][5], messages=history(lang, 5), deviceInfo=data["device"]))
    assert "device_context" in sixth["injected_contexts"]  # again every 5 turns


def test_context_injection_device_context_zh(api):
    # context injection, device_context: device, time zone, region, local time; first message and every 5 turns
    _device_context(api, "zh", ("移动设备", "iPhone", "UTC+8", "上海", "手机"))


def test_context_injection_device_context_en(api):
    _device_context(api, "en", ("mobile", "iPhone", "UTC+8", "Shanghai", "phone"))


# ---- 4.8 active_agents_history ----

def _agents_history(api: Any, lang: str, ago: str) -> None:
    records = agent_records(lang, 7)
    result = inject(api, ask(lang, LANG[lang]["chat"], agentHistory=records))
    block = block_body(context_text(result), "active_agents_history")
    assert not any(f"{r['agentName']} -" in block for r in records[:2])  # only the last 5 are kept
    kept = records[2:]
    for i, record in enumerate(kept, 1):
        assert re.search(rf"^{i}\. \[[^\]]*{ago}[^\]]*\] {re.escape(record['agentName'])} - "
                         rf"{re.escape(record['inputSummary'])}", block, re.M), block
        assert f"→ {record['outputSummary']}" in block


def test_context_injection_active_agents_history_zh(api):
    # context injection, active_agents_history: the last 5 agent calls, when, input and output summaries
    _agents_history(api, "zh", "分钟前")


def test_context_injection_active_agents_history_en(api):
    _agents_history(api, "en", "ago")


# ---- 5. the injector: the message pair, the token budget ----

def _context_pair(api: Any, lang: str, header: tuple[str, ...], footer: str) -> None:
    save_profile(api, lang)
    before = history(lang, 2)
    result = inject(api, ask(lang, LANG[lang]["policy_question"], messages=before))
    messages = result["messages"]
    context = messages[0]["content"]
    assert messages[0]["role"] == "user" and messages[1]["role"] == "assistant"
    first_line = context.splitlines()[0]
    assert first_line.startswith("===") and all(word in first_line.lower() for word in header), first_line
    last_line = context.splitlines()[-1]
    assert last_line.startswith("===") and footer in last_line.lower(), last_line
    assert LANG[lang]["ack_word"] in messages[1]["content"].lower()
    assert messages[2:-1] == before
    assert messages[-1] == {"role": "user", "content": LANG[lang]["policy_question"]}
    assert validate_messages(messages) == []


def test_context_injection_injector_context_pair_zh(api):
    # context injection, the injector: one framed context message and an acknowledgement before the history
    _context_pair(api, "zh", ("动态上下文", "非用户输入"), "以下为用户对话")


def test_context_injection_injector_context_pair_en(api):
    _context_pair(api, "en", ("context", "not user input"), "conversation follows")


def _token_budget(api: Any, lang: str) -> None:
    save_profile(api, lang)
    data = LANG[lang]
    filler = ("这段历史很长。" if lang == "zh" else "This is a long piece of history. ") * 60
    messages = []
    for _ in range(6):  # fewer than 10 turns, no tool results, no message over 2,000 characters
        messages += [{"role": "user", "content": filler[:1900]}, {"role": "assistant", "content": filler[:1900]}]
    body = ask(lang, data["policy_question"], messages=messages,
               consultingState={"collectedInfo": data["collected"], "currentStageId": "info_collection"},
               relevantKnowledge=data["knowledge"], similarExperiences=data["experiences"])
    roomy = inject(api, body)
    assert roomy["dropped_contexts"] == []
    history_tokens = roomy["token_usage"]["messages_before"]
    p0 = sum(b["tokens"] for b in roomy["blocks"] if b["priority"] == "P0")
    # The reserves stated (the defaults of a large window), so the budget is exactly what this test computes.
    body = {**body, "reserved_output_tokens": 4096, "reserved_system_tokens": 10_000}
    tight = inject(api, {**body, "max_context_tokens": history_tokens + 4096 + 10_000 + p0 // 2})
    assert {"user_memory", "collected_info"} <= set(tight["injected_contexts"])  # P0 is never dropped
    assert {"similar_experiences", "relevant_knowledge", "conversation_stats"} <= set(tight["dropped_contexts"])
    assert not set(tight["injected_contexts"]) & set(tight["dropped_contexts"])
    some = inject(api, {**body, "max_context_tokens": history_tokens + 4096 + 10_000 + p0 + 40})
    assert "similar_experiences" in some["dropped_contexts"]  # P2 goes first
    assert tight["messages"][-1] == {"role": "user", "content": data["policy_question"]}


def test_context_injection_injector_token_budget_drops_low_priority_zh(api):
    # context injection, the injector's token budget: P2 dropped first, then P1; P0 always injected
    _token_budget(api, "zh")


def test_context_injection_injector_token_budget_drops_low_priority_en(api):
    _token_budget(api, "en")


def _available_budget(api: Any, lang: str) -> None:
    default = inject(api, ask(lang, LANG[lang]["chat"]))
    assert default["token_usage"]["available"] == 180_000 - 4096 - 10_000
    custom = inject(api, ask(lang, LANG[lang]["chat"], maxContextTokens=100_000))
    assert custom["token_usage"]["available"] == 100_000 - 4096 - 10_000


def test_context_injection_injector_available_budget_zh(api):
    # context injection, the injector: available = max context tokens - 4,096 output - 10,000 system
    _available_budget(api, "zh")


def test_context_injection_injector_available_budget_en(api):
    _available_budget(api, "en")


# ---- 6. auto-compaction ----

def _tool_turn(lang: str, i: int) -> list[dict[str, Any]]:
    result = ("查询结果:" if lang == "zh" else "Lookup result: ") + ("x" * 1500)
    return [
        {"role": "user", "content": LANG[lang]["turns"][i % 8]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"tool-{i}", "name": "lookup", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tool-{i}", "content": result}]},
        {"role": "assistant", "content": "好的。" if lang == "zh" else "OK."},
    ]


def _compaction(api: Any, lang: str, marker: str, summary: str) -> None:
    messages = [m for i in range(14) for m in _tool_turn(lang, i)]
    # ~7,500 tokens of history in a window of 8,000 (5,200 available): over 80%.
    body = ask(lang, LANG[lang]["policy_question"], messages=messages, max_context_tokens=8_000)
    result = inject(api, body)
    assert result["compacted"] is True and result["compaction_steps"], result["compaction_steps"]
    out = result["messages"]
    assert validate_messages(out) == []
    assert out[-1] == {"role": "user", "content": LANG[lang]["policy_question"]}
    text = json.dumps(out, ensure_ascii=False)
    if "tool_results" in result["compaction_steps"]:
        assert marker in text  # long tool results keep a short preview and their original length
    if "early_turns" in result["compaction_steps"]:
        assert summary in text
        user_turns = [m for m in out[2:] if m["role"] == "user" and isinstance(m["content"], str)]
        assert len(user_turns) >= 10  # the last 10 turns are kept whole
    assert result["token_usage"]["messages_after"] < result["token_usage"]["messages_before"]
    calm = inject(api, {**body, "messages": messages[:4], "max_context_tokens": 180_000})
    assert calm["compacted"] is False and calm["compaction_steps"] == []  # under 80%: nothing happens


def test_context_injection_auto_compaction_zh(api):
    # context injection, auto-compaction: over 80% of the budget, tool results, then early turns, then long messages
    _compaction(api, "zh", "原始长度", "摘要")


def test_context_injection_auto_compaction_en(api):
    _compaction(api, "en", "original length", "ummary")


def _truncation(api: Any, lang: str) -> None:
    long_text = ("很长的一段话。" if lang == "zh" else "A very long sentence. ") * 1200
    messages = [{"role": "user", "content": long_text}, {"role": "assistant", "content": long_text}]
    result = inject(api, ask(lang, LANG[lang]["policy_question"], messages=messages, max_context_tokens=20_000))
    assert result["compacted"] is True and "truncate" in result["compaction_steps"]
    assert all(len(m["content"]) <= 2000 for m in result["messages"][2:-1]), [
        len(m["content"]) for m in result["messages"]]


def test_context_injection_auto_compaction_truncates_long_messages_zh(api):
    # context injection, auto-compaction step 3: messages over 2,000 characters are truncated
    _truncation(api, "zh")


def test_context_injection_auto_compaction_truncates_long_messages_en(api):
    _truncation(api, "en")


# ---- 7. the complete data flow ----

def _data_flow(api: Any, lang: str, said: str, question: str, collected: dict[str, Any]) -> None:
    saved = extract(api, f"u-inject-{lang}", said)
    user_said, assistant_said = LANG[lang]["hello"]
    result = inject(api, ask(lang, question, messages=[{"role": "user", "content": user_said},
                                                       {"role": "assistant", "content": assistant_said}],
                             consulting_state={"collectedInfo": collected, "currentStageId": "info_collection"}))
    assert result["injected_contexts"][:2] == ["user_memory", "collected_info"]
    block = block_body(context_text(result), "user_memory")
    assert any(m["content"] in block for m in saved["saved_memories"])
    assert result["messages"][2:] == [{"role": "user", "content": user_said},
                                      {"role": "assistant", "content": assistant_said},
                                      {"role": "user", "content": question}]


def test_context_injection_data_flow_save_then_inject_zh(api):
    # context injection, the complete data flow: a saved turn reaches the next Claude call's context
    _data_flow(api, "zh", "我今年35岁,本科毕业于浙江大学,在互联网行业工作8年了,年薪60万", "我适合高才通吗?需要准备哪些材料?",
               {"age": 35, "education": "本科", "workYears": 8})


def test_context_injection_data_flow_save_then_inject_en(api):
    _data_flow(api, "en", "I'm 35, I have a bachelor's degree from Zhejiang University and 8 years of experience",
               "Am I a fit for TTPS? Which documents do I need?", {"age": 35, "education": "Bachelor", "workYears": 8})


# ---- 8. cache invalidation ----

def _assessment_real_time(api: Any, lang: str) -> None:
    data = LANG[lang]
    before = inject(api, ask(lang, data["chat"], consultingState={"currentStageId": "assessment"}))
    after = inject(api, ask(lang, data["chat"], consultingState={"currentStageId": "assessment",
                                                                 "assessmentResult": data["assessment"]}))
    assert "assessment_result" not in before["injected_contexts"]
    assert "assessment_result" in after["injected_contexts"] and not block_info(after, "assessment_result")["cached"]


def test_context_injection_cache_invalidation_assessment_real_time_zh(api):
    # context injection, cache invalidation: a finished assessment is in the very next context
    _assessment_real_time(api, "zh")


def test_context_injection_cache_invalidation_assessment_real_time_en(api):
    _assessment_real_time(api, "en")


@pytest.fixture
def knowledge() -> Iterator[RetrieverService]:
    with RetrieverService(lambda path, body: []) as service:
        yield service


def _knowledge_ttl(api: Any, monkeypatch: Any, knowledge: RetrieverService, lang: str) -> None:
    knowledge.answer = lambda path, body: LANG[lang]["knowledge"]
    configure(monkeypatch, CONTEXT_KNOWLEDGE_URL=f"{knowledge.url}/retrieve")
    question = LANG[lang]["policy_question"]
    first = inject(api, ask(lang, question))
    second = inject(api, ask(lang, question))
    assert [block_info(r, "relevant_knowledge")["cached"] for r in (first, second)] == [False, True]
    assert block_info(first, "relevant_knowledge")["cache_ttl_seconds"] == 30
    assert len(knowledge.calls) == 1 and knowledge.calls[0]["query"] == question
    assert LANG[lang]["knowledge"][0]["source"] in context_text(second)


def test_context_injection_cache_invalidation_knowledge_ttl_zh(api, monkeypatch, knowledge):
    # context injection, cache invalidation: retrieved knowledge is reused for 30 s, then expires
    _knowledge_ttl(api, monkeypatch, knowledge, "zh")


def test_context_injection_cache_invalidation_knowledge_ttl_en(api, monkeypatch, knowledge):
    _knowledge_ttl(api, monkeypatch, knowledge, "en")


# ---- 9. performance targets ----

# Latency and the cache hit rate are performance targets: `make bench-inject` measures them.


def _token_share(api: Any, lang: str) -> None:
    save_profile(api, lang)
    result = inject(api, everything(lang))
    assert result["total_context_tokens"] <= 0.15 * 180_000


def test_context_injection_performance_context_token_share_zh(api):
    # context injection, performance targets: the context stays within 15% of the context window
    _token_share(api, "zh")


def test_context_injection_performance_context_token_share_en(api):
    _token_share(api, "en")
