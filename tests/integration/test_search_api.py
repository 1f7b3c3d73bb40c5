"""Search through the real handlers (moto): result fields, modes, synonyms, filters and floors, caching, and the
detail, placeholders and recall over the same seeded memories."""

from __future__ import annotations

import pytest

USER = "/v1/users/u-77"
RESULT_FIELDS = {"memory_key", "summary", "content_preview", "memory_type", "relevance_score", "created_at",
                 "keywords", "metadata"}


@pytest.fixture
def seeded(api):
    memories = [
        {"memoryType": "INTENT", "content": "对高才通B类非常感兴趣", "category": "TTPS",
         "createdAt": "2026-11-01T00:00:00Z"},
        {"memoryType": "FACT", "content": "用户32岁", "field": "age", "createdAt": "2026-02-05T00:00:00Z"},
        {"memoryType": "FACT", "content": "用户33岁", "field": "age", "createdAt": "2026-11-01T00:00:00Z"},
        {"memoryType": "PREFERENCE", "content": "希望尽快办理,时间越短越好", "createdAt": "2026-11-02T00:00:00Z"},
        {"memoryType": "FACT", "content": "I play tennis every Sunday morning", "createdAt": "2026-11-03T00:00:00Z"},
        {"memoryType": "FACT", "content": "My sister Anna lives in Toronto", "createdAt": "2026-06-01T00:00:00Z"},
    ]
    response = api.call("POST", f"{USER}/memories/batch", {"memories": memories})
    assert response.status == 201
    return dict(zip([m["content"] for m in memories], response.body["memory_keys"], strict=True))


def search(api, **body):
    response = api.call("POST", f"{USER}/memories/search", {"min_relevance_score": 0, **body})
    assert response.status == 200, response.body
    return response.body


def test_search_answers_every_result_field_with_a_score_breakdown(api, seeded):
    body = search(api, query="高才通", limit=3)

    assert set(body) >= {"total_found", "results", "search_strategy_used", "expanded_keywords"}
    top = body["results"][0]
    assert set(top) >= RESULT_FIELDS
    assert top["content_preview"] == "对高才通B类非常感兴趣"
    assert top["score_breakdown"]["keyword"] > 0 and top["score_breakdown"]["final"] == top["relevance_score"]
    assert body["search_strategy_used"].startswith("hybrid:")
    assert "ttps" in body["expanded_keywords"]
    assert len(body["results"]) <= 3 and body["total_found"] >= len(body["results"])


def test_english_semantic_search_finds_the_meaning(api, seeded):
    body = search(api, query="Which sport does the user do on weekends?", search_mode="semantic", limit=1)
    assert body["results"][0]["content_preview"] == "I play tennis every Sunday morning"


def test_keyword_mode_with_a_synonym_from_the_builtin_table(api, seeded):
    body = search(api, query="TTPS", search_mode="keyword", limit=1)
    assert body["results"][0]["content_preview"] == "对高才通B类非常感兴趣"


def test_a_synonym_phrase_crosses_the_language_boundary(api, seeded):
    body = search(api, query="tell me about the top talent pass scheme", search_mode="keyword", limit=1,
                  min_relevance_score=0)
    assert body["results"][0]["content_preview"] == "对高才通B类非常感兴趣"
    assert "高才通" in body["expanded_keywords"]


def test_the_builtin_synonyms_are_visible_and_symmetric(api):
    listed = api.call("GET", "/v1/synonyms", query="keyword=TTPS").body["synonyms"]
    assert {s["synonym"] for s in listed} >= {"高才通", "top talent pass scheme"}
    back = api.call("GET", "/v1/synonyms", query="keyword=%E9%AB%98%E6%89%8D%E9%80%9A").body["synonyms"]
    assert "ttps" in {s["synonym"] for s in back}


def test_superseded_memories_are_never_returned(api, seeded):
    contents = [r["content_preview"] for r in search(api, query="用户 岁 年龄", limit=20)["results"]]
    assert "用户33岁" in contents and "用户32岁" not in contents


def test_filters_types_time_and_keywords(api, seeded):
    prefs = search(api, query="办理", memory_types=["PREFERENCE"], limit=20)["results"]
    assert [r["memory_type"] for r in prefs] == ["PREFERENCE"]
    recent = search(api, query="user", time_range=["2026-11-02T00:00:00Z", "2026-11-30T00:00:00Z"], limit=20)
    assert {r["content_preview"] for r in recent["results"]} <= {"希望尽快办理,时间越短越好",
                                                                 "I play tennis every Sunday morning"}
    by_keyword = search(api, query="anything", keywords=["tennis"], limit=20)["results"]
    assert [r["content_preview"] for r in by_keyword] == ["I play tennis every Sunday morning"]


def test_min_relevance_score_is_a_hard_floor(api, seeded):
    found = search(api, query="高才通", min_relevance_score=0)["results"]
    best = max(r["score_breakdown"]["absolute_relevance"] for r in found)
    body = search(api, query="高才通", min_relevance_score=min(1.0, best + 0.001))
    assert body["results"] == [] and body["total_found"] == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "x", "limit": 21}, "limit"),
        ({"query": ""}, "query"),
        ({"query": "x", "search_mode": "fuzzy"}, "search_mode"),
        ({"query": "x", "memory_types": ["OPINION"]}, "memory_types.0"),
        ({"query": "x", "min_relevance_score": 1.5}, "min_relevance_score"),
        ({"query": "x", "time_range": ["2026-12-01T00:00:00Z", "2026-01-01T00:00:00Z"]}, "time_range"),
    ],
)
def test_bad_search_input_is_a_422_naming_the_field(api, body, field):
    response = api.call("POST", f"{USER}/memories/search", body)
    assert response.status == 422
    assert field in [d["field"] for d in response.body["error"]["details"]] or field in response.body["error"][
        "message"]


def test_another_tenant_finds_nothing(api, seeded):
    response = api.call("POST", f"{USER}/memories/search", {"query": "高才通", "min_relevance_score": 0},
                        tenant="other-co")
    assert response.body["results"] == []


def test_repeated_searches_reuse_the_cached_partition_until_a_write(api, seeded):
    from agent_memory.bootstrap import get_services

    index = get_services().index
    search(api, query="tennis")
    misses = index.stats["misses"]
    search(api, query="tennis again")
    assert index.stats["misses"] == misses
    api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "I also play squash"})
    assert "I also play squash" in [r["content_preview"] for r in search(api, query="squash")["results"]]
    assert index.stats["misses"] == misses + 1


def test_added_synonyms_expand_queries(api, seeded):
    added = api.call("POST", "/v1/synonyms", {"keyword": "网球", "synonyms": ["tennis"], "similarity_score": 0.9})
    assert added.status == 201
    listed = api.call("GET", "/v1/synonyms", query="keyword=tennis")
    assert listed.body["synonyms"] == [{"synonym": "网球", "similarity_score": 0.9}]
    body = search(api, query="网球", search_mode="keyword", limit=1)
    assert "tennis" in body["expanded_keywords"]
    assert body["results"][0]["content_preview"] == "I play tennis every Sunday morning"


def test_detail_resolve_and_recall(api, seeded):
    key = seeded["用户33岁"]
    detail = api.call("GET", f"{USER}/memories/{key}").body
    assert [m["content"] for m in detail["history"]] == ["用户32岁", "用户33岁"]

    resolved = api.call("POST", f"{USER}/memories/resolve",
                        {"text": f"年龄: [memory:{key}:full]; [memory:mem_nope]; [memory:{key}:meta:x]"}).body
    assert resolved["text"] == "年龄: 用户33岁; [ERROR: Memory mem_nope not found]; [ERROR: Metadata field x not found]"
    assert resolved["missing"] == ["mem_nope"]

    recall = api.call("POST", f"{USER}/memories/recall", {"message": "还是按之前说的高才通方案吧"}).body
    assert recall["decision"]["needs_recall"] and recall["decision"]["intent_type"] == "TASK_CONTINUATION"
    assert recall["memories"][0]["content_preview"] == "对高才通B类非常感兴趣"
    assert all(m["relevance_score"] >= 0.7 for m in recall["memories"])  # proactive recall's relevance floor
    key = recall["memories"][0]["memory_key"]
    assert recall["context"].startswith(f"相关历史记忆 [{key}]:\n摘要: ")
    assert "内容: 对高才通B类非常感兴趣" in recall["context"]
    assert recall["decision"]["urgency"] == "medium" and recall["decision"]["is_complex_query"] is False
    chat = api.call("POST", f"{USER}/memories/recall", {"message": "今天天气不错"}).body
    assert chat["decision"]["needs_recall"] is False and chat["memories"] == []


@pytest.mark.parametrize(("memory", "query"), [
    ("I live in Berlin", "where does the user live"),
    ("我在上海一家外资银行做风险管理总监，年薪大概150万", "用户的工作和收入"),
    ("高才通申请材料已准备好", "高才通"),
])
def test_given_the_default_floor_then_ordinary_questions_find_their_memory(api, memory, query):
    user = f"/v1/users/floor-{abs(hash(query)) % 10_000}"
    others = ["I play tennis every Sunday morning", "My sister Anna lives in Toronto", "喜欢喝咖啡"]
    response = api.call("POST", f"{user}/memories/batch", {"memories": [
        {"memoryType": "FACT", "content": text} for text in [memory, *others]]})
    assert response.status == 201
    body = api.call("POST", f"{user}/memories/search", {"query": query}).body  # the default floor
    assert body["results"] and body["results"][0]["content_preview"] == memory
