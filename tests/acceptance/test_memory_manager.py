"""Memory manager: extraction (save_info), loading context (load_context), the structured profile
(summarize), its tools and the example scenarios, each in Chinese and in English, over HTTP."""

from __future__ import annotations

from typing import Any

from tests.fakes.api_calls import (
    current_memories,
    extract,
    is_chinese,
    load,
    ok,
    run_log_extractions,
    save,
    summarize,
    user_path,
)

IMPORTANCE = {"FACT": 70, "INTENT": 80, "PREFERENCE": 60}
PROFILE_SECTIONS = {
    "basic": {"age", "education", "university", "major", "nationality", "location"},
    "career": {"jobTitle", "industry", "company", "yearsOfExperience", "annualIncome"},
    "immigration": {"targetCategories", "timeline", "hasHKEmployer", "investmentCapacity"},
    "family": {"maritalStatus", "hasChildren", "familySupport"},
}

# The turn of example scenario 1 and the interest/preference turn of scenarios 2 and 3.
BACKGROUND = {
    "zh": "我今年32岁,浙大计算机硕士毕业的,现在在杭州做前端开发,工作8年了,年薪大概80万",
    "en": "I'm 32, I have a master's degree in computer science from Zhejiang University. I work as a frontend "
          "developer in Hangzhou, with 8 years of experience, and my annual salary is about 800,000 yuan.",
}
INTEREST = {
    "zh": "我对高才通B类非常感兴趣,希望尽快办理,时间越短越好",
    "en": "I'm very interested in TTPS Category B, and I'd like it done as soon as possible, the sooner the better.",
}
# A shorter turn (age, job, city) where the whole background is not needed.
SHORT = {"zh": "我今年32岁,在杭州做前端开发", "en": "I'm 32 and I work as a frontend developer in Hangzhou"}
THANKS = {"zh": "感谢您分享这些信息!您的背景很不错...", "en": "Thanks for sharing! Your background looks strong..."}


def saved_fields(body: dict[str, Any]) -> set[str]:
    return {part for m in body["saved_memories"] for part in m["field"].split("+")}


def by_field(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {part: m for m in body["saved_memories"] for part in m["field"].split("+")}


# ---- 1. core responsibilities: the design principle "only what the user states; vagueness kept" ----

def _vague_age_kept(api: Any, message: str) -> None:
    body = extract(api, "u-vague", message)
    assert body["extracted_info"].get("age") == "30+", body
    assert [m["field"] for m in body["saved_memories"]] == ["age"]
    assert "30" in body["saved_memories"][0]["content"]


def test_memory_manager_design_principle_vague_age_kept_zh(api):
    # memory manager, core responsibilities, design principle: "about thirty-something" is kept as 30+
    _vague_age_kept(api, "我大概三十多岁")


def test_memory_manager_design_principle_vague_age_kept_en(api):
    _vague_age_kept(api, "I'm in my thirties")


# ---- 1. core responsibilities, capability 5: dedup and merge, newer information replaces older ----

def _newer_fact_supersedes(api: Any, older: str, newer: str) -> None:
    extract(api, "u-age", older)
    extract(api, "u-age", newer)
    ages = [m for m in current_memories(api, "u-age") if m["field"] == "age"]
    assert [("33" in m["content"]) for m in ages] == [True], ages
    detail = ok(api.call("GET", f"{user_path('u-age')}/memories/{ages[0]['memory_key']}"))
    assert ["32" in m["content"] for m in detail["history"]] == [True, False]  # the older value is history


def test_memory_manager_dedup_merge_newer_fact_supersedes_zh(api):
    # memory manager, core responsibilities: new information overrides old, the old value stays in history
    _newer_fact_supersedes(api, "我今年32岁", "我今年33岁")


def test_memory_manager_dedup_merge_newer_fact_supersedes_en(api):
    _newer_fact_supersedes(api, "I'm 32 years old", "I'm 33 years old now")


def _direct_save_then_extraction(api: Any, saved: str, said: str) -> None:
    save(api, "u-mixed", "FACT", saved)  # the save_user_memory tool's shape: no field
    extract(api, "u-mixed", said)
    contents = [m["content"] for m in current_memories(api, "u-mixed")]
    assert any("33" in c for c in contents), contents
    assert not any("32" in c for c in contents), contents  # only the newer age is current


def test_memory_manager_dedup_merge_direct_save_then_extraction_zh(api):
    # memory manager, core responsibilities: an age saved through the tool, then a newer age said in chat
    _direct_save_then_extraction(api, "用户32岁", "我今年33岁")


def test_memory_manager_dedup_merge_direct_save_then_extraction_en(api):
    _direct_save_then_extraction(api, "User is 32 years old", "I'm 33 years old")


# ---- 2. model and parameters: temperature 0, extraction is deterministic ----

def _deterministic(api: Any, message: str) -> None:
    first = extract(api, "u-one", message)
    second = extract(api, "u-two", message)
    assert first["extracted_info"] == second["extracted_info"]
    assert first["saved_memories"] == second["saved_memories"]


def test_memory_manager_model_parameters_deterministic_extraction_zh(api):
    # memory manager, model and parameters: extraction must be deterministic
    _deterministic(api, "我今年32岁,在杭州做前端开发,年薪大概80万")


def test_memory_manager_model_parameters_deterministic_extraction_en(api):
    _deterministic(api, "I'm 32, I work as a frontend developer in Hangzhou and my annual salary is about 800,000 yuan")


# ---- 3.1 tool save_user_memory ----

def test_memory_manager_tool_save_user_memory_schema(api):
    # memory manager, available tools: save_user_memory's input schema (one casing: snake_case; the
    # executor accepts memoryType too)
    tools = {t["name"]: t for t in ok(api.call("GET", "/v1/tools"))["tools"]}
    schema = tools["save_user_memory"]["input_schema"]
    assert schema["required"] == ["memory_type", "content"]
    assert schema["properties"]["memory_type"]["enum"] == ["FACT", "PREFERENCE", "INTENT"]
    assert set(schema["properties"]["category"]["enum"]) == {"QMAS", "GEP", "IANG", "TTPS", "CIES", "TECHTAS"}
    assert schema["properties"]["content"]["type"] == "string"


def _importance_map(api: Any, memories: list[tuple[str, str, str | None]]) -> None:
    for memory_type, content, category in memories:
        body = save(api, "u-tool", memory_type, content, **({"category": category} if category else {}))
        assert body["memory"]["importance"] == IMPORTANCE[memory_type]
        assert body["memory"]["memory_type"] == memory_type and body["memory"]["category"] == category
    stored = {m["content"]: m for m in current_memories(api, "u-tool")}
    assert {c: stored[c]["importance"] for _, c, _ in memories} == {c: IMPORTANCE[t] for t, c, _ in memories}


def test_memory_manager_tool_save_user_memory_importance_map_zh(api):
    # memory manager, save_user_memory: importance by type, FACT 70, INTENT 80, PREFERENCE 60
    _importance_map(api, [("FACT", "用户32岁,清华大学计算机硕士", None), ("INTENT", "计划明年递交高才通申请", "TTPS"),
                          ("PREFERENCE", "倾向于走优才计划", "QMAS")])


def test_memory_manager_tool_save_user_memory_importance_map_en(api):
    _importance_map(api, [("FACT", "User is 32, Tsinghua computer science master's", None),
                          ("INTENT", "Plans to apply for TTPS next year", "TTPS"),
                          ("PREFERENCE", "Leans towards QMAS", "QMAS")])


def _source_and_conversation(api: Any, message: str) -> None:
    extract(api, "u-src", message, conversation="conv-42")
    stored = current_memories(api, "u-src")
    assert stored
    assert {(m["source"], m["conversation_id"]) for m in stored} == {("conversation", "conv-42")}


def test_memory_manager_tool_save_user_memory_source_and_conversation_zh(api):
    # memory manager, save_user_memory underlying call: source 'conversation' and the conversation id
    _source_and_conversation(api, "我今年32岁,在杭州工作")


def test_memory_manager_tool_save_user_memory_source_and_conversation_en(api):
    _source_and_conversation(api, "I'm 32 years old and I live in Hangzhou")


def test_memory_manager_tool_save_user_memory_rejects_values_outside_its_enums(api):
    # memory manager, save_user_memory: memoryType and category are closed sets
    bad_type = api.call("POST", f"{user_path('u-enum')}/memories", {"memoryType": "OPINION", "content": "x"})
    bad_category = api.call("POST", f"{user_path('u-enum')}/memories",
                            {"memoryType": "INTENT", "content": "x", "category": "GOLDEN_VISA"})
    assert bad_type.status == 422 and bad_category.status == 422
    assert current_memories(api, "u-enum") == []


# ---- 3.2 tool get_user_context ----

def test_memory_manager_tool_get_user_context_schema(api):
    # memory manager, available tools: get_user_context's input schema
    tools = {t["name"]: t for t in ok(api.call("GET", "/v1/tools"))["tools"]}
    schema = tools["get_user_context"]["input_schema"]
    assert schema["required"] == ["query"] and schema["properties"]["query"]["type"] == "string"


def _ordered_by_importance_and_relevance(api: Any, query: str, intent: str, fact: str, preference: str) -> None:
    save(api, "u-ctx", "PREFERENCE", preference)
    save(api, "u-ctx", "FACT", fact)
    save(api, "u-ctx", "INTENT", intent, category="TTPS")
    memories = load(api, "u-ctx", query)["memories"]
    assert memories[0]["content"] == intent
    assert [m["content"] for m in memories][-1] == preference


def test_memory_manager_tool_get_user_context_orders_by_importance_and_relevance_zh(api):
    # memory manager, get_user_context: memories sorted by importance and relevance
    _ordered_by_importance_and_relevance(api, "移民意向", "对高才通B类感兴趣", "用户32岁", "喜欢喝咖啡")


def test_memory_manager_tool_get_user_context_orders_by_importance_and_relevance_en(api):
    _ordered_by_importance_and_relevance(api, "immigration intentions", "Interested in TTPS Category B",
                                         "User is 32 years old", "Likes drinking coffee")


# ---- 4. system prompt: core principles ----

def _only_what_the_user_states(api: Any, user_message: str, assistant_message: str) -> None:
    body = extract(api, "u-explicit", user_message, assistant=assistant_message)
    assert body["saved_count"] == 0 and body["extracted_info"] == {}, body


def test_memory_manager_prompt_only_explicit_information_zh(api):
    # memory manager, system prompt, principle 1: only what the user states, no guessing from the reply
    _only_what_the_user_states(api, "你好,想咨询一下香港身份", "根据您的描述,您应该35岁左右,是硕士学历吧?")


def test_memory_manager_prompt_only_explicit_information_en(api):
    _only_what_the_user_states(api, "Hi, I'd like to ask about Hong Kong residency",
                               "From what you say, you must be around 35 with a master's degree?")


def _no_duplicate_saving(api: Any, message: str) -> None:
    first = extract(api, "u-dup", message)
    again = extract(api, "u-dup", message)
    assert first["saved_count"] > 0
    assert again["saved_count"] == 0 and again["saved_memories"] == []
    assert set(by_field(first)) <= set(again["skipped_fields"])
    assert len(current_memories(api, "u-dup")) == first["saved_count"]


def test_memory_manager_prompt_no_duplicate_saving_zh(api):
    # memory manager, system prompt, principle 3: the same information is never saved twice
    _no_duplicate_saving(api, SHORT["zh"])


def test_memory_manager_prompt_no_duplicate_saving_en(api):
    _no_duplicate_saving(api, SHORT["en"])


def _memory_types(api: Any, fact: str, intent: str, preference: str) -> None:
    assert {m["memoryType"] for m in extract(api, "u-types", fact)["saved_memories"]} == {"FACT"}
    assert [m["memoryType"] for m in extract(api, "u-types", intent)["saved_memories"]] == ["INTENT"]
    assert [m["memoryType"] for m in extract(api, "u-types", preference)["saved_memories"]] == ["PREFERENCE"]


def test_memory_manager_prompt_memory_type_classification_zh(api):
    # memory manager, system prompt, principle 5: FACT facts, INTENT plans, PREFERENCE subjective preferences
    _memory_types(api, "我是硕士学历", "我打算明年上半年递交申请", "希望尽快办理,时间越短越好")


def test_memory_manager_prompt_memory_type_classification_en(api):
    _memory_types(api, "I have a master's degree", "I plan to submit my application in the first half of next year",
                  "I'd like it done as soon as possible, the sooner the better")


def _basic_fields(api: Any, message: str, expected: dict[str, Any]) -> None:
    info = extract(api, "u-basic", message)["extracted_info"]
    for field, check in expected.items():
        assert field in info and check(info[field]), (field, info)


def test_memory_manager_prompt_core_fields_basic_zh(api):
    # memory manager, system prompt, core fields to extract: basic information (and nationality)
    _basic_fields(api, "我今年35岁,中国国籍,本科毕业于复旦大学金融专业", {
        "age": lambda v: v == 35, "nationality": lambda v: "中国" in str(v),
        "education": lambda v: v in ("学士", "本科"), "university": lambda v: v == "复旦大学",
        "major": lambda v: "金融" in v})


def test_memory_manager_prompt_core_fields_basic_en(api):
    _basic_fields(api, "I'm 35, a Chinese citizen, and I have a bachelor's degree in finance from Fudan University", {
        "age": lambda v: v == 35, "nationality": lambda v: "chin" in str(v).lower(),
        "education": lambda v: "bachelor" in v.lower(), "university": lambda v: "Fudan" in v,
        "major": lambda v: "finance" in v.lower()})


def _career_fields(api: Any, message: str, job: str, company: str, industry: str, currency: str) -> None:
    body = extract(api, "u-career", message)
    info = body["extracted_info"]
    assert job in info.get("currentJobTitle", "").lower(), info
    assert company in info.get("currentCompany", ""), info
    assert industry in info.get("currentIndustry", "").lower(), info
    assert info.get("totalYearsOfExperience") == 10 and info.get("annualIncome") == 1_500_000, info
    assert currency in by_field(body)["annualIncome"]["content"]  # the currency is kept


def test_memory_manager_prompt_core_fields_career_zh(api):
    # memory manager, system prompt, core fields to extract: career information (mind the currency)
    _career_fields(api, "我在腾讯做产品经理,属于互联网行业,工作10年了,年薪150万港币", "产品经理", "腾讯", "互联网", "港币")


def test_memory_manager_prompt_core_fields_career_en(api):
    _career_fields(api, "I work as a product manager at Tencent in the internet industry. I have 10 years of "
                   "experience and my annual salary is HK$1.5 million.", "product manager", "Tencent", "internet",
                   "HKD")


def _immigration_fields(api: Any, first: str, second: str) -> None:
    info = {**extract(api, "u-imm", first)["extracted_info"], **extract(api, "u-imm", second)["extracted_info"]}
    assert info.get("targetCategory") == "QMAS", info
    assert info.get("hasHKEmployer") is True, info
    assert info.get("hasTechBackground") is True, info
    assert info.get("investmentCapacity") == 30_000_000, info
    assert "immigrationTimeline" in info, info


def test_memory_manager_prompt_core_fields_immigration_zh(api):
    # memory manager, system prompt, core fields to extract: immigration-related information
    _immigration_fields(api, "我对优才计划感兴趣,打算明年递交申请,已经拿到了香港公司的offer",
                        "我是做软件研发的,有科技背景,可以投资3000万港币")


def test_memory_manager_prompt_core_fields_immigration_en(api):
    _immigration_fields(api, "I'm interested in QMAS and I plan to apply next year. I already have a job offer "
                        "from a Hong Kong company.", "I have a tech background and I can invest HK$30 million.")


def _family_fields(api: Any, message: str, married: str) -> None:
    info = extract(api, "u-family", message)["extracted_info"]
    assert married in str(info.get("maritalStatus", "")).lower(), info
    assert info.get("hasChildren") is True, info
    assert info.get("familySupport"), info


def test_memory_manager_prompt_core_fields_family_zh(api):
    # memory manager, system prompt, core fields to extract: family information
    _family_fields(api, "我已婚,有一个女儿,家人都很支持我去香港发展", "已婚")


def test_memory_manager_prompt_core_fields_family_en(api):
    _family_fields(api, "I'm married with one daughter, and my family fully supports the move to Hong Kong.",
                   "married")


# ---- 5. input/output formats ----

def test_memory_manager_io_save_info_output_shape_zh(api):
    # memory manager, input/output, save_info: MemoryManagerSaveInput in camelCase, the output's fields
    _save_info_shape(api, "zh")


def test_memory_manager_io_save_info_output_shape_en(api):
    _save_info_shape(api, "en")


def _save_info_shape(api: Any, lang: str) -> None:
    body = ok(api.call("POST", f"{user_path('u-io')}/memories/extract", {
        "action": "save_info", "userMessage": SHORT[lang], "assistantMessage": THANKS[lang],
        "existingInfo": {}}))
    assert set(body) == {"action", "extracted_info", "saved_count", "saved_memories", "skipped_fields",
                         "skipped_sentences", "note"}
    assert body["action"] == "save_info" and isinstance(body["extracted_info"], dict)
    assert body["saved_count"] == len(body["saved_memories"]) > 0
    for memory in body["saved_memories"]:
        assert set(memory) == {"memoryType", "content", "field"}
        assert memory["memoryType"] in IMPORTANCE and memory["content"] and memory["field"]
    assert isinstance(body["skipped_fields"], list)


def _load_context_shape(api: Any, lang: str, query: str) -> None:
    extract(api, "u-io", SHORT[lang])
    extract(api, "u-io", INTEREST[lang])
    body = ok(api.call("POST", f"{user_path('u-io')}/context/load", {"action": "load_context", "query": query}))
    assert {"action", "memories", "total_memories"} <= set(body) <= {"action", "memories", "total_memories",
                                                                     "user_profile_summary"}
    assert body["action"] == "load_context" and body["total_memories"] == len(current_memories(api, "u-io"))
    for memory in body["memories"]:
        assert {"type", "content", "importance"} <= set(memory) <= {"type", "content", "importance", "category",
                                                                    "createdAt"}
        assert memory["importance"] == IMPORTANCE[memory["type"]]
    assert isinstance(body.get("user_profile_summary"), str)


def test_memory_manager_io_load_context_output_shape_zh(api):
    # memory manager, input/output, load_context: MemoryManagerLoadOutput
    _load_context_shape(api, "zh", "用户的基本背景")


def test_memory_manager_io_load_context_output_shape_en(api):
    _load_context_shape(api, "en", "the user's background")


def _summarize_shape(api: Any, lang: str) -> None:
    extract(api, "u-io", SHORT[lang])
    body = summarize(api, "u-io")
    assert set(body) == {"action", "user_profile", "completeness", "narrative_summary"}
    assert body["action"] == "summarize"
    assert set(body["user_profile"]) == set(PROFILE_SECTIONS)
    for section, names in PROFILE_SECTIONS.items():
        assert set(body["user_profile"][section]) <= names, (section, body["user_profile"][section])
    completeness = body["completeness"]
    assert isinstance(completeness["score"], int) and 0 <= completeness["score"] <= 100
    assert not set(completeness["filled_fields"]) & set(completeness["missing_fields"])
    answered = {name for section in body["user_profile"].values() for name in section}
    unknown = {name for name, value in body["user_profile"]["family"].items() if value in (None, "未知", "unknown")}
    assert answered - unknown <= set(completeness["filled_fields"])
    assert isinstance(body["narrative_summary"], str) and body["narrative_summary"]


def test_memory_manager_io_summarize_output_shape_zh(api):
    # memory manager, input/output, summarize: MemoryManagerSummarizeOutput
    _summarize_shape(api, "zh")


def test_memory_manager_io_summarize_output_shape_en(api):
    _summarize_shape(api, "en")


# ---- 6. when to trigger: the user expresses a preference or an intent ----

def _preference_or_intent(api: Any, route: str, plan: str) -> None:
    first = extract(api, "u-trig", route)
    assert first["saved_count"] == 1, first
    assert first["saved_memories"][0]["memoryType"] in ("PREFERENCE", "INTENT")
    [stored] = current_memories(api, "u-trig")
    assert stored["category"] == "TTPS"
    second = extract(api, "u-trig", plan)
    assert [m["memoryType"] for m in second["saved_memories"]] == ["INTENT"], second
    assert second["extracted_info"].get("immigrationTimeline"), second


def test_memory_manager_trigger_preference_or_intent_expressed_zh(api):
    # memory manager, when to trigger save_info: "我比较想走高才通" / "打算明年申请"
    _preference_or_intent(api, "我比较想走高才通", "打算明年申请")


def test_memory_manager_trigger_preference_or_intent_expressed_en(api):
    _preference_or_intent(api, "I'd rather go for TTPS", "I plan to apply next year")


# ---- 7. internal loop ----

def _existing_info_filtered(api: Any, lang: str, location: str) -> None:
    body = extract(api, "u-loop", SHORT[lang], existing={"age": 32, "currentLocation": location})
    assert {"age", "currentLocation"} <= set(body["skipped_fields"])
    assert not {"age", "currentLocation"} & set(body["extracted_info"])
    assert not {"age", "currentLocation"} & saved_fields(body)
    assert body["saved_count"] > 0


def test_memory_manager_save_info_loop_existing_info_filtered_zh(api):
    # memory manager, save_info loop: fields already in existingInfo are filtered out and reported skipped
    _existing_info_filtered(api, "zh", "杭州")


def test_memory_manager_save_info_loop_existing_info_filtered_en(api):
    _existing_info_filtered(api, "en", "Hangzhou")


def _answer_to_question(api: Any, question: str, answer: str, employer_question: str, employer_answer: str,
                        lang: str) -> None:
    body = extract(api, "u-answer", answer, assistant=question)
    assert body["extracted_info"].get("age") == 35, body
    assert is_chinese(body["saved_memories"][0]["content"]) == (lang == "zh")  # the conversation's language
    body = extract(api, "u-answer", employer_answer, assistant=employer_question)
    assert body["extracted_info"].get("hasHKEmployer") is False, body


def test_memory_manager_save_info_loop_answer_to_assistant_question_zh(api):
    # memory manager, save_info loop: the user message is analysed with the assistant message it answers
    _answer_to_question(api, "请问您今年多大?", "三十五", "您目前有香港雇主吗?", "没有", "zh")


def test_memory_manager_save_info_loop_answer_to_assistant_question_en(api):
    _answer_to_question(api, "How old are you?", "35", "Do you have a Hong Kong employer?", "No", "en")


def _summary_when_enough(api: Any, lang: str, single: str, query: str) -> None:
    extract(api, "u-few", single)
    assert not load(api, "u-few", query).get("user_profile_summary")
    extract(api, "u-few", SHORT[lang])
    summary = load(api, "u-few", query).get("user_profile_summary")
    assert summary and "32" in summary and is_chinese(summary) == (lang == "zh")


def test_memory_manager_load_context_loop_profile_summary_when_enough_zh(api):
    # memory manager, load_context loop: a user_profile_summary only when there are enough memories
    _summary_when_enough(api, "zh", "我在杭州", "用户的基本背景")


def test_memory_manager_load_context_loop_profile_summary_when_enough_en(api):
    _summary_when_enough(api, "en", "I live in Hangzhou", "the user's background")


# ---- 8. relation to other agents: cross-session continuity and asynchronous saving ----

def _cross_session(api: Any, lang: str, question: str) -> None:
    saved = extract(api, "u-cross", SHORT[lang], assistant=THANKS[lang], conversation="conv-monday")
    loaded = load(api, "u-cross", question)
    assert {m["content"] for m in saved["saved_memories"]} <= {m["content"] for m in loaded["memories"]}
    result = ok(api.call("POST", "/v1/context/inject", {
        "user_id": "u-cross", "conversation_id": "conv-friday", "current_user_message": question}))
    memory_block = result["messages"][0]["content"].split("</user_memory>")[0]
    assert any(m["content"] in memory_block for m in saved["saved_memories"])


def test_memory_manager_collaboration_cross_session_continuity_zh(api):
    # memory manager, relation to other agents, cross-session: last conversation's information is available
    _cross_session(api, "zh", "我上次说的情况你还记得吗?")


def test_memory_manager_collaboration_cross_session_continuity_en(api):
    _cross_session(api, "en", "Do you remember what I told you last time?")


def _asynchronous_save(api: Any, question: str, answer: str) -> None:
    logged = ok(api.call("POST", f"{user_path('u-async')}/conversations/conv-1/messages", {"extract": True, "messages": [
        {"role": "assistant", "content": question}, {"role": "user", "content": answer}]}), 201)
    assert logged["queued_extractions"] and current_memories(api, "u-async") == []  # the reply is not blocked
    run_log_extractions(api)
    assert [m["field"] for m in current_memories(api, "u-async")] == ["age"]


def test_memory_manager_collaboration_asynchronous_save_zh(api):
    # memory manager, relation to other agents, asynchronous save: save_info does not block the reply
    _asynchronous_save(api, "您好,请问您今年多大?", "我今年33岁")


def test_memory_manager_collaboration_asynchronous_save_en(api):
    _asynchronous_save(api, "Hello, how old are you?", "I'm 33 years old")


# ---- 9. example scenarios ----

def _scenario_1(api: Any, lang: str, expected: dict[str, Any]) -> None:
    body = extract(api, "u-s1", BACKGROUND[lang], assistant=THANKS[lang], existing={})
    info = body["extracted_info"]
    for field, check in expected.items():
        assert field in info and check(info[field]), (field, info)
    assert body["saved_count"] == len(body["saved_memories"])
    assert {m["memoryType"] for m in body["saved_memories"]} == {"FACT"}
    assert set(expected) <= saved_fields(body)  # every extracted field is saved
    assert all(is_chinese(m["content"]) == (lang == "zh") for m in body["saved_memories"])
    assert body["skipped_fields"] == []
    stored = current_memories(api, "u-s1")
    assert len(stored) == body["saved_count"] and {m["importance"] for m in stored} == {70}


def test_memory_manager_scenario_1_extract_zh(api):
    # memory manager, example scenario 1: extracting information from a conversation (save_info)
    _scenario_1(api, "zh", {
        "age": lambda v: v == 32, "education": lambda v: v == "硕士", "university": lambda v: v == "浙江大学",
        "major": lambda v: "计算机" in v, "currentJobTitle": lambda v: "前端开发" in v,
        "totalYearsOfExperience": lambda v: v == 8, "annualIncome": lambda v: v == 800_000,
        "currentLocation": lambda v: v == "杭州"})


def test_memory_manager_scenario_1_extract_en(api):
    _scenario_1(api, "en", {
        "age": lambda v: v == 32, "education": lambda v: "master" in v.lower(),
        "university": lambda v: v == "Zhejiang University", "major": lambda v: "computer" in v.lower(),
        "currentJobTitle": lambda v: "frontend developer" in v.lower(), "totalYearsOfExperience": lambda v: v == 8,
        "annualIncome": lambda v: v == 800_000, "currentLocation": lambda v: v == "Hangzhou"})


SCENARIO_2_MEMORIES = {
    "zh": [("FACT", "用户32岁", None), ("FACT", "浙江大学计算机硕士毕业", None), ("FACT", "从事前端开发工作8年", None),
           ("FACT", "年薪约80万人民币", None), ("INTENT", "对高才通B类非常感兴趣", "TTPS"),
           ("PREFERENCE", "希望尽快办理,时间越短越好", None)],
    "en": [("FACT", "User is 32 years old", None), ("FACT", "Master's in computer science from Zhejiang University",
                                                     None),
           ("FACT", "Frontend developer for 8 years", None), ("FACT", "Annual salary about 800,000 CNY", None),
           ("INTENT", "Very interested in TTPS Category B", "TTPS"),
           ("PREFERENCE", "Wants it done as fast as possible, the sooner the better", None)],
}


def _scenario_2(api: Any, lang: str, query: str, interest: tuple[str, ...]) -> None:
    for memory_type, content, category in SCENARIO_2_MEMORIES[lang]:
        save(api, "u-s2", memory_type, content, createdAt="2026-02-05T10:00:00Z",
             **({"category": category} if category else {}))
    body = ok(api.call("POST", f"{user_path('u-s2')}/context/load", {"action": "load_context", "query": query}))
    assert body["action"] == "load_context" and body["total_memories"] == 6
    got = {m["content"]: m for m in body["memories"]}
    assert set(got) == {content for _, content, _ in SCENARIO_2_MEMORIES[lang]}
    for memory_type, content, category in SCENARIO_2_MEMORIES[lang]:
        assert got[content]["type"] == memory_type and got[content]["importance"] == IMPORTANCE[memory_type]
        assert got[content].get("category") == category
        assert str(got[content]["createdAt"]).startswith("2026-02-05")
    summary = body.get("user_profile_summary") or ""
    assert "32" in summary and any(word in summary for word in interest), summary
    assert is_chinese(summary) == (lang == "zh")


def test_memory_manager_scenario_2_load_context_zh(api):
    # memory manager, example scenario 2: loading context across sessions (load_context)
    _scenario_2(api, "zh", "用户的基本背景和移民意向", ("高才通", "TTPS"))


def test_memory_manager_scenario_2_load_context_en(api):
    _scenario_2(api, "en", "the user's background and immigration intentions", ("TTPS",))


def _scenario_2_after_extraction(api: Any, lang: str, query: str) -> None:
    extract(api, "u-s2x", BACKGROUND[lang], conversation="conv-old")
    extract(api, "u-s2x", INTEREST[lang], conversation="conv-old")
    body = load(api, "u-s2x", query)
    types = {m["type"]: m for m in body["memories"]}
    assert set(types) == {"FACT", "INTENT", "PREFERENCE"}, body["memories"]
    assert all(m["importance"] == IMPORTANCE[m["type"]] for m in body["memories"])
    assert types["INTENT"]["category"] == "TTPS"
    assert body["total_memories"] == len(body["memories"]) and "32" in (body.get("user_profile_summary") or "")


def test_memory_manager_scenario_2_load_context_after_extraction_zh(api):
    # memory manager, example scenario 2, the memories coming from an earlier conversation's save_info
    _scenario_2_after_extraction(api, "zh", "用户的基本背景和移民意向")


def test_memory_manager_scenario_2_load_context_after_extraction_en(api):
    _scenario_2_after_extraction(api, "en", "the user's background and immigration intentions")


# Scenario 3's completeness lists: 18 fields between them, each counted once, so 11 / 18 = 61. (The example
# shows 65, which would be 11 of 17 fields; its own lists name 18. Company and family support, which it
# names in neither list, are counted only once known.)
SCENARIO_3_FILLED = {"age", "education", "university", "major", "location", "jobTitle", "industry",
                     "yearsOfExperience", "annualIncome", "targetCategories", "timeline"}
SCENARIO_3_MISSING = {"nationality", "maritalStatus", "hasChildren", "languageSkills", "hasHKEmployer",
                      "hasTechBackground", "investmentCapacity"}


def _scenario_3(api: Any, lang: str, expected: dict[str, dict[str, Any]], named: tuple[str, ...],
                not_yet: tuple[str, ...]) -> None:
    extract(api, "u-s3", BACKGROUND[lang], conversation="conv-1")
    extract(api, "u-s3", INTEREST[lang], conversation="conv-2")
    body = summarize(api, "u-s3")
    profile = body["user_profile"]
    for section, fields in expected.items():
        for name, check in fields.items():
            assert name in profile[section] and check(profile[section][name]), (section, name, profile[section])
    completeness = body["completeness"]
    assert set(completeness["filled_fields"]) == SCENARIO_3_FILLED
    assert set(completeness["missing_fields"]) == SCENARIO_3_MISSING
    assert completeness["score"] == round(100 * 11 / 18) == 61
    narrative = body["narrative_summary"]
    assert is_chinese(narrative) == (lang == "zh") and all(word in narrative for word in named), narrative
    assert any(word in narrative.lower() for word in not_yet), narrative  # says what is still missing
    extract(api, "u-s3", "我已婚" if lang == "zh" else "I'm married")
    assert summarize(api, "u-s3")["completeness"]["score"] > completeness["score"]


def test_memory_manager_scenario_3_summarize_zh(api):
    # memory manager, example scenario 3: the structured user profile before an assessment (summarize)
    _scenario_3(api, "zh", {
        "basic": {"age": lambda v: "32" in v, "education": lambda v: v == "硕士", "university": lambda v: v == "浙江大学",
                  "major": lambda v: "计算机" in v, "location": lambda v: v == "杭州"},
        "career": {"jobTitle": lambda v: "前端开发" in v, "industry": lambda v: v == "IT/互联网",
                   "yearsOfExperience": lambda v: "8" in v, "annualIncome": lambda v: "80万" in v},
        "immigration": {"targetCategories": lambda v: v == ["TTPS"], "timeline": lambda v: v == "尽快"},
        "family": {"maritalStatus": lambda v: v == "未知", "hasChildren": lambda v: v is None,
                   "familySupport": lambda v: v == "未知"},
    }, ("32", "浙江大学"), ("尚未",))


def test_memory_manager_scenario_3_summarize_en(api):
    _scenario_3(api, "en", {
        "basic": {"age": lambda v: "32" in v, "education": lambda v: "master" in v.lower(),
                  "university": lambda v: v == "Zhejiang University", "major": lambda v: "computer" in v.lower(),
                  "location": lambda v: v == "Hangzhou"},
        "career": {"jobTitle": lambda v: "frontend developer" in v.lower(), "industry": lambda v: v == "IT/Internet",
                   "yearsOfExperience": lambda v: "8" in v, "annualIncome": lambda v: "800,000" in v or "800000" in v},
        "immigration": {"targetCategories": lambda v: v == ["TTPS"],
                        "timeline": lambda v: "soon" in v.lower() or "asap" in v.lower()},
        "family": {"maritalStatus": lambda v: v == "unknown", "hasChildren": lambda v: v is None,
                   "familySupport": lambda v: v == "unknown"},
    }, ("32", "Zhejiang University"), ("not yet", "missing", "unknown"))


def _scenario_3_saved(api: Any, memories: list[tuple[str, str, str | None]], university: str,
                      timeline: tuple[str, ...]) -> None:
    for memory_type, content, category in memories:
        save(api, "u-s3s", memory_type, content, **({"category": category} if category else {}))
    body = summarize(api, "u-s3s")
    profile = body["user_profile"]
    assert "35" in str(profile["basic"].get("age", "")), profile
    assert profile["basic"].get("education") or profile["basic"].get("university"), profile
    assert university in str(profile["basic"].get("university", "")) + str(profile["basic"].get("education", ""))
    assert profile["immigration"].get("targetCategories") == ["TTPS"], profile
    assert any(word in str(profile["immigration"].get("timeline", "")).lower() for word in timeline), profile
    assert body["completeness"]["score"] > 0


def test_memory_manager_scenario_3_summarize_saved_memories_zh(api):
    # memory manager, example scenario 3, from memories saved through save_user_memory (no field given)
    _scenario_3_saved(api, [("FACT", "用户35岁", None), ("FACT", "本科毕业于浙江大学", None),
                            ("INTENT", "对高才通B类感兴趣", "TTPS"), ("PREFERENCE", "希望尽快办理", None)],
                      "浙江大学", ("尽快",))


def test_memory_manager_scenario_3_summarize_saved_memories_en(api):
    _scenario_3_saved(api, [("FACT", "User is 35 years old", None),
                            ("FACT", "Bachelor's degree from Zhejiang University", None),
                            ("INTENT", "Interested in TTPS Category B", "TTPS"),
                            ("PREFERENCE", "Wants it done as soon as possible", None)],
                      "Zhejiang University", ("soon", "asap"))
