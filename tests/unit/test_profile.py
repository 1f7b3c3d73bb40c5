"""The structured profile: deterministic from current memories, schema as data, cached by version."""

from __future__ import annotations

from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.profile.profile import ProfileField, ProfileSchema, build_profile, template_narrative
from agent_memory.services.summarize import SummarizeService
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t", user_id="u")


def fact(store, content, field, value=None, memory_type=MemoryType.FACT, category=None):
    store.save(USER, NewMemory(memory_type=memory_type, content=content, field=field, category=category,
                               metadata={"value": value} if value is not None else {}))


def test_profile_uses_only_current_memories_and_the_newest_value():
    store = InMemoryMemoryStore()
    fact(store, "用户32岁", "age", 32)
    fact(store, "用户33岁", "age", 33)
    fact(store, "对高才通B类感兴趣", "targetCategory", "TTPS", MemoryType.INTENT, "TTPS")
    fact(store, "对优才感兴趣", "targetCategory", "QMAS", MemoryType.INTENT, "QMAS")
    profile = build_profile(store.all_current(USER))
    assert profile.user_profile["basic"]["age"] == "33岁"
    # saved straight to the store under one slot, the newer value supersedes the older one
    assert profile.user_profile["immigration"]["targetCategories"] == ["QMAS"]
    # 2 of the 18 fields counted (company and family support count only once known)
    assert profile.completeness.score == round(100 * 2 / 18)
    assert "用户33岁" in template_narrative(profile)


def test_english_users_get_an_english_narrative():
    store = InMemoryMemoryStore()
    fact(store, "User is 41 years old", "age", 41)
    profile = build_profile(store.all_current(USER))
    assert profile.user_profile["basic"]["age"] == "41 years old"
    assert template_narrative(profile).startswith("Known about the user: age: 41 years old")


def test_a_deployment_brings_its_own_schema():
    schema = ProfileSchema(fields=[ProfileField(section="project", name="pi", memory_fields=["principalInvestigator"]),
                                   ProfileField(section="project", name="target", memory_fields=["enrollment"])])
    store = InMemoryMemoryStore()
    fact(store, "PI is Dr. Wang", "principalInvestigator", "Dr. Wang")
    profile = build_profile(store.all_current(USER), schema)
    assert profile.user_profile == {"project": {"pi": "Dr. Wang"}}
    assert profile.completeness.model_dump() == {"score": 50, "filled_fields": ["pi"], "missing_fields": ["target"]}


def test_an_unchanged_user_is_summarized_from_the_cache():
    store = InMemoryMemoryStore()
    fact(store, "用户32岁", "age", 32)
    calls = []
    service = SummarizeService(store=store, narrate=lambda: lambda p: calls.append(p) or "narrative")
    first = service.summarize(USER)
    assert service.summarize(USER) == first and len(calls) == 1
    fact(store, "目前在杭州", "currentLocation", "杭州")
    assert service.summarize(USER).profile.user_profile["basic"]["location"] == "杭州" and len(calls) == 2


def test_claude_writes_the_narrative_when_a_provider_is_configured():
    import json

    import httpx2

    from agent_memory.adapters.llm import build_narrator
    from agent_memory.settings import Settings

    requests = []

    def handler(request):
        requests.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": "用户33岁,目前在杭州。婚姻状况等信息尚未收集。"}],
            "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 20}})

    store = InMemoryMemoryStore()
    fact(store, "用户33岁", "age", 33)
    narrator = build_narrator(Settings(llm_provider="anthropic", anthropic_api_key="k"),
                              http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    output = SummarizeService(store=store, narrate=lambda: narrator).summarize(USER)

    assert output.narrative == "用户33岁,目前在杭州。婚姻状况等信息尚未收集。"
    body = requests[0]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert json.loads(body["messages"][0]["content"])["user_profile"]["basic"]["age"] == "33岁"


def saver(store):
    from agent_memory.services.save import SaveService

    return SaveService(store=store, extractor=lambda: None)  # type: ignore[arg-type,return-value]


def intent(content, category):
    return NewMemory(memory_type=MemoryType.INTENT, content=content, field="targetCategory", category=category)


def test_given_two_target_categories_then_both_are_kept_and_a_repeated_one_replaces_only_itself():
    store = InMemoryMemoryStore()
    save = saver(store)
    save.save(USER, intent("对高才通B类感兴趣", "TTPS"))
    save.save(USER, intent("对优才感兴趣", "QMAS"))
    save.save(USER, intent("高才通A类也可以考虑", "TTPS"))
    profile = build_profile(store.all_current(USER))
    assert sorted(profile.user_profile["immigration"]["targetCategories"]) == ["QMAS", "TTPS"]
    current = {m.field: m.content for m in store.all_current(USER)}
    assert current == {"targetCategory.TTPS": "高才通A类也可以考虑", "targetCategory.QMAS": "对优才感兴趣"}


def test_given_large_amounts_then_they_never_render_in_exponent_form():
    store = InMemoryMemoryStore()
    fact(store, "预算大概500万人民币", "investmentCapacity", 5_000_000, MemoryType.INTENT)
    fact(store, "用户32岁", "age", 32)
    profile = build_profile(store.all_current(USER))
    assert profile.user_profile["immigration"]["investmentCapacity"] == "预算大概500万人民币"
    schema = ProfileSchema(fields=[ProfileField(section="s", name="budget", memory_fields=["budget"])])
    for chinese_text, shown in (("预算五百万", "500万"), ("budget of five million", "5,000,000")):
        other = InMemoryMemoryStore()
        fact(other, chinese_text, "budget", 5_000_000)
        assert build_profile(other.all_current(USER), schema).user_profile["s"]["budget"] == shown
    assert "e+" not in template_narrative(profile)


def test_the_chinese_narrative_names_missing_fields_in_chinese():
    store = InMemoryMemoryStore()
    fact(store, "用户32岁", "age", 32)
    narrative = template_narrative(build_profile(store.all_current(USER)))
    assert narrative.endswith("等信息尚未收集。")
    assert not any(c.isascii() and c.isalpha() for c in narrative)


def test_the_english_narrative_lists_values_without_python_syntax():
    store = InMemoryMemoryStore()
    save = saver(store)
    save.save(USER, intent("Interested in the Top Talent Pass", "TTPS"))
    save.save(USER, intent("Also considering QMAS", "QMAS"))
    narrative = template_narrative(build_profile(store.all_current(USER)))
    assert "[" not in narrative and "'" not in narrative
    assert "target categories: " in narrative and "TTPS" in narrative and "QMAS" in narrative


# ---- the default schema: scenario 3's profile (a self-introduction, then an interest and a pace) ----

def scenario_3_memories(store):
    fact(store, "用户32岁", "age", 32)
    fact(store, "学历:硕士", "education", "硕士")
    fact(store, "毕业院校:浙江大学", "university", "浙江大学")
    fact(store, "专业:计算机", "major", "计算机")
    fact(store, "职位:前端开发", "currentJobTitle", "前端开发")
    fact(store, "工作8年", "totalYearsOfExperience", 8)
    fact(store, "年薪约80万人民币", "annualIncome", 800_000)
    fact(store, "目前在杭州", "currentLocation", "杭州")
    fact(store, "对高才通B类非常感兴趣", "targetCategory", "TTPS", MemoryType.INTENT, "TTPS")
    fact(store, "希望尽快办理", "immigrationTimeline", "尽快", MemoryType.PREFERENCE)


def test_given_scenario_3_then_eleven_fields_are_filled_and_seven_missing():
    store = InMemoryMemoryStore()
    scenario_3_memories(store)
    completeness = build_profile(store.all_current(USER)).completeness
    assert set(completeness.filled_fields) == {"age", "education", "university", "major", "location", "jobTitle",
                                               "industry", "yearsOfExperience", "annualIncome", "targetCategories",
                                               "timeline"}
    assert set(completeness.missing_fields) == {"nationality", "maritalStatus", "hasChildren", "languageSkills",
                                                "hasHKEmployer", "hasTechBackground", "investmentCapacity"}
    assert completeness.score == 61  # 11 of the 18 fields counted


def test_an_optional_field_counts_once_known_and_is_never_missing():
    store = InMemoryMemoryStore()
    scenario_3_memories(store)
    fact(store, "在阿里巴巴工作", "currentCompany", "阿里巴巴")
    completeness = build_profile(store.all_current(USER)).completeness
    assert "company" in completeness.filled_fields and completeness.score == round(100 * 12 / 19)
    assert "familySupport" not in completeness.missing_fields + completeness.filled_fields


def test_given_no_family_memory_then_the_family_section_answers_unknowns():
    store = InMemoryMemoryStore()
    fact(store, "用户32岁", "age", 32)
    assert build_profile(store.all_current(USER)).user_profile["family"] == {
        "maritalStatus": "未知", "hasChildren": None, "familySupport": "未知"}
    english = InMemoryMemoryStore()
    fact(english, "User is 41 years old", "age", 41)
    profile = build_profile(english.all_current(USER))
    assert profile.user_profile["family"] == {"maritalStatus": "unknown", "hasChildren": None,
                                              "familySupport": "unknown"}
    assert "unknown" not in template_narrative(profile)  # the narrative tells what is known


def test_a_known_family_field_is_answered_with_its_value():
    store = InMemoryMemoryStore()
    fact(store, "已婚", "maritalStatus", "已婚")
    fact(store, "有一个女儿", "hasChildren", True)
    family = build_profile(store.all_current(USER)).user_profile["family"]
    assert family == {"maritalStatus": "已婚", "hasChildren": True, "familySupport": "未知"}


def test_the_industry_is_inferred_from_the_job_title_in_the_users_language():
    for content, job, industry in (("职位:前端开发", "前端开发", "IT/互联网"),
                                   ("Works as a frontend developer", "frontend developer", "IT/Internet"),
                                   ("职位:执业律师", "执业律师", "法律"),
                                   ("Works as a secondary school teacher", "secondary school teacher", "Education")):
        store = InMemoryMemoryStore()
        fact(store, content, "currentJobTitle", job)
        profile = build_profile(store.all_current(USER))
        assert profile.user_profile["career"]["industry"] == industry, job
        assert "industry" in profile.completeness.filled_fields


def test_a_stated_industry_wins_over_the_inferred_one_and_an_unlisted_job_infers_none():
    store = InMemoryMemoryStore()
    fact(store, "职位:前端开发", "currentJobTitle", "前端开发")
    fact(store, "在银行业工作", "currentIndustry", "银行业")
    assert build_profile(store.all_current(USER)).user_profile["career"]["industry"] == "银行业"
    other = InMemoryMemoryStore()
    fact(other, "Works as an analyst", "currentJobTitle", "analyst")
    profile = build_profile(other.all_current(USER))
    assert "industry" not in profile.user_profile["career"] and "industry" in profile.completeness.missing_fields


def test_a_memory_under_a_former_field_name_fills_the_profile_under_the_current_name():
    store = InMemoryMemoryStore()
    fact(store, "有香港雇主", "hasHongKongEmployer", True)
    fact(store, "可投资3000万港币", "investmentAmount", 30_000_000, MemoryType.INTENT)
    assert {m.field for m in store.all_current(USER)} == {"hasHKEmployer", "investmentCapacity"}
    immigration = build_profile(store.all_current(USER)).user_profile["immigration"]
    assert immigration == {"hasHKEmployer": True, "investmentCapacity": "可投资3000万港币"}
