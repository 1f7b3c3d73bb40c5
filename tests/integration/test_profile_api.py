"""The profile over HTTP (real handlers, moto): field names, completeness, unknowns and the inferred industry."""

from __future__ import annotations

import json
from typing import Any

from agent_memory.adapters.dynamodb.items import memory_to_item, to_item
from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef, new_memory_version
from local.runtime import table_names

SELF_INTRODUCTION = "我今年32岁,浙大计算机硕士毕业的,现在在杭州做前端开发,工作8年了,年薪大概80万"
INTEREST = "我对高才通B类非常感兴趣,希望尽快办理,时间越短越好"


def path(user: str) -> str:
    return f"/v1/users/{user}"


def test_given_the_former_field_names_then_saves_and_existing_info_take_them_and_answers_use_the_current_ones(api):
    employer = api.call(
        "POST",
        f"{path('u-names')}/memories",
        {"memoryType": "FACT", "content": "用户在香港有雇主", "field": "hasHongKongEmployer",
         "metadata": {"value": True}},
    )
    amount = api.call(
        "POST",
        f"{path('u-names')}/memories",
        {"memoryType": "INTENT", "content": "可投资3000万港币", "field": "investmentAmount"},
    )
    assert (employer.status, amount.status) == (201, 201)
    assert (employer.body["memory"]["field"], amount.body["memory"]["field"]) == (
        "hasHKEmployer",
        "investmentCapacity",
    )
    # the current name's slot: a newer statement under the current name supersedes the one saved under the former
    newer = api.call(
        "POST",
        f"{path('u-names')}/memories",
        {
            "memoryType": "FACT",
            "content": "用户在香港没有雇主",
            "field": "hasHKEmployer",
            "metadata": {"value": False},
        },
    )
    assert newer.body["outcome"] == "superseded"

    said = api.call(
        "POST",
        f"{path('u-names')}/memories/extract",
        {"userMessage": "没有", "assistantMessage": "您目前有香港雇主吗?",
         "existingInfo": {"hasHongKongEmployer": False}},
    )
    assert said.body["skipped_fields"] == ["hasHKEmployer"] and said.body["saved_count"] == 0

    summary = api.call("POST", f"{path('u-names')}/profile/summarize", {})
    assert summary.body["user_profile"]["immigration"] == {
        "hasHKEmployer": False,
        "investmentCapacity": "可投资3000万港币",
    }
    answered = json.dumps([summary.body, employer.body, amount.body, said.body])
    assert "hasHongKongEmployer" not in answered and "investmentAmount" not in answered


def _store_under_former_name(dynamodb: Any, user: ScopeRef, field: str, content: str, value: Any) -> str:
    """A memory as it was stored under a field's former name, with the field's pointer under that name."""
    memory = new_memory_version(
        user, NewMemory(memory_type=MemoryType.FACT, content=content, metadata={"value": value}), new_memory_key(), None
    )
    item = memory_to_item(memory)
    item["field"] = {"S": field}
    pk = item["pk"]["S"]
    table = table_names()["MemoryTable"]
    dynamodb.put_item(TableName=table, Item=item)
    dynamodb.put_item(
        TableName=table,
        Item=to_item({"pk": pk, "sk": f"FIELD#{field}", "kind": "field", "memory_key": memory.memory_key}),
    )
    dynamodb.put_item(
        TableName=table,
        Item=to_item(
            {"pk": pk, "sk": f"HASH#{memory.content_hash}", "kind": "content", "memory_key": memory.memory_key}
        ),
    )
    return memory.memory_key


def test_given_a_memory_stored_under_a_former_field_name_then_it_is_read_under_the_current_one(api, lambda_env):
    key = _store_under_former_name(
        lambda_env, ScopeRef(tenant_id="acme", user_id="u-former"), "hasHongKongEmployer", "用户在香港有雇主", True
    )
    listed = api.call("GET", f"{path('u-former')}/memories").body["items"]
    assert [(m["memory_key"], m["field"]) for m in listed] == [(key, "hasHKEmployer")]
    summary = api.call("POST", f"{path('u-former')}/profile/summarize", {}).body
    assert summary["user_profile"]["immigration"]["hasHKEmployer"] is True
    assert "hasHKEmployer" in summary["completeness"]["filled_fields"]
    deleted = api.call("DELETE", f"{path('u-former')}/memories/{key}")
    assert deleted.status == 200, deleted.body
    assert api.call("GET", f"{path('u-former')}/memories").body["items"] == []


def test_given_scenario_3_then_the_profile_has_eleven_fields_the_industry_and_the_family_unknowns(api):
    api.call("POST", f"{path('u-s3')}/memories/extract", {"userMessage": SELF_INTRODUCTION, "conversationId": "c1"})
    api.call("POST", f"{path('u-s3')}/memories/extract", {"userMessage": INTEREST, "conversationId": "c2"})

    body = api.call("POST", f"{path('u-s3')}/profile/summarize", {"action": "summarize"}).body

    assert body["user_profile"]["career"]["industry"] == "IT/互联网"
    assert body["user_profile"]["family"] == {"maritalStatus": "未知", "hasChildren": None, "familySupport": "未知"}
    completeness = body["completeness"]
    assert set(completeness["filled_fields"]) == {
        "age",
        "education",
        "university",
        "major",
        "location",
        "jobTitle",
        "industry",
        "yearsOfExperience",
        "annualIncome",
        "targetCategories",
        "timeline",
    }
    assert set(completeness["missing_fields"]) == {
        "nationality",
        "maritalStatus",
        "hasChildren",
        "languageSkills",
        "hasHKEmployer",
        "hasTechBackground",
        "investmentCapacity",
    }
    assert completeness["score"] == 61  # 11 of the 18 fields counted
    assert "未知" not in body["narrative_summary"]


def test_given_an_english_frontend_developer_then_the_industry_is_it_and_family_unknowns_are_english(api):
    api.call(
        "POST",
        f"{path('u-en')}/memories/extract",
        {"userMessage": "I'm 32 and I work as a frontend developer in Hangzhou"},
    )
    profile = api.call("POST", f"{path('u-en')}/profile/summarize", {}).body["user_profile"]
    assert profile["career"]["industry"] == "IT/Internet"
    assert profile["family"] == {"maritalStatus": "unknown", "hasChildren": None, "familySupport": "unknown"}
