"""`as_of` over the real handlers: search, load_context, the profile and the reading tools take it; a malformed
instant, one without a timezone or one in the future is a 422 naming `as_of`, with nothing read."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def _save(api: Any, user: str, content: str, created_at: str, **extra: Any) -> dict[str, Any]:
    saved = api.call("POST", f"/v1/users/{user}/memories",
                     {"memory_type": "FACT", "content": content, "created_at": created_at, **extra})
    assert saved.status == 201, saved.body
    return dict(saved.body["memory"])


@pytest.fixture
def history(api: Any) -> str:
    user = _user()
    _save(api, user, "我住在杭州", "2024-01-01T00:00:00Z", field="location")
    _save(api, user, "我搬到了上海", "2024-06-01T00:00:00Z", field="location")
    _save(api, user, "我现在住在深圳", "2025-01-01T00:00:00Z", field="location")
    parrot = _save(api, user, "I keep a parrot called Kiwi", "2024-03-01T00:00:00Z")
    assert api.call("DELETE", f"/v1/users/{user}/memories/{parrot['memory_key']}").status == 200
    return user


@pytest.mark.parametrize(("as_of", "expected"), [
    ("2023-06-01T00:00:00Z", []),
    ("2024-03-01T00:00:00Z", ["我住在杭州", "I keep a parrot called Kiwi"]),
    ("2024-09-01T08:00:00+08:00", ["我搬到了上海", "I keep a parrot called Kiwi"]),
    ("2025-06-01T00:00:00Z", ["我现在住在深圳", "I keep a parrot called Kiwi"]),
    (None, ["我现在住在深圳"]),
])
def test_given_a_history_when_searched_as_of_then_the_versions_known_then_answer(api, history, as_of, expected):
    body = {"query": "我住在哪里 杭州 上海 深圳 parrot Kiwi", "search_mode": "keyword", "min_relevance_score": 0,
            "limit": 10, **({"asOf": as_of} if as_of else {})}  # camelCase accepted, as for every name

    answer = api.call("POST", f"/v1/users/{history}/memories/search", body)

    assert answer.status == 200, answer.body
    assert sorted(r["content_preview"] for r in answer.body["results"]) == sorted(expected)
    assert answer.body["as_of"] == (datetime.fromisoformat(as_of).astimezone(UTC).isoformat().replace("+00:00", "Z")
                                    if as_of else None)


def test_given_as_of_when_context_is_loaded_then_the_memories_known_then_come(api, history):
    answer = api.call("POST", f"/v1/users/{history}/context/load", {"query": "", "as_of": "2024-09-01T00:00:00Z"})

    assert answer.status == 200, answer.body
    assert sorted(m["content"] for m in answer.body["memories"]) == sorted(
        ["我搬到了上海", "I keep a parrot called Kiwi"])
    assert answer.body["total_memories"] == 2


def test_given_as_of_when_the_profile_is_summarized_then_it_holds_the_values_known_then(api, history):
    then = api.call("POST", f"/v1/users/{history}/profile/summarize",
                    {"action": "summarize", "as_of": "2024-03-01T00:00:00Z"})
    now = api.call("POST", f"/v1/users/{history}/profile/summarize")

    assert then.status == now.status == 200, (then.body, now.body)
    assert then.body["user_profile"]["basic"]["location"] == "我住在杭州"
    assert now.body["user_profile"]["basic"]["location"] == "我现在住在深圳"
    assert then.body["as_of"] == "2024-03-01T00:00:00Z" and "as_of" not in now.body


def test_given_as_of_when_the_search_tool_runs_then_it_answers_as_of_then(api, history):
    result = api.call("POST", f"/v1/users/{history}/tools/execute", {
        "type": "tool_use", "id": "toolu_asof", "name": "search_memories",
        "input": {"query": "杭州 上海 深圳", "search_mode": "keyword", "min_relevance_score": 0,
                  "as_of": "2024-09-01T00:00:00Z"}})

    assert result.status == 200 and not result.body.get("is_error"), result.body
    assert "我搬到了上海" in result.body["content"] and "深圳" not in result.body["content"]


FUTURE = (datetime.now(UTC) + timedelta(hours=1)).isoformat()


@pytest.mark.parametrize(("as_of", "says"), [
    ("yesterday", "datetime"),
    ("2024-03-01T00:00:00", "timezone"),
    (FUTURE, "future"),
    (1700000000, "ISO-8601"),
    ("2024-13-01T00:00:00Z", "datetime"),
], ids=["word", "naive", "future", "epoch", "month-13"])  # stable ids: parallel workers collect alike
@pytest.mark.parametrize(("method", "route", "body"), [
    ("POST", "memories/search", {"query": "x"}),
    ("POST", "context/load", {"query": "x"}),
    ("POST", "profile/summarize", {}),
])
def test_given_a_bad_as_of_then_a_422_names_it(api, method, route, body, as_of, says):
    answer = api.call(method, f"/v1/users/{_user()}/{route}", {**body, "as_of": as_of})

    assert answer.status == 422, answer.body
    (detail,) = answer.body["error"]["details"]
    assert detail["field"] == "as_of" and says.lower() in (detail["message"] + detail.get("type", "")).lower(), detail


def test_given_a_bad_as_of_when_a_tool_gets_it_then_the_model_is_told_to_fix_it(api):
    result = api.call("POST", f"/v1/users/{_user()}/tools/execute", {
        "type": "tool_use", "id": "toolu_bad", "name": "get_user_context", "input": {"query": "", "as_of": FUTURE}})

    assert result.status == 200 and result.body["is_error"] is True
    assert "as_of" in result.body["content"] and "future" in result.body["content"]
