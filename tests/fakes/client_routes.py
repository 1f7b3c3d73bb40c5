"""Every method of the Python client, once: the call, and the request it must make (method, path, query and
body). The sync and the async client tests run the same table."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

RECENT = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
HOT_KEY = "签证类型"  # Chinese keys travel as percent-encoded UTF-8
HOT_KEY_ENCODED = "%E7%AD%BE%E8%AF%81%E7%B1%BB%E5%9E%8B"
KEY = "mem_01J0000000000000000000000A"


@dataclass(frozen=True)
class Case:
    """A method call, and the request it must make. `template` is the route as the OpenAPI document names it."""

    name: str
    call: Callable[[Any], Any]  # works on MemoryClient and (awaited) on AsyncMemoryClient
    method: str
    template: str
    path: str  # as sent, percent-encoded, after the base URL's path
    body: Any = None
    params: dict[str, str] = field(default_factory=dict)


LOGGED = {"role": "user", "content": "你好，我想了解香港身份", "message_id": "m-1", "created_at": RECENT.isoformat()}
EXPORTED = {"format": "agent-memory-export", "version": 1, "hot_memory": [
    {"type": "status", "key": HOT_KEY, "value": "材料已递交", "created_at": "2026-03-03T08:00:00Z",
     "updated_at": "2026-03-03T08:00:00Z"}]}
TOOL_USE = {"type": "tool_use", "id": "toolu_01", "name": "search_memories", "input": {"query": "年龄"}}

CASES = [
    Case("save", lambda c: c.save(
        "u-1", memory_type="FACT", content="用户32岁，在杭州做前端开发", category="basic", field="age", importance=80,
        keywords=["年龄", {"term": "age", "weight": 0.5}], metadata={"origin": "import"}, created_at=RECENT,
        context="你多大了？"),
        "POST", "/v1/users/{user_id}/memories", "/v1/users/u-1/memories",
        {"memory_type": "FACT", "content": "用户32岁，在杭州做前端开发", "category": "basic", "field": "age",
         "importance": 80, "keywords": [{"term": "年龄"}, {"term": "age", "weight": 0.5}],
         "metadata": {"origin": "import"}, "created_at": RECENT.isoformat(), "context": "你多大了？"}),
    Case("save_batch", lambda c: c.save_batch("u-1", [
        {"memory_type": "FACT", "content": "住在杭州", "keywords": ["杭州"]},
        {"memory_type": "PREFERENCE", "content": "Prefers email", "conversation_id": "c-1"}]),
        "POST", "/v1/users/{user_id}/memories/batch", "/v1/users/u-1/memories/batch",
        {"memories": [{"memory_type": "FACT", "content": "住在杭州", "keywords": [{"term": "杭州"}]},
                      {"memory_type": "PREFERENCE", "content": "Prefers email", "conversation_id": "c-1"}]}),
    Case("extract", lambda c: c.extract("u-1", "我今年35岁", "好的，记下了", existing_info={"age": 34},
                                        conversation_id="c-1"),
         "POST", "/v1/users/{user_id}/memories/extract", "/v1/users/u-1/memories/extract",
         {"user_message": "我今年35岁", "assistant_message": "好的，记下了", "existing_info": {"age": 34},
          "conversation_id": "c-1"}),
    Case("delete_memory", lambda c: c.delete_memory("u-1", KEY),
         "DELETE", "/v1/users/{user_id}/memories/{memory_key}", f"/v1/users/u-1/memories/{KEY}"),
    Case("delete_memory", lambda c: c.delete_memory("u-1", KEY, purge=True),
         "DELETE", "/v1/users/{user_id}/memories/{memory_key}", f"/v1/users/u-1/memories/{KEY}",
         params={"purge": "true"}),
    Case("get_memory", lambda c: c.get_memory("u-1", KEY),
         "GET", "/v1/users/{user_id}/memories/{memory_key}", f"/v1/users/u-1/memories/{KEY}"),
    Case("list_memories", lambda c: c.list_memories("u-1", memory_type="FACT", limit=10, cursor="abc"),
         "GET", "/v1/users/{user_id}/memories", "/v1/users/u-1/memories",
         params={"memory_type": "FACT", "limit": "10", "cursor": "abc"}),
    Case("search", lambda c: c.search(
        "u-1", "年龄", search_mode="hybrid", keywords=["age"], memory_types=["FACT", "PREFERENCE"],
        time_range=(RECENT - timedelta(days=7), RECENT.isoformat()), limit=5, min_relevance_score=0.5,
        as_of=RECENT - timedelta(days=1)),
        "POST", "/v1/users/{user_id}/memories/search", "/v1/users/u-1/memories/search",
        {"query": "年龄", "search_mode": "hybrid", "keywords": ["age"], "memory_types": ["FACT", "PREFERENCE"],
         "time_range": [(RECENT - timedelta(days=7)).isoformat(), RECENT.isoformat()], "limit": 5,
         "min_relevance_score": 0.5, "as_of": (RECENT - timedelta(days=1)).isoformat()}),
    Case("recall", lambda c: c.recall("u-1", "我适合高才通吗？", context_type="command", history=["你好"], limit=3,
                                      min_relevance_score=0.6),
         "POST", "/v1/users/{user_id}/memories/recall", "/v1/users/u-1/memories/recall",
         {"message": "我适合高才通吗？", "context_type": "command", "history": ["你好"], "limit": 3,
          "min_relevance_score": 0.6}),
    Case("resolve_placeholders", lambda c: c.resolve_placeholders("u-1", "年龄: [memory:mem_1:meta:age]"),
         "POST", "/v1/users/{user_id}/memories/resolve", "/v1/users/u-1/memories/resolve",
         {"text": "年龄: [memory:mem_1:meta:age]"}),
    Case("load_context", lambda c: c.load_context("u-1", "签证", limit=10, as_of="2026-02-05T10:00:00Z"),
         "POST", "/v1/users/{user_id}/context/load", "/v1/users/u-1/context/load",
         {"query": "签证", "limit": 10, "as_of": "2026-02-05T10:00:00Z"}),
    Case("summarize", lambda c: c.summarize("u-1", as_of="2026-02-05T10:00:00+08:00"),
         "POST", "/v1/users/{user_id}/profile/summarize", "/v1/users/u-1/profile/summarize",
         {"as_of": "2026-02-05T10:00:00+08:00"}),
    Case("inject", lambda c: c.inject({"user_id": "u-1", "conversation_id": "c-1", "max_context_tokens": 8000},
                                      messages=[{"role": "user", "content": "你好"}], max_context_tokens=32000),
         "POST", "/v1/context/inject", "/v1/context/inject",
         {"user_id": "u-1", "conversation_id": "c-1", "max_context_tokens": 32000,
          "messages": [{"role": "user", "content": "你好"}]}),
    Case("log", lambda c: c.log("users", "u-1", "c-1", [LOGGED], extract=True),
         "POST", "/v1/{scope_type}/{scope_id}/conversations/{conversation_id}/messages",
         "/v1/users/u-1/conversations/c-1/messages", {"messages": [LOGGED], "extract": True}),
    Case("search_conversations", lambda c: c.search_conversations(
        "projects", "p-1", "签证进度", conversation_id="c-1", role="user", intent="QA_QUERY",
        time_range=(RECENT - timedelta(days=1), RECENT), limit=3),
        "POST", "/v1/{scope_type}/{scope_id}/conversations/search", "/v1/projects/p-1/conversations/search",
        {"query": "签证进度", "conversation_id": "c-1", "role": "user", "intent": "QA_QUERY",
         "time_range": [(RECENT - timedelta(days=1)).isoformat(), RECENT.isoformat()], "limit": 3}),
    Case("get_hot_memory", lambda c: c.get_hot_memory("projects", "p-1"),
         "GET", "/v1/{scope_type}/{scope_id}/hot-memory", "/v1/projects/p-1/hot-memory"),
    Case("set_hot_memory", lambda c: c.set_hot_memory("users", "u-1", "decision", HOT_KEY, {"选择": "高才通"},
                                                      priority=10),
         "PUT", "/v1/{scope_type}/{scope_id}/hot-memory/{memory_type}/{key}",
         f"/v1/users/u-1/hot-memory/decision/{HOT_KEY_ENCODED}", {"value": {"选择": "高才通"}, "priority": 10}),
    Case("delete_hot_memory", lambda c: c.delete_hot_memory("users", "u-1", "decision", HOT_KEY),
         "DELETE", "/v1/{scope_type}/{scope_id}/hot-memory/{memory_type}/{key}",
         f"/v1/users/u-1/hot-memory/decision/{HOT_KEY_ENCODED}"),
    Case("refresh_hot_memory", lambda c: c.refresh_hot_memory("projects", "p-1"),
         "POST", "/v1/{scope_type}/{scope_id}/hot-memory/refresh", "/v1/projects/p-1/hot-memory/refresh"),
    Case("list_reports", lambda c: c.list_reports("users", "u-1"),
         "GET", "/v1/{scope_type}/{scope_id}/reports", "/v1/users/u-1/reports"),
    Case("search_reports", lambda c: c.search_reports("projects", "p-1", "进度", limit=2),
         "POST", "/v1/{scope_type}/{scope_id}/reports/search", "/v1/projects/p-1/reports/search",
         {"query": "进度", "limit": 2}),
    Case("intent_context", lambda c: c.intent_context("projects", "p-1", "QA_QUERY", query="签证进度", max_tokens=500),
         "POST", "/v1/{scope_type}/{scope_id}/context/intent", "/v1/projects/p-1/context/intent",
         {"intent": {"type": "QA_QUERY", "query": "签证进度"}, "max_tokens": 500}),
    Case("add_synonyms", lambda c: c.add_synonyms("TTPS", ["高才通", "top talent pass scheme"], similarity_score=0.9),
         "POST", "/v1/synonyms", "/v1/synonyms",
         {"keyword": "TTPS", "synonyms": ["高才通", "top talent pass scheme"], "similarity_score": 0.9}),
    Case("get_synonyms", lambda c: c.get_synonyms("高才通"),
         "GET", "/v1/synonyms", "/v1/synonyms", params={"keyword": "高才通"}),
    Case("tools", lambda c: c.tools(lang="zh", include="all"),
         "GET", "/v1/tools", "/v1/tools", params={"lang": "zh", "include": "all"}),
    Case("execute_tool", lambda c: c.execute_tool("u-1", TOOL_USE),
         "POST", "/v1/users/{user_id}/tools/execute", "/v1/users/u-1/tools/execute", TOOL_USE),
    Case("memory_tool", lambda c: c.memory_tool("u-1", {"command": "view", "path": "/memories"}),
         "POST", "/v1/users/{user_id}/memory-tool", "/v1/users/u-1/memory-tool",
         {"command": "view", "path": "/memories"}),
    Case("erase", lambda c: c.erase("users", "u-1"), "DELETE", "/v1/{scope_type}/{scope_id}", "/v1/users/u-1"),
    Case("get_erasure", lambda c: c.get_erasure("era_01kf0000000000000000000000"),
         "GET", "/v1/erasures/{erasure_id}", "/v1/erasures/era_01kf0000000000000000000000"),
    Case("retention", lambda c: c.retention(), "GET", "/v1/retention", "/v1/retention"),
    Case("health", lambda c: c.health(), "GET", "/v1/health", "/v1/health"),
    Case("health_status", lambda c: c.health_status(), "GET", "/health", "/health"),
    Case("export_page", lambda c: c.export_page("users", "u-1", cursor="eyJzIjoibG9nIn0"),
         "GET", "/v1/{scope_type}/{scope_id}/export", "/v1/users/u-1/export", params={"cursor": "eyJzIjoibG9nIn0"}),
    Case("import_page", lambda c: c.import_page("projects", "p-1", EXPORTED),
         "POST", "/v1/{scope_type}/{scope_id}/import", "/v1/projects/p-1/import", EXPORTED),
]


def assert_request(request: httpx.Request, case: Case) -> None:
    assert request.method == case.method
    assert request.url.raw_path.decode().split("?")[0] == "/prod" + case.path
    assert dict(request.url.params) == case.params
    assert (json.loads(request.content) if request.content else None) == case.body
