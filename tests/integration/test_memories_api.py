"""The HTTP API through the real handlers and the DynamoDB store (moto)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory.bootstrap import build_services
from agent_memory.errors import LlmUnavailable
from agent_memory.ports import ConversationTurn
from agent_memory.settings import get_settings

SELF_INTRODUCTION = "我今年32岁，浙大计算机硕士毕业的，现在在杭州做前端开发，工作8年了，年薪大概80万"
USER = "/v1/users/u-1001"


def memories_of(api, tenant: str = "acme", user: str = "u-1001") -> list[dict[str, Any]]:
    response = api.call("GET", f"/v1/users/{user}/memories", tenant=tenant, query="limit=100")
    assert response.status == 200
    return response.body["items"]


def test_extract_a_self_introduction_then_supersede_age(api):
    extracted = api.call("POST", f"{USER}/memories/extract", {
        "action": "save_info", "userMessage": SELF_INTRODUCTION, "assistantMessage": "感谢您分享这些信息!",
        "existingInfo": {},
    })

    assert extracted.status == 200
    body = extracted.body
    assert set(body) == {"action", "extracted_info", "saved_count", "saved_memories", "skipped_fields"}
    assert body["action"] == "save_info"
    info = body["extracted_info"]
    assert info["age"] == 32 and info["education"] == "硕士" and info["university"] in ("浙江大学", "浙大")
    assert info["major"] == "计算机" and info["currentJobTitle"] == "前端开发"
    assert info["totalYearsOfExperience"] == 8 and info["annualIncome"] == 800000
    assert info["currentLocation"] == "杭州"
    assert body["saved_count"] == len(body["saved_memories"]) >= 8
    assert all(set(m) == {"memoryType", "content", "field"} for m in body["saved_memories"])
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in m["content"]) for m in body["saved_memories"])
    assert body["skipped_fields"] == []

    older = api.call("POST", f"{USER}/memories/extract", {"user_message": "我今年33岁"})
    assert [m["field"] for m in older.body["saved_memories"]] == ["age"]

    loaded = api.call("POST", f"{USER}/context/load", {"query": "用户的年龄和背景", "limit": 20})
    contents = [m["content"] for m in loaded.body["memories"]]
    assert any("33" in c for c in contents) and not any("32岁" in c for c in contents)
    assert loaded.body["total_memories"] == body["saved_count"]
    assert "33" in loaded.body["user_profile_summary"]

    age = next(m for m in memories_of(api) if m["field"] == "age")
    detail = api.call("GET", f"{USER}/memories/{age['memory_key']}")
    assert detail.body["history"][0]["content"] == "用户32岁"
    assert detail.body["history"][0]["superseded_by"] == age["memory_key"]
    assert [m["version"] for m in detail.body["history"]] == [1, 2]  # the field's versions, oldest first


def test_repeating_a_turn_stores_nothing_and_reports_skipped_fields(api):
    api.call("POST", f"{USER}/memories/extract", {"user_message": SELF_INTRODUCTION})
    again = api.call("POST", f"{USER}/memories/extract", {"user_message": SELF_INTRODUCTION})

    assert again.status == 200
    assert again.body["saved_count"] == 0
    assert {"age", "education", "currentLocation"} <= set(again.body["skipped_fields"])


def test_existing_info_fields_are_skipped_not_reextracted(api):
    response = api.call("POST", f"{USER}/memories/extract", {
        "user_message": SELF_INTRODUCTION, "existing_info": {"age": 32, "currentLocation": "杭州"},
    })
    assert {"age", "currentLocation"} <= set(response.body["skipped_fields"])
    assert "age" not in response.body["extracted_info"]
    assert all(m["field"] not in ("age", "currentLocation") for m in response.body["saved_memories"])


def test_create_duplicate_and_supersede_directly(api):
    created = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户32岁", "field": "age"})
    assert created.status == 201 and created.body["outcome"] == "created"
    assert created.body["memory"]["importance"] == 70

    duplicate = api.call("POST", f"{USER}/memories", {"memory_type": "FACT", "content": "用户 32岁", "field": "age"})
    assert duplicate.status == 200
    assert duplicate.body["outcome"] == "duplicate" and duplicate.body["skipped_fields"] == ["age"]

    newer = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户33岁", "field": "age"})
    assert newer.status == 201
    assert newer.body["superseded"]["memory_key"] == created.body["memory"]["memory_key"]
    assert [m["content"] for m in memories_of(api)] == ["用户33岁"]


def test_two_facts_about_one_scheme_both_stay_current_and_only_a_stated_interest_fills_its_slot(api):
    materials = api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "高才通申请材料已准备好",
                                                       "category": "TTPS"})
    fee = api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "高才通申请费已经缴纳",
                                                 "category": "TTPS"})

    assert (materials.body["outcome"], fee.body["outcome"]) == ("created", "created")
    assert sorted(m["content"] for m in memories_of(api)) == ["高才通申请材料已准备好", "高才通申请费已经缴纳"]
    interest = api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "我对高才通很感兴趣",
                                                      "category": "TTPS"})
    assert interest.body["outcome"] == "created" and interest.body["memory"]["field"] == "targetCategory.TTPS"
    again = api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "我准备申请高才通B类",
                                                   "category": "TTPS"})
    assert again.body["outcome"] == "superseded"
    assert again.body["superseded"]["memory_key"] == interest.body["memory"]["memory_key"]


def test_a_memory_saved_with_a_conversation_id_reaches_the_profile_and_a_transcript_turn_does_not(api):
    saved = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户在香港有雇主",
                                                   "conversationId": "conv-7"})
    assert saved.status == 201
    assert saved.body["memory"]["source"] == "conversation"
    assert saved.body["memory"]["field"] == "hasHongKongEmployer"
    immigration = api.call("POST", f"{USER}/profile/summarize", {}).body["user_profile"]["immigration"]
    assert immigration["hasHongKongEmployer"] is True
    newer = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户在香港没有雇主",
                                                   "conversationId": "conv-8"})
    assert newer.body["outcome"] == "superseded"

    turn = api.call("POST", "/v1/users/u-2002/memories", {"memoryType": "FACT", "content": "Caroline: I'm 29",
                                                         "conversationId": "conv-7", "source": "transcript"})
    assert turn.body["memory"]["source"] == "transcript" and turn.body["memory"]["field"] is None
    plain = api.call("POST", "/v1/users/u-2002/memories", {"memoryType": "FACT", "content": "Likes tea"})
    assert plain.body["memory"]["source"] == "api"


def test_a_restatement_answers_merged_with_the_kept_memory_in_save_batch_and_extract(api):
    kept = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "Is allergic to peanuts"})
    key = kept.body["memory"]["memory_key"]

    merged = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "I'm allergic to peanuts."})
    assert merged.status == 200 and merged.body["outcome"] == "merged"
    assert merged.body["memory"]["memory_key"] == key and merged.body["skipped_fields"] == [""]

    batch = api.call("POST", f"{USER}/memories/batch", {"memories": [
        {"memoryType": "FACT", "content": "Allergic to peanuts!"},
        {"memoryType": "FACT", "content": "Is allergic to shellfish"}]})
    assert batch.status == 201 and batch.body["saved_count"] == 1
    assert [r["outcome"] for r in batch.body["results"]] == ["merged", "created"]
    assert batch.body["memory_keys"][0] == key

    extracted = api.call("POST", f"{USER}/memories/extract", {"user_message": "I am allergic to peanuts"})
    assert extracted.body["saved_count"] == 0 and extracted.body["skipped_fields"] == ["allergy"]
    assert sorted(m["content"] for m in memories_of(api)) == ["Is allergic to peanuts", "Is allergic to shellfish"]


def test_batch_saves_in_order_with_import_timestamps(api):
    response = api.call("POST", f"{USER}/memories/batch", {"memories": [
        {"memoryType": "FACT", "content": "用户32岁", "field": "age", "createdAt": "2026-02-05T10:00:00Z"},
        {"memoryType": "PREFERENCE", "content": "希望尽快办理", "created_at": "2026-02-05T10:01:00+08:00"},
        {"memoryType": "FACT", "content": "用户33岁", "field": "age", "createdAt": "2026-11-01T10:00:00Z"},
    ]})

    assert response.status == 201
    assert response.body["saved_count"] == 3 and len(response.body["memory_keys"]) == 3
    assert [r["outcome"] for r in response.body["results"]] == ["created", "created", "superseded"]
    current = {m["content"]: m for m in memories_of(api)}
    assert set(current) == {"希望尽快办理", "用户33岁"}
    assert current["希望尽快办理"]["created_at"] == "2026-02-05T02:01:00Z"


@pytest.mark.parametrize("path", ["/v1/users/u-1001/reports?limit=-1", "/v1/users/u-1001/hot-memory?bogus=1",
                                  "/v1/users/u-1001/memories/mem_x?full=1"])
def test_a_route_that_takes_no_query_parameters_refuses_them_by_name(api, path):
    route, _, query = path.partition("?")
    response = api.call("GET", route, query=query)
    assert response.status == 422
    assert response.body["error"]["details"][0]["field"] == query.split("=")[0]


def test_a_get_of_a_post_only_route_under_memories_says_to_post(api):
    response = api.call("GET", f"{USER}/memories/search")
    assert response.status == 422
    assert response.body["error"]["details"][0]["field"] == "memory_key"
    assert "takes POST" in response.body["error"]["details"][0]["message"]


def test_delete_removes_the_memory_and_bumps_nothing_else(api):
    key = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "已婚", "field": "maritalStatus"}
                   ).body["memory"]["memory_key"]
    deleted = api.call("DELETE", f"{USER}/memories/{key}")
    assert deleted.status == 200 and deleted.body == {"deleted": True, "memory_key": key}
    read, again = api.call("GET", f"{USER}/memories/{key}"), api.call("DELETE", f"{USER}/memories/{key}")
    assert read.status == again.status == 404
    assert read.body["error"]["details"] == again.body["error"]["details"] == [{"field": "memory_key"}]


def test_list_paginates_and_filters_by_type(api):
    api.call("POST", f"{USER}/memories/batch", {"memories": [
        {"memoryType": "FACT" if i % 2 else "INTENT", "content": f"memory {i}"} for i in range(9)]})
    seen, cursor = [], None
    while True:
        query = "memory_type=INTENT&limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = api.call("GET", f"{USER}/memories", query=query).body
        seen += [m["content"] for m in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == ["memory 8", "memory 6", "memory 4", "memory 2", "memory 0"]


def test_another_tenant_with_the_same_user_id_sees_and_changes_nothing(api):
    key = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户32岁", "field": "age"}
                   ).body["memory"]["memory_key"]

    assert memories_of(api, tenant="other-co") == []
    assert api.call("GET", f"{USER}/memories/{key}", tenant="other-co").status == 404
    assert api.call("DELETE", f"{USER}/memories/{key}", tenant="other-co").status == 404
    loaded = api.call("POST", f"{USER}/context/load", {"query": "年龄"}, tenant="other-co")
    assert loaded.body["total_memories"] == 0 and loaded.body["memories"] == []
    assert len(memories_of(api)) == 1


def test_tenant_comes_from_the_token_never_from_the_body(api):
    response = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "x", "tenantId": "victim"})
    assert response.status == 422 and response.body["error"]["details"][0]["field"] == "tenantId"


def test_a_request_without_a_tenant_claim_is_unauthorized(api):
    response = api.call("GET", f"{USER}/memories", tenant=None)
    assert response.status == 401 and response.body["error"]["code"] == "unauthorized"


BIG = "长" * 3000  # 9,000 UTF-8 bytes


@pytest.mark.parametrize(
    ("path", "body", "raw", "status", "field"),
    [
        ("/memories", None, b"{not json", 400, "body"),
        ("/memories", None, b"", 400, "body"),
        ("/memories", None, b"[1, 2]", 422, "body"),
        ("/memories", {"memoryType": "FACT", "content": 42}, None, 422, "content"),
        ("/memories", {"memoryType": "OPINION", "content": "x"}, None, 422, "memoryType"),
        ("/memories", {"memoryType": "FACT", "content": "   "}, None, 422, "content"),
        ("/memories", {"memoryType": "FACT", "content": BIG}, None, 422, "content"),
        ("/memories", {"memoryType": "FACT"}, None, 422, "content"),
        ("/memories", {"memoryType": "FACT", "content": "x", "importance": 101}, None, 422, "importance"),
        ("/memories", {"memoryType": "FACT", "content": "x", "field": "bad field!"}, None, 422, "field"),
        ("/memories", {"memoryType": "FACT", "content": "x", "createdAt": "2026-02-05T10:00:00"}, None, 422,
         "createdAt"),
        ("/memories", {"memoryType": "FACT", "content": "x", "unknown": 1}, None, 422, "unknown"),
        ("/memories", None, json.dumps({"memoryType": "FACT", "content": "x" * 300_000}).encode(), 413, "body"),
        ("/memories/batch", {"memories": []}, None, 422, "memories"),
        ("/memories/batch", {"memories": [{"memoryType": "FACT", "content": f"m{i}"} for i in range(101)]}, None,
         422, "memories"),
        ("/memories/batch", {"memories": [{"memoryType": "FACT", "content": "good"},
                                          {"memoryType": "FACT", "content": ""}]}, None, 422, "memories.1.content"),
        ("/memories/extract", {"userMessage": ""}, None, 422, "userMessage"),
        ("/memories/extract", {"assistant_message": "hi"}, None, 422, "userMessage"),
        ("/memories/extract", {"user_message": "x", "existing_info": "age=32"}, None, 422, "existing_info"),
        ("/context/load", {"query": "x", "limit": 0}, None, 422, "limit"),
    ],
)
def test_bad_input_gets_a_4xx_naming_the_field_and_writes_nothing(api, path, body, raw, status, field):
    response = api.call("POST", f"{USER}{path}", body, raw_body=raw)

    assert response.status == status
    error = response.body["error"]
    assert set(error) == {"code", "message", "details"}
    assert field in [d["field"] for d in error["details"]]
    assert field in error["message"] or status in (400, 413)
    assert memories_of(api) == []


@pytest.mark.parametrize(
    ("method", "path", "field"),
    [
        ("GET", "/v1/users/bad%20user/memories", "user_id"),
        ("GET", f"/v1/users/{'u' * 129}/memories", "user_id"),
        ("GET", "/v1/users/u-1001/memories/not-a-key", "memory_key"),
        ("DELETE", "/v1/users/u-1001/memories/mem_x", "memory_key"),
    ],
)
def test_bad_path_parameters_are_rejected(api, method, path, field):
    response = api.call(method, path)
    assert response.status == 422
    assert response.body["error"]["details"][0]["field"] == field


def test_bad_query_parameters_are_rejected(api):
    assert api.call("GET", f"{USER}/memories", query="limit=1000").body["error"]["details"][0]["field"] == "limit"
    assert api.call("GET", f"{USER}/memories", query="cursor=zzz").status == 422
    assert api.call("GET", f"{USER}/memories", query="memory_type=NOPE").status == 422


def test_unknown_routes_get_a_json_404(api):
    response = api.call("GET", "/v1/nothing/here")
    assert response.status == 404 and response.body["error"]["code"] == "route_not_found"


def test_summarize_builds_the_profile_from_a_self_introduction(api):
    api.call("POST", f"{USER}/memories/extract", {"user_message": SELF_INTRODUCTION})
    api.call("POST", f"{USER}/memories/extract", {"user_message": "我对高才通B类非常感兴趣，希望尽快办理"})

    response = api.call("POST", f"{USER}/profile/summarize", {"action": "summarize"})

    assert response.status == 200
    body = response.body
    assert set(body) == {"action", "user_profile", "completeness", "narrative_summary"}
    profile = body["user_profile"]
    assert set(profile) == {"basic", "career", "immigration", "family"}
    assert profile["basic"]["age"] == "32岁" and profile["basic"]["university"] == "浙江大学"
    assert profile["basic"]["location"] == "杭州" and profile["career"]["jobTitle"] == "前端开发"
    assert profile["career"]["yearsOfExperience"] == "8年" and "80万" in profile["career"]["annualIncome"]
    assert profile["immigration"]["targetCategories"] == ["TTPS"] and profile["immigration"]["timeline"] == "尽快"
    completeness = body["completeness"]
    assert {"age", "education", "jobTitle", "targetCategories"} <= set(completeness["filled_fields"])
    assert {"nationality", "maritalStatus", "hasChildren"} <= set(completeness["missing_fields"])
    filled, missing = len(completeness["filled_fields"]), len(completeness["missing_fields"])
    assert completeness["score"] == round(100 * filled / (filled + missing))
    assert "32岁" in body["narrative_summary"] and "杭州" in body["narrative_summary"]
    assert api.call("POST", f"{USER}/profile/summarize", raw_body=b"{bad").status == 400


class _DownExtractor:
    def extract(self, turn: ConversationTurn):
        raise LlmUnavailable("the LLM is unavailable; nothing was stored, retry this turn")


class _BrokenStore:
    def __getattr__(self, name: str):
        def fail(*args: object, **kwargs: object):
            raise RuntimeError("disk on fire: secret detail")
        return fail


def test_llm_down_gives_503_with_retry_after_and_stores_nothing(api, monkeypatch, lambda_env):
    services = build_services(get_settings(), extractor=_DownExtractor(), dynamodb_client=lambda_env)
    monkeypatch.setattr("agent_memory.bootstrap.get_services", lambda: services)
    monkeypatch.setitem(api.functions.container("SaveFunction").__dict__, "get_services", lambda: services)

    response = api.call("POST", f"{USER}/memories/extract", {"user_message": SELF_INTRODUCTION})

    assert response.status == 503
    assert response.body["error"]["code"] == "llm_unavailable"
    assert response.headers["retry-after"] == "5"
    assert memories_of(api) == []


def test_unexpected_failure_is_a_500_with_request_id_and_no_details(api, monkeypatch, lambda_env):
    services = build_services(get_settings(), store=_BrokenStore())
    monkeypatch.setitem(api.functions.container("LoadFunction").__dict__, "get_services", lambda: services)

    response = api.call("GET", f"{USER}/memories")

    assert response.status == 500
    assert response.body["error"]["code"] == "internal_error"
    assert response.body["error"]["details"]["request_id"]
    assert "disk on fire" not in json.dumps(response.body)
