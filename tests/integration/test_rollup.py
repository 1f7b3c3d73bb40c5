"""The weekly rollup end to end on moto: the schedule's event → shard tasks on RollupQueue → the worker
(fan-out, then one scope task per active scope) → one report per scope and week."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import boto3
import pytest

from agent_memory.bootstrap import get_services
from agent_memory.bootstrap.services import build_services
from agent_memory.domain.models import is_cjk_text, utcnow
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType, LogMessage, previous_week, scope_ref
from agent_memory.domain.tiers.reports import ExtractiveReportWriter, WeekLog
from agent_memory.errors import InvalidInput, LlmUnavailable
from agent_memory.services.rollup import ScopeTask
from agent_memory.services.rollup_schedule import ShardTask
from agent_memory.settings import get_settings
from tests.integration.conftest import reset_containers

PROJECT = "/v1/projects/study-42"
ENGLISH_USER = "/v1/users/u-en"


@pytest.fixture
def week() -> date:
    """Last week (UTC, the template's default timezone): what a rollup run now reports on."""
    return previous_week(utcnow())


def at(week: date, day: int, hour: int, minute: int = 0) -> str:
    return datetime.combine(week + timedelta(days=day), time(hour, minute), tzinfo=UTC).isoformat()


def log(api: Any, base: str, conversation: str, *messages: dict[str, Any], tenant: str = "acme") -> None:
    response = api.call("POST", f"{base}/conversations/{conversation}/messages",
                        {"messages": list(messages), "extract": False}, tenant=tenant)
    assert response.status == 201, response.body


def msg(role: str, content: str, created_at: str, intent: str | None = None) -> dict[str, Any]:
    return {"role": role, "content": content, "createdAt": created_at, **({"intent": intent} if intent else {})}


def log_study_week(api: Any, week: date) -> None:
    """A Chinese project: two conversations over three days, with intents."""
    log(api, PROJECT, "c-monday",
        msg("user", "本周新入组3例受试者，其中1例因肝功能异常筛选失败。", at(week, 0, 9), "QC_TASK"),
        msg("assistant", "已记录：新入组3例，1例筛选失败。", at(week, 0, 9, 1)),
        msg("user", "受试者007的第二次访视超窗2天，需要提交方案偏离报告。", at(week, 1, 14), "QC_TASK"))
    log(api, PROJECT, "c-thursday",
        msg("user", "数据监查委员会决定把访视窗口放宽到前后3天。", at(week, 3, 10), "QA_QUERY"),
        msg("assistant", "好的，访视窗口已更新为前后3天。", at(week, 3, 10, 2)))
    # This week's message belongs to next Monday's report, not to this one.
    log(api, PROJECT, "c-now", msg("user", "今天开始准备中期分析。", utcnow().isoformat()))


def log_english_week(api: Any, week: date) -> None:
    log(api, ENGLISH_USER, "c-en",
        msg("user", "I moved the launch of the Berlin office to March 3 because the lease slipped.", at(week, 2, 8)),
        msg("assistant", "Noted: the Berlin launch is now March 3.", at(week, 2, 8, 1)),
        msg("user", "My team grew to 12 engineers after we hired two in Lisbon.", at(week, 4, 16)))


def schedule(api: Any, **extra: Any) -> dict[str, Any]:
    event = {"source": "aws.scheduler", "time": utcnow().isoformat(), **extra}
    result: dict[str, Any] = api.functions.invoke("RollupFunction", event)
    return result


def sqs() -> Any:
    return boto3.client("sqs", region_name="us-east-1")


def queued_bodies() -> list[dict[str, Any]]:
    """What is on the rollup queue now (received and left there: visible again at once)."""
    url = get_settings().rollup_queue_url
    found = sqs().receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0).get("Messages", [])
    return [json.loads(m["Body"]) for m in found]


def drain(api: Any, *, rounds: int = 50) -> list[dict[str, Any]]:
    """What Lambda's SQS event source does: batches of 5 to the worker, deletes what it did not report as
    failed. Failed messages stay invisible (their visibility timeout), as before a redelivery."""
    url = get_settings().rollup_queue_url
    failures: list[dict[str, Any]] = []
    for _ in range(rounds):
        messages = sqs().receive_message(QueueUrl=url, MaxNumberOfMessages=5, VisibilityTimeout=600).get("Messages")
        if not messages:
            return failures
        event = {"Records": [{
            "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"], "attributes": {},
            "messageAttributes": {}, "md5OfBody": m["MD5OfBody"], "eventSource": "aws:sqs",
            "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:RollupQueue", "awsRegion": "us-east-1",
        } for m in messages]}
        result = api.functions.invoke("RollupWorkerFunction", event)
        failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
        for m in messages:
            if m["MessageId"] in failed:
                failures.append({"batchItemFailures": result["batchItemFailures"], "body": json.loads(m["Body"])})
            else:
                sqs().delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    raise AssertionError("the rollup queue did not drain")


def reports(api: Any, base: str, tenant: str = "acme") -> list[dict[str, Any]]:
    response = api.call("GET", f"{base}/reports", tenant=tenant)
    assert response.status == 200, response.body
    found: list[dict[str, Any]] = response.body["reports"]
    return found


def use_services(api: Any, monkeypatch: pytest.MonkeyPatch, lambda_env: Any, **overrides: Any) -> Any:
    """The worker built with the given fakes, as test_api does for the save function (the schedule builds only
    its queue)."""
    services = build_services(get_settings(), dynamodb_client=lambda_env, **overrides)
    monkeypatch.setattr("agent_memory.bootstrap.get_services", lambda: services)
    monkeypatch.setitem(api.functions.container("RollupWorkerFunction").__dict__, "get_rollup_worker",
                        lambda: services.rollup)
    return services


# ---- the happy path ------------------------------------------------------------------------------

def test_given_a_logged_week_when_the_schedule_fires_then_each_active_scope_gets_one_report_in_its_language(
        api, week):
    log_study_week(api, week)
    log_english_week(api, week)
    log(api, "/v1/users/u-older", "c-old", msg("user", "两周前的一条消息。", at(week - timedelta(days=7), 2, 9)))

    plan = schedule(api)
    failures = drain(api)

    assert plan == {"week_start": week.isoformat(), "week_end": (week + timedelta(days=6)).isoformat(),
                    "timezone": "UTC", "shard_tasks": 16}
    assert failures == []
    [study] = reports(api, PROJECT)
    assert study["week_start"] == week.isoformat() and study["generated_by"] == "extractive"
    assert is_cjk_text(study["summary"]) and len(study["summary"]) <= 500
    assert study["summary"].startswith("本周共2次对话、5条消息（用户3条），活跃3天。")
    assert "访视窗口放宽到前后3天" in study["summary"] and "中期分析" not in study["summary"]
    assert study["metrics"] == {
        "messages": 5, "by_role": {"user": 3, "assistant": 2}, "conversations": 2, "active_days": 3,
        "messages_by_day": {(week + timedelta(days=d)).isoformat(): n for d, n in ((0, 2), (1, 1), (3, 2))},
        "intents": {"QC_TASK": 2, "QA_QUERY": 1},
    }
    assert len(study["key_events"]) == 2 and all(is_cjk_text(e) for e in study["key_events"])
    [english] = reports(api, ENGLISH_USER)
    assert not is_cjk_text(english["summary"]) and "Berlin" in english["summary"]
    assert english["metrics"]["messages"] == 3 and english["metrics"]["conversations"] == 1
    # No message last week, no report; other tenants see nothing.
    assert reports(api, "/v1/users/u-older") == []
    assert reports(api, PROJECT, tenant="other") == []
    # Embedded for the history book's search (float16 + the model id).
    stored = get_services().layers.reports(scope_ref("acme", "projects", "study-42"))[0]
    assert stored.embedding and stored.embedding_model == get_services().embedder_provider().model_id
    found = api.call("POST", f"{PROJECT}/reports/search", {"query": "访视窗口"}).body["reports"]
    assert found and found[0]["week_start"] == week.isoformat()


def test_given_a_week_override_then_that_week_is_rolled_up_and_a_non_monday_is_refused(api, week):
    log(api, PROJECT, "c-1", msg("user", "两周前完成了伦理审查。", at(week - timedelta(days=7), 1, 9)))
    earlier = week - timedelta(days=7)

    plan = schedule(api, week=earlier.isoformat())
    drain(api)

    assert plan["week_start"] == earlier.isoformat()
    assert [r["week_start"] for r in reports(api, PROJECT)] == [earlier.isoformat()]
    with pytest.raises(InvalidInput):
        schedule(api, week=(earlier + timedelta(days=1)).isoformat())


# ---- idempotency ---------------------------------------------------------------------------------

def test_given_a_finished_rollup_when_it_runs_again_then_nothing_is_rewritten(api, week):
    log_study_week(api, week)
    schedule(api)
    drain(api)
    [first] = reports(api, PROJECT)

    schedule(api)  # the whole rollup again: a manual re-run, or the schedule retried
    outcomes = []
    task = ScopeTask(week=week, tenant_id="acme", scope_id="project/study-42").model_dump_json()
    outcomes.append(get_services().rollup.run_task(task, remaining_seconds=300))  # a redelivered scope task
    drain(api)

    assert reports(api, PROJECT) == [first]  # one report, same created_at and text
    assert outcomes[0].outcome == "already_existed" and outcomes[0].scope.hot_memory == "already_done"


def test_given_a_message_logged_after_its_week_was_rolled_up_then_a_re_run_writes_the_report_again_once(api, week):
    log_study_week(api, week)
    schedule(api)
    drain(api)
    [first] = reports(api, PROJECT)

    log(api, PROJECT, "c-late", msg("user", "补记：受试者012周五撤回知情同意。", at(week, 4, 17)))
    task = ScopeTask(week=week, tenant_id="acme", scope_id="project/study-42").model_dump_json()
    rerun = get_services().rollup.run_task(task, remaining_seconds=300)
    again = get_services().rollup.run_task(task, remaining_seconds=300)

    [updated] = reports(api, PROJECT)
    assert rerun.outcome == "updated" and again.outcome == "already_existed"
    assert updated["metrics"]["messages"] == first["metrics"]["messages"] + 1
    assert "撤回知情同意" in updated["summary"] + " ".join(updated["key_events"])


class _CountingWriter(ExtractiveReportWriter):
    def __init__(self) -> None:
        self.calls = 0

    def write(self, week: WeekLog) -> Any:
        self.calls += 1
        return super().write(week)


def test_given_an_existing_report_then_the_writer_is_not_called_again(api, monkeypatch, lambda_env, week):
    writer = _CountingWriter()
    use_services(api, monkeypatch, lambda_env, report_writer=writer)
    log_study_week(api, week)

    for _ in range(2):
        schedule(api)
        drain(api)

    assert writer.calls == 1


# ---- failures ------------------------------------------------------------------------------------

class _BrokenForOneScope(ExtractiveReportWriter):
    """The LLM failing for one scope's week (recognised by its conversation), fine for the others."""

    def write(self, week: WeekLog) -> Any:
        if any(m.conversation_id == "c-broken" for m in week.messages):
            raise LlmUnavailable("the LLM is unavailable; the weekly report is retried")
        return super().write(week)


def test_given_one_failing_scope_then_only_its_record_is_a_batch_item_failure(api, monkeypatch, lambda_env, week):
    use_services(api, monkeypatch, lambda_env, report_writer=_BrokenForOneScope())
    log_study_week(api, week)
    log_english_week(api, week)
    log(api, "/v1/users/u-broken", "c-broken", msg("user", "这一周的记录会让写周报失败。", at(week, 1, 9)))

    schedule(api)
    failures = drain(api)

    assert len(failures) == 1
    [failure] = failures
    assert datetime.fromisoformat(failure["body"].pop("queued_at"))  # when it was queued: an erasure drops it
    assert failure["body"] == {"kind": "scope", "week": week.isoformat(), "tenant_id": "acme", "scope_id": "u-broken"}
    assert len(failure["batchItemFailures"]) == 1  # the other records of its batch succeeded
    assert len(reports(api, PROJECT)) == 1 and len(reports(api, ENGLISH_USER)) == 1
    assert reports(api, "/v1/users/u-broken") == []
    # The redelivery, once the LLM is back, writes it.
    retried = get_services().rollup.run_task(json.dumps(failure["body"]), remaining_seconds=300)
    assert retried.outcome == "written" and len(reports(api, "/v1/users/u-broken")) == 1


def test_given_a_malformed_task_then_it_fails_alone(api):
    event = {"Records": [
        {"messageId": "bad", "receiptHandle": "r1", "body": '{"kind": "scope", "week": "not a date"}',
         "attributes": {}, "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
         "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:RollupQueue", "awsRegion": "us-east-1"},
        {"messageId": "good", "receiptHandle": "r2", "body": '{"kind": "shard", "week": "2026-11-16", "shard": 0}',
         "attributes": {}, "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
         "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:RollupQueue", "awsRegion": "us-east-1"},
    ]}

    assert api.functions.invoke("RollupWorkerFunction", event) == {"batchItemFailures": [{"itemIdentifier": "bad"}]}


# ---- expired log ---------------------------------------------------------------------------------

def log_items(scope: Any) -> list[dict[str, Any]]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    pk = f"T#{scope.tenant_id}#U#{scope.user_id}"
    return client.query(TableName=get_settings().memory_table_name, KeyConditionExpression="pk = :pk",
                        ExpressionAttributeValues={":pk": {"S": pk}})["Items"]


def test_given_expired_log_items_then_the_rollup_reports_without_them_and_removes_them(api, week):
    scope = scope_ref("acme", "users", "u-ttl")
    now = utcnow()
    created = datetime.fromisoformat(at(week, 2, 9))
    get_services().layers.append_messages(scope, [
        LogMessage(message_id="m-expired", conversation_id="c1", role="user", content="这条消息已经过期了。",
                   created_at=created, expires_at=now - timedelta(hours=1)),
        LogMessage(message_id="m-live", conversation_id="c1", role="user", content="这条消息还在保留期内。",
                   created_at=created + timedelta(minutes=1), expires_at=now + timedelta(days=20)),
    ], {week})

    schedule(api)
    drain(api)

    [report] = reports(api, "/v1/users/u-ttl")
    assert report["metrics"]["messages"] == 1 and "过期" not in report["summary"]
    kept = [i["sk"]["S"] for i in log_items(scope) if i["sk"]["S"].startswith("LOG#")]
    assert len(kept) == 1 and kept[0].endswith("#m-live")


# ---- fan-out at scale: continuation and deferral -------------------------------------------------

def test_given_a_tiny_deadline_then_a_shard_re_enqueues_itself_with_its_cursor(api, monkeypatch, week):
    monkeypatch.setenv("ROLLUP_SHARDS", "1")
    monkeypatch.setenv("ROLLUP_PAGE_SIZE", "2")
    reset_containers()
    for i in range(5):
        log(api, f"/v1/users/u-{i}", "c1", msg("user", f"第{i}位用户本周的记录。", at(week, 1, 9)))

    first = get_services().rollup.expand_shard(ShardTask(week=week, shard=0), deadline=0.0)
    queued = queued_bodies()

    assert first.continued and first.pages == 1 and first.scopes_queued == 2
    continuation = [b for b in queued if b["kind"] == "shard"]
    assert len(continuation) == 1 and continuation[0]["cursor"] and continuation[0]["shard"] == 0
    assert len([b for b in queued if b["kind"] == "scope"]) == 2
    # The worker (with all its time) finishes the shard from the cursor: every scope, once.
    assert drain(api) == []
    for i in range(5):
        assert len(reports(api, f"/v1/users/u-{i}")) == 1


def test_given_little_time_left_then_a_scope_task_is_deferred_unless_it_is_the_first(api, week):
    log_english_week(api, week)
    task = ScopeTask(week=week, tenant_id="acme", scope_id="u-en").model_dump_json()
    rollup = get_services().rollup

    deferred = rollup.run_task(task, remaining_seconds=5, may_defer=True)
    assert deferred.outcome == "deferred" and queued_bodies() == [json.loads(task)]
    assert reports(api, ENGLISH_USER) == []

    first = rollup.run_task(task, remaining_seconds=5, may_defer=False)
    assert first.outcome == "written"


# ---- hot memory ----------------------------------------------------------------------------------

class _FakeRefresher:
    def __init__(self) -> None:
        self.seen: list[tuple[int, int]] = []

    def refresh(self, messages: list[LogMessage], existing: list[HotMemoryEntry], *, project: bool,
                now: datetime) -> list[HotMemoryEntry]:
        self.seen.append((len(messages), len(existing)))

        def entry(type_: HotMemoryType, key: str, value: Any, priority: int) -> HotMemoryEntry:
            return HotMemoryEntry(type=type_, key=key, value=value, priority=priority, source="llm",
                                  created_at=now, updated_at=now)

        return [entry(HotMemoryType.STATUS, "enrolled", 3, 6),
                entry(HotMemoryType.DECISION, "visit-window", "前后3天", 8),
                entry(HotMemoryType.PREFERENCE, "report-language", "English", 1)]


def test_given_an_llm_refresher_then_the_rollup_refreshes_hot_memory_but_keeps_api_entries(
        api, monkeypatch, lambda_env, week):
    refresher = _FakeRefresher()
    use_services(api, monkeypatch, lambda_env, hot_memory_refresher=refresher)
    log_study_week(api, week)
    assert api.call("PUT", f"{PROJECT}/hot-memory/preference/report-language", {"value": "中文"}).status == 200

    schedule(api)
    drain(api)
    schedule(api)
    drain(api)

    listing = api.call("GET", f"{PROJECT}/hot-memory").body
    by_key = {e["key"]: e for e in listing["entries"]}
    assert by_key["enrolled"]["value"] == 3 and by_key["enrolled"]["source"] == "llm"
    assert by_key["visit-window"]["value"] == "前后3天"
    assert by_key["report-language"] == {**by_key["report-language"], "value": "中文", "source": "api"}
    assert refresher.seen == [(6, 1)]  # once for the week (a re-run skips it); the project's 6 live messages


def test_given_no_llm_then_a_hot_memory_refresh_is_skipped_and_says_why(api):
    log_english_week(api, previous_week(utcnow()))

    result = get_services().rollup.refresh_hot_memory(scope_ref("acme", "users", "u-en"))

    assert result.status == "skipped" and "LLM_PROVIDER" in (result.reason or "")
    assert api.call("GET", f"{ENGLISH_USER}/hot-memory").body["entries"] == []
