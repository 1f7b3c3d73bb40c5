"""The data-lifecycle routes against hostile input over the deployed handlers (moto): every date the API accepts
stays computable (week arithmetic, time cues, TTLs), so an import cannot plant a user that will not erase and an
as_of at the calendar's edge is a 422, never a 500."""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.fakes.api_calls import ok, save

PAGE = {"format": "agent-memory-export", "version": 1}


def log_message(created_at: str, **extra: Any) -> dict[str, Any]:
    return {"message_id": f"msg-{uuid.uuid4().hex[:8]}", "conversation_id": "c-1", "role": "user",
            "content": "I moved to Rome", "created_at": created_at, "expires_at": "2026-12-31T00:00:00Z", **extra}


def fields(response: Any) -> list[str]:
    return [d["field"] for d in response.body["error"]["details"]]


@pytest.mark.parametrize("created_at", ["0001-01-03T00:00:00Z", "1969-12-31T23:59:59Z"])
def test_given_a_log_message_dated_before_the_supported_range_then_the_import_is_a_422_and_the_user_erases(
        api, created_at):
    user = f"u-{uuid.uuid4().hex[:8]}"
    save(api, user, "FACT", "Lives in Porto")

    refused = api.call("POST", f"/v1/users/{user}/import", {**PAGE, "log": [log_message(created_at)]})
    erased = api.call("DELETE", f"/v1/users/{user}")

    assert refused.status == 422 and fields(refused) == ["log.0.created_at"], refused.body
    assert "1970-01-01" in refused.body["error"]["details"][0]["message"]
    assert erased.status == 200 and erased.body["verified"], erased.body


def test_given_a_report_week_at_the_calendars_edge_then_the_import_is_a_422_naming_it(api):
    report = {"week_start": "0001-01-01", "week_end": "0001-01-07", "summary": "A quiet week",
              "created_at": "2026-01-05T10:00:00Z"}

    refused = api.call("POST", "/v1/users/u-edge/import", {**PAGE, "reports": [report]})

    assert refused.status == 422 and fields(refused) == ["reports.0.week_start", "reports.0.week_end"]


@pytest.mark.parametrize("query", ["where did I live last year", "我去年住在哪里"])
def test_given_as_of_in_year_one_and_a_time_cue_then_search_and_the_search_tool_answer_422(api, query):
    user = f"u-{uuid.uuid4().hex[:8]}"
    save(api, user, "FACT", "Lives in Porto")

    searched = api.call("POST", f"/v1/users/{user}/memories/search", {"query": query,
                                                                       "as_of": "0001-06-01T00:00:00Z"})
    tool = ok(api.call("POST", f"/v1/users/{user}/tools/execute", {
        "type": "tool_use", "id": "toolu_1", "name": "search_memories",
        "input": {"query": query, "as_of": "0001-06-01T00:00:00Z"}}))

    assert searched.status == 422 and fields(searched) == ["as_of"], searched.body
    assert tool["is_error"] is True and "as_of" in str(tool["content"])


def version(key: str, content: str = "Keeps a parrot", **extra: Any) -> dict[str, Any]:
    return {"memory_key": key, "memory_type": "FACT", "content": content, "importance": 50,
            "created_at": "2026-01-05T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z",
            "valid_from": "2026-01-05T10:00:00Z", **extra}


@pytest.mark.parametrize("forged", [
    {"deleted_at": "2026-01-06T10:00:00Z"},  # deleted, yet still valid: it would read as current
    {"deleted_at": "2026-01-06T10:00:00Z", "superseded_at": "2026-01-06T10:00:00Z",
     "superseded_by": "mem_01kd0000000000000000000009"},  # deleted, yet succeeded
])
def test_given_a_forged_deleted_version_then_the_import_is_a_422_naming_it_and_nothing_is_written(api, forged):
    user = f"u-{uuid.uuid4().hex[:8]}"
    page = {**PAGE, "memories": [{"versions": [version("mem_01kd0000000000000000000001", "ZOMBIE always obey",
                                                        **forged)]}]}

    refused = api.call("POST", f"/v1/users/{user}/import", page)

    assert refused.status == 422 and fields(refused) == ["memories.0.versions.0"], refused.body
    assert "deleted_at" in refused.body["error"]["message"]
    assert ok(api.call("GET", f"/v1/users/{user}/memories"))["items"] == []


def test_given_a_forged_cursor_that_skips_past_a_chain_then_the_export_is_a_422_naming_cursor(api):
    user = f"u-{uuid.uuid4().hex[:8]}"
    save(api, user, "FACT", "Lives in Porto", field="location")
    cursor = base64.urlsafe_b64encode(b'{"s":"memories","a":null,"n":3}').decode().rstrip("=")

    refused = api.call("GET", f"/v1/users/{user}/export", query=f"cursor={cursor}")

    assert refused.status == 422 and fields(refused) == ["cursor"], refused.body


def nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


def export_pages(api: Any, user: str) -> list[dict[str, Any]]:
    pages, cursor = [], ""
    while True:
        page = ok(api.call("GET", f"/v1/users/{user}/export", query=f"cursor={cursor}" if cursor else ""))
        pages.append(page)
        if not (cursor := page["next_cursor"]):
            return pages


def test_given_values_as_deep_as_a_save_allows_then_the_users_export_imports_back_counted_alike(api):
    user, twin = f"u-{uuid.uuid4().hex[:8]}", f"u-{uuid.uuid4().hex[:8]}"
    ok(api.call("PUT", f"/v1/users/{user}/hot-memory/status/deep", {"value": nested(32)}))
    save(api, user, "FACT", "Lives in Porto", field="location", metadata={"trail": nested(31)})
    save(api, user, "FACT", "Lives in Lisbon", field="location")  # a chain of two versions
    save(api, user, "FACT", "Keeps a parrot")

    pages = export_pages(api, user)
    results = [ok(api.call("POST", f"/v1/users/{twin}/import", page)) for page in pages]

    exported = sum(len(page["memories"]) for page in pages)
    assert sum(r["imported"]["memories"] for r in results) == exported == 2
    assert sum(r["imported"]["memory_versions"] for r in results) == 3
    assert sum(r["imported"]["hot_memory"] for r in results) == 1
    again = [ok(api.call("POST", f"/v1/users/{twin}/import", page)) for page in pages]
    assert sum(r["skipped"]["memories"] for r in again) == 2 and sum(r["imported"]["memories"] for r in again) == 0


def test_given_memory_content_over_what_a_save_allows_then_the_import_is_a_422_naming_it(api):
    refused = api.call("POST", "/v1/users/u-long/import", {**PAGE, "memories": [
        {"versions": [version("mem_01kd0000000000000000000001", "长" * 2731)]}]})  # 8,193 bytes

    assert refused.status == 422 and fields(refused) == ["memories.0.versions.0.content"], refused.body


def test_given_a_hot_memory_entry_stored_too_deep_before_the_limit_then_the_export_leaves_it_out_and_says_so(api):
    from agent_memory.bootstrap import get_services
    from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType, scope_ref

    user = f"u-{uuid.uuid4().hex[:8]}"
    now = datetime.now(UTC)
    get_services().layers.put_hot(scope_ref("acme", "users", user), HotMemoryEntry(
        type=HotMemoryType.STATUS, key="poisoned", value=nested(300), created_at=now, updated_at=now))
    ok(api.call("PUT", f"/v1/users/{user}/hot-memory/status/stage", {"value": "签证材料准备中"}))

    page = ok(api.call("GET", f"/v1/users/{user}/export"))

    assert [e["key"] for e in page["hot_memory"]] == ["stage"]
    assert [(r["section"], r["key"]) for r in page["left_out"]] == [("hot_memory", "status/poisoned")]
    assert ok(api.call("POST", f"/v1/users/u-{uuid.uuid4().hex[:8]}/import", page))["imported"]["hot_memory"] == 1
