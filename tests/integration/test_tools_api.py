"""The tool routes over HTTP: GET /v1/tools and POST /v1/users/{user_id}/tools/execute, every tool."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

EXECUTE = "/v1/users/u-tools/tools/execute"


def run(api, name: str, arguments: dict, *, tenant: str = "acme") -> dict:
    response = api.call("POST", EXECUTE, {"type": "tool_use", "id": f"toolu_{name}", "name": name,
                                          "input": arguments}, tenant=tenant)
    assert response.status == 200, response.body
    assert response.body["type"] == "tool_result" and response.body["tool_use_id"] == f"toolu_{name}"
    return response.body


def test_the_catalogue_in_english_by_default_in_chinese_on_request_and_extended_on_request(api):
    english = api.call("GET", "/v1/tools").body
    chinese = api.call("GET", "/v1/tools", query="lang=zh&include=all").body

    assert [t["name"] for t in english["tools"]] == ["search_memories", "get_memory_detail", "save_user_memory",
                                                     "get_user_context"]
    assert "search_memories" in english["system_prompt"] and "你是" in chinese["system_prompt"]
    assert len(chinese["tools"]) == 9


def test_tools_are_served_with_the_system_prompt(api):
    body = api.call("GET", "/v1/tools").body
    assert [t["name"] for t in body["tools"]] == ["search_memories", "get_memory_detail", "save_user_memory",
                                                  "get_user_context"]
    assert "search_memories" in body["system_prompt"]


def test_given_an_unknown_language_then_422_naming_it(api):
    response = api.call("GET", "/v1/tools", query="lang=fr")
    assert response.status == 422 and response.body["error"]["details"][0]["field"] == "lang"


def test_every_tool_runs_through_the_executor(api):
    saved = json.loads(run(api, "save_user_memory",
                           {"memory_type": "FACT", "content": "用户在深圳做产品经理"})["content"])
    logged = json.loads(run(api, "log_message", {"conversation_id": "c1", "role": "user",
                                                 "content": "我们下周开始准备材料"})["content"])
    run(api, "set_hot_memory", {"type": "status", "key": "current_stage", "value": "材料准备", "priority": 5})

    found = json.loads(run(api, "search_memories", {"query": "深圳产品经理"})["content"])
    detail = json.loads(run(api, "get_memory_detail", {"memory_key": saved["memory_key"]})["content"])
    context = json.loads(run(api, "get_user_context", {"query": "工作"})["content"])
    hot = json.loads(run(api, "get_hot_memory", {})["content"])
    reports = json.loads(run(api, "search_reports", {"query": "材料"})["content"])
    profile = json.loads(run(api, "summarize_profile", {})["content"])

    assert logged["stored_count"] == 1
    assert saved["memory_key"] in [r["memory_key"] for r in found["results"]]
    assert detail["memory"]["content"] == "用户在深圳做产品经理"
    assert context["total_memories"] == 1
    assert [(e["key"], e["value"]) for e in hot["status"]] == [("current_stage", "材料准备")]
    assert reports["reports"] == []
    assert "completeness" in profile


def test_a_bad_argument_is_an_error_result_not_an_http_error(api):
    result = run(api, "set_hot_memory", {"type": "mood", "key": "k", "value": 1})

    assert result["is_error"] is True
    assert result["content"].startswith("invalid input: type:")


@pytest.mark.parametrize("block", [
    {"type": "tool_use", "name": "search_memories", "input": {}},  # no id: no tool_result can answer it
    {"type": "text", "id": "x", "name": "search_memories", "input": {}},
    {"type": "tool_use", "id": "x", "name": "search_memories", "input": "query"},
])
def test_a_body_that_is_not_a_tool_use_block_is_a_422(api, block):
    response = api.call("POST", EXECUTE, block)
    assert response.status == 422


def test_tool_calls_stay_in_their_tenant(api):
    run(api, "save_user_memory", {"memory_type": "FACT", "content": "acme 的秘密"})

    other = json.loads(run(api, "get_user_context", {"query": ""}, tenant="globex")["content"])

    assert other["total_memories"] == 0


def test_a_hot_memory_key_the_route_refuses_is_refused_by_the_tool_too(api):
    for key in ("a#b", "stage\u202e", "x" * 129):
        assert api.call("PUT", f"/v1/users/u-tools/hot-memory/status/{quote(key)}", {"value": 1}).status == 422
        assert run(api, "set_hot_memory", {"type": "status", "key": key, "value": 1})["is_error"] is True
