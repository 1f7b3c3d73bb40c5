"""Requests the API refuses: a 4xx naming the field (body, path or query parameter), a JSON 404 for an unknown
route, and nothing written."""

from __future__ import annotations

import json

import pytest

from tests.fakes.api_calls import memories_of

USER = "/v1/users/u-1001"


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
        ("/memories/extract", {"assistant_message": "hi"}, None, 422, "user_message"),
        ("/memories/extract", {"assistantMessage": "hi"}, None, 422, "userMessage"),
        ("/memories", {"content": "x"}, None, 422, "memory_type"),
        ("/memories/batch", {"memories": [{"content": "x", "conversation_id": "c-1"}]}, None, 422,
         "memories.0.memory_type"),
        ("/memories/batch", {"memories": [{"content": "x", "conversationId": "c-1"}]}, None, 422,
         "memories.0.memoryType"),
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
