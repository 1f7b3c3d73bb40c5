"""L2 hot memory routes, L3 report reads, intent-driven context, and hot memory in inject (moto)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from agent_memory.bootstrap import get_services
from agent_memory.domain.models import utcnow
from agent_memory.domain.tiers.memory_layers import LogMessage, WeeklyReport, scope_ref

PROJECT = "/v1/projects/study-42"
USER = "/v1/users/u-hot"


def put(api: Any, base: str, type_: str, key: str, value: Any, priority: int = 0, tenant: str = "acme"):
    return api.call("PUT", f"{base}/hot-memory/{type_}/{key}", {"value": value, "priority": priority}, tenant=tenant)


def test_hot_memory_upserts_by_scope_type_and_key_and_lists_by_priority(api):
    first = put(api, PROJECT, "status", "enrolled", 12, priority=5)
    second = put(api, PROJECT, "status", "enrolled", 15, priority=5)
    put(api, PROJECT, "meta", "name", "高血压III期临床研究", priority=10)
    put(api, PROJECT, "decision", "visit-window", {"days": 3, "by": "PI"}, priority=8)
    put(api, PROJECT, "preference", "report-language", "中文", priority=1)

    assert first.status == 200 and second.status == 200
    assert second.body["created_at"] == first.body["created_at"] and second.body["value"] == 15
    listing = api.call("GET", f"{PROJECT}/hot-memory").body
    assert listing["scope"] == {"type": "project", "id": "study-42"}
    assert [(e["type"], e["key"]) for e in listing["entries"]] == [
        ("meta", "name"), ("decision", "visit-window"), ("status", "enrolled"), ("preference", "report-language")]
    assert [e["value"] for e in listing["status"]] == [15]
    assert listing["decisions"][0]["value"] == {"days": 3, "by": "PI"}


def test_scopes_and_tenants_never_share_hot_memory(api):
    put(api, PROJECT, "meta", "pi", "张医生")
    assert api.call("GET", f"{USER}/hot-memory").body["entries"] == []
    assert api.call("GET", "/v1/users/study-42/hot-memory").body["entries"] == []  # a user with the project's id
    assert api.call("GET", f"{PROJECT}/hot-memory", tenant="other").body["entries"] == []


def test_chinese_keys_and_deletes(api):
    assert put(api, USER, "preference", "%E6%B2%9F%E9%80%9A%E6%96%B9%E5%BC%8F", "微信").body["key"] == "沟通方式"
    assert api.call("DELETE", f"{USER}/hot-memory/preference/%E6%B2%9F%E9%80%9A%E6%96%B9%E5%BC%8F").status == 200
    assert api.call("DELETE", f"{USER}/hot-memory/preference/%E6%B2%9F%E9%80%9A%E6%96%B9%E5%BC%8F").status == 404
    assert api.call("GET", f"{USER}/hot-memory").body["entries"] == []


@pytest.mark.parametrize(("method", "path", "body", "field"), [
    ("PUT", f"{USER}/hot-memory/mood/x", {"value": 1}, "type"),
    ("PUT", f"{USER}/hot-memory/status/a%23b", {"value": 1}, "key"),
    ("PUT", f"{USER}/hot-memory/status/x", {"priority": 1}, "value"),
    ("PUT", f"{USER}/hot-memory/status/x", {"value": "x" * 5000}, "value"),
    ("PUT", f"{USER}/hot-memory/status/x", {"value": 1, "priority": 5000}, "priority"),
    ("POST", f"{USER}/reports/search", {"query": ""}, "query"),
    ("POST", f"{USER}/context/intent", {"intent": {"query": "x"}}, "intent.type"),
])
def test_bad_layer_requests_are_422_naming_the_field(api, method, path, body, field):
    response = api.call(method, path, body)
    assert response.status == 422, response.body
    assert response.body["error"]["details"][0]["field"] == field
    assert api.call("GET", f"{USER}/hot-memory").body["entries"] == []


def test_an_unknown_scope_type_is_404(api):
    assert api.call("GET", "/v1/teams/t1/hot-memory").status == 404


# ---- reports and intent-driven context -------------------------------------------------------------

def seed_history(scope_type: str, scope_id: str) -> None:
    services = get_services()
    scope = scope_ref("acme", scope_type, scope_id)  # type: ignore[arg-type]
    now = utcnow()
    for weeks_ago, summary in ((2, "本周完成了12例受试者入组，发现2例访视超窗，已通知研究护士。"),
                               (1, "本周召开了数据监查会议，决定将访视窗口放宽到前后3天。")):
        start = date.today() - timedelta(days=7 * weeks_ago + date.today().weekday())
        services.layers.put_report_if_absent(scope, WeeklyReport(
            week_start=start, week_end=start + timedelta(days=6), summary=summary, key_events=[summary[:12]],
            metrics={"messages": 10}, created_at=now))
    messages = [
        LogMessage(message_id=f"m{i}", conversation_id="c1", role="user", content=text, created_at=now,
                   expires_at=now + timedelta(days=30))
        for i, text in enumerate(["受试者003的血压记录缺失", "访视窗口的规定是什么", "今天天气很好"])
    ]
    services.layers.append_messages(scope, messages, set())


def test_reports_are_listed_newest_first_and_searchable(api):
    seed_history("projects", "study-42")
    listing = api.call("GET", f"{PROJECT}/reports").body["reports"]
    assert len(listing) == 2 and listing[0]["summary"].startswith("本周召开了数据监查会议")
    found = api.call("POST", f"{PROJECT}/reports/search", {"query": "访视窗口放宽"}).body["reports"]
    assert found[0]["summary"].startswith("本周召开了数据监查会议") and found[0]["similarity"] > 0


def test_intent_context_brings_history_for_questions_only_and_respects_the_budget(api):
    seed_history("projects", "study-42")
    put(api, PROJECT, "meta", "name", "高血压III期临床研究", priority=10)

    question = api.call("POST", f"{PROJECT}/context/intent",
                        {"intent": {"type": "QA_QUERY", "entities": {"query": "访视窗口"}}}).body
    task = api.call("POST", f"{PROJECT}/context/intent", {"intent": {"type": "QC_TASK", "query": "访视窗口"}}).body
    tight = api.call("POST", f"{PROJECT}/context/intent",
                     {"intent": {"type": "QA_QUERY", "query": "访视窗口"}, "max_tokens": 100}).body

    # Two weekly reports match, and the log is searched too (a question gets both)
    assert [p["layer"] for p in question["parts"]] == ["hot_memory", "reports", "log"]
    assert "## 项目信息\n- name: \"高血压III期临床研究\"" in question["context"]
    assert "## 相关历史记录" in question["context"] and "访视窗口放宽" in question["context"]
    assert "## 相关对话记录" in question["context"]
    assert question["tokens"] <= question["max_tokens"] == 2000
    # No SOP retriever is configured here, so the QC task names sop as skipped.
    assert [p["layer"] for p in task["parts"]] == ["hot_memory"] and task["skipped"] == ["reports", "log", "sop"]
    assert [p["layer"] for p in tight["parts"]] == ["hot_memory"] and "reports" in tight["skipped"]


# ---- hot memory in inject -----------------------------------------------------------------------

def inject(api: Any, **extra: Any) -> dict[str, Any]:
    response = api.call("POST", "/v1/context/inject", {
        "user_id": "u-hot", "conversation_id": "c-hot", "current_user_message": "访视窗口是怎么规定的？", **extra})
    assert response.status == 200, response.body
    return response.body


def test_inject_always_carries_hot_memory_first_and_a_write_refreshes_it(api):
    put(api, USER, "preference", "语言", "中文", priority=1)
    put(api, PROJECT, "decision", "visit-window", "前后3天", priority=9)
    put(api, PROJECT, "status", "enrolled", 12, priority=3)

    first = inject(api, project_id="study-42")
    put(api, PROJECT, "status", "enrolled", 13, priority=3)
    second = inject(api, project_id="study-42")

    assert first["injected_contexts"][0] == "hot_memory"
    assert first["blocks"][0]["priority"] == "P0"
    context = first["messages"][0]["content"]
    hot = context[context.index("<hot_memory>"):context.index("</hot_memory>")]
    assert '- 语言: "中文"' in hot and hot.index("enrolled: 12") < hot.index('visit-window: "前后3天"')  # section order
    assert "enrolled: 13" in second["messages"][0]["content"]


def test_inject_with_a_question_intent_adds_the_history_block(api):
    seed_history("projects", "study-42")
    body = inject(api, project_id="study-42", intent={"type": "QA_QUERY", "query": "访视窗口"})
    assert "intent_context" in body["injected_contexts"]
    assert "访视窗口放宽到前后3天" in body["messages"][0]["content"]
    plain = inject(api, project_id="study-42")
    assert "intent_context" not in plain["injected_contexts"]


def test_week_math_is_monday_based():
    from agent_memory.domain.tiers.memory_layers import previous_week, week_start_of

    sunday = datetime(2026, 11, 22, 23, 0, tzinfo=UTC)
    assert week_start_of(sunday) == date(2026, 11, 16)
    assert previous_week(datetime(2026, 11, 23, 1, 0, tzinfo=UTC)) == date(2026, 11, 16)


def test_refreshing_hot_memory_offline_is_skipped_with_a_clear_reason(api):
    response = api.call("POST", f"{PROJECT}/hot-memory/refresh")
    assert response.status == 200
    assert response.body["status"] == "skipped" and "LLM_PROVIDER" in response.body["reason"]
    assert response.body["scope"] == {"type": "project", "id": "study-42"}
