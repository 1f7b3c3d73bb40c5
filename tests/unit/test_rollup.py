"""The rollup's pure parts: the week it covers, the week's metrics, the offline writer, the task queue."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from agent_memory.adapters.task_queue import SqsTaskQueue
from agent_memory.domain.models import is_cjk_text
from agent_memory.domain.tiers.memory_layers import LogMessage, week_bounds
from agent_memory.domain.tiers.reports import (
    REPORT_MAX_CHARS,
    ExtractiveReportWriter,
    WeekLog,
    rollup_week,
    week_metrics,
)
from agent_memory.errors import QueueUnavailable
from agent_memory.services.rollup import ScopeTask, parse_task
from agent_memory.services.rollup_schedule import ScheduleRequest, ShardTask
from tests.fakes.sqs import FakeSqs

WEEK = date(2026, 11, 16)  # a Monday


def message(i: int, content: str, at: datetime, *, role: str = "user", conversation: str = "c1",
            intent: str | None = None, author: str | None = None) -> LogMessage:
    return LogMessage(message_id=f"m{i:03d}", conversation_id=conversation, role=role, content=content,  # type: ignore[arg-type]
                      intent=intent, author_id=author, created_at=at, expires_at=at + timedelta(days=30))


def utc(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, 16, hour, minute, tzinfo=UTC) + timedelta(days=day)


# ---- the week -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("now", "timezone", "expected"), [
    (datetime(2026, 11, 23, 1, 0, tzinfo=UTC), "UTC", date(2026, 11, 16)),
    # Monday 01:00 in Shanghai is Sunday 17:00 UTC: still the week before, in Shanghai's calendar.
    (datetime(2026, 11, 22, 17, 0, tzinfo=UTC), "Asia/Shanghai", date(2026, 11, 16)),
    # A retry an hour late on Monday, or a run later in the week: the same week.
    (datetime(2026, 11, 26, 12, 0, tzinfo=UTC), "America/New_York", date(2026, 11, 16)),
])
def test_given_a_schedule_time_then_the_rollup_covers_the_week_before_it_in_its_timezone(now, timezone, expected):
    assert rollup_week(now, timezone) == expected


def test_given_a_week_override_then_it_must_be_a_monday():
    now = datetime(2026, 11, 23, 1, tzinfo=UTC)
    assert rollup_week(now, "UTC", date(2026, 11, 2)) == date(2026, 11, 2)
    with pytest.raises(ValueError, match="Monday"):
        rollup_week(now, "UTC", date(2026, 11, 3))


def test_given_a_week_override_then_the_current_week_may_be_rolled_up_but_not_a_later_one():
    now = datetime(2026, 11, 25, 12, tzinfo=UTC)
    assert rollup_week(now, "UTC", date(2026, 11, 23)) == date(2026, 11, 23)
    with pytest.raises(ValueError, match="has not started"):
        rollup_week(now, "UTC", date(2026, 11, 30))


def test_given_a_timezone_then_the_week_bounds_are_its_local_midnights_and_dst_weeks_have_169_hours():
    start, end = week_bounds(WEEK, ZoneInfo("Asia/Shanghai"))
    assert (start, end) == (datetime(2026, 11, 15, 16, tzinfo=UTC), datetime(2026, 11, 22, 16, tzinfo=UTC))
    # New York leaves daylight saving time on Sunday 2026-11-01: that week is an hour longer.
    start, end = week_bounds(date(2026, 10, 26), ZoneInfo("America/New_York"))
    assert end - start == timedelta(hours=169)


def test_given_a_schedule_event_then_time_and_week_are_read_and_the_rest_ignored():
    request = ScheduleRequest.model_validate({"source": "aws.scheduler", "time": "2026-11-23T01:00:00Z",
                                              "schedule": "arn:aws:scheduler:...", "attempt": "1"})
    assert request.time == datetime(2026, 11, 23, 1, tzinfo=UTC) and request.week is None
    assert ScheduleRequest.model_validate({"week": "2026-11-09"}).week == date(2026, 11, 9)


def test_given_task_bodies_then_they_parse_by_kind():
    shard = parse_task(ShardTask(week=WEEK, shard=3, cursor={"pk": {"S": "x"}}).model_dump_json())
    scope = parse_task(ScopeTask(week=WEEK, tenant_id="acme", scope_id="project/p1").model_dump_json())
    assert isinstance(shard, ShardTask) and shard.cursor == {"pk": {"S": "x"}}
    assert isinstance(scope, ScopeTask) and scope.scope.user_id == "project/p1"


# ---- metrics ------------------------------------------------------------------------------------

def test_given_a_week_then_metrics_count_roles_conversations_local_days_intents_and_authors():
    messages = [
        message(1, "a", utc(0, 9), intent="QC_TASK", author="dr-wang"),
        message(2, "b", utc(0, 9, 1), role="assistant"),
        message(3, "c", utc(2, 23, 30), conversation="c2", intent="QA_QUERY", author="dr-li"),
        message(4, "d", utc(3, 8), conversation="c2", intent="QC_TASK", author="dr-wang"),
    ]

    metrics = week_metrics(messages, "Asia/Shanghai")

    assert metrics == {
        "messages": 4, "by_role": {"user": 3, "assistant": 1}, "conversations": 2,
        # Wednesday 23:30 UTC is Thursday 07:30 in Shanghai: the same local day as Thursday 08:00 UTC.
        "active_days": 2, "messages_by_day": {"2026-11-16": 2, "2026-11-19": 2},
        "intents": {"QC_TASK": 2, "QA_QUERY": 1}, "authors": 2,
    }


# ---- the offline writer -------------------------------------------------------------------------

def week_log(messages: list[LogMessage], timezone: str = "UTC") -> WeekLog:
    return WeekLog(week_start=WEEK, timezone=timezone, messages=messages, metrics=week_metrics(messages, timezone))


CHINESE_WEEK = [
    message(1, "本周新入组3例受试者，其中1例因肝功能异常筛选失败。", utc(0, 9)),
    message(2, "已记录。", utc(0, 9, 1), role="assistant"),
    message(3, "好的谢谢", utc(0, 9, 2)),
    message(4, "数据监查委员会决定把访视窗口放宽到前后3天。", utc(3, 10), conversation="c2"),
]


def test_given_a_chinese_week_then_the_extractive_report_stays_chinese_and_names_the_week():
    draft = ExtractiveReportWriter().write(week_log(CHINESE_WEEK))

    assert draft.summary.splitlines()[0] == "本周共2次对话、4条消息（用户3条），活跃2天。"
    assert "- 本周新入组3例受试者，其中1例因肝功能异常筛选失败。" in draft.summary
    assert "好的谢谢" not in draft.summary  # pleasantries are not news
    assert draft.key_events == ["11-16 本周新入组3例受试者，其中1例因肝功能异常筛选失败。",
                                "11-19 数据监查委员会决定把访视窗口放宽到前后3天。"]
    assert ExtractiveReportWriter.generated_by == "extractive"


def test_given_the_same_week_twice_then_the_extractive_report_is_identical():
    assert ExtractiveReportWriter().write(week_log(CHINESE_WEEK)) == ExtractiveReportWriter().write(
        week_log(list(reversed(CHINESE_WEEK))))


def test_given_a_long_week_then_the_report_keeps_within_500_characters_and_8_key_events():
    messages = [message(i, f"第{i}次会议决定调整第{i}号受试者的给药剂量为{i * 10}毫克，并在下周复查肝功能指标。",
                        utc(i % 7, 9) + timedelta(minutes=i), conversation=f"c{i}") for i in range(60)]

    draft = ExtractiveReportWriter().write(week_log(messages))

    assert len(draft.summary) <= REPORT_MAX_CHARS and is_cjk_text(draft.summary)
    assert len(draft.key_events) == 8


def test_given_an_english_week_then_the_report_is_english():
    messages = [message(1, "I moved the Berlin launch to March 3 because the lease slipped.", utc(1, 8))]

    draft = ExtractiveReportWriter().write(week_log(messages))

    assert draft.summary.startswith("This week: 1 messages (1 from the user) in 1 conversation(s)")
    assert "Berlin launch to March 3" in draft.summary and not is_cjk_text(draft.summary)


# ---- the task queue -----------------------------------------------------------------------------

def test_given_23_tasks_then_they_go_10_per_call():
    client = FakeSqs()
    SqsTaskQueue(queue_url="q", client=client).send([str(i) for i in range(23)])
    assert [len(c) for c in client.calls] == [10, 10, 3]


def test_given_refused_entries_then_only_they_are_sent_again():
    client = FakeSqs(refuse_once={"1", "4"})
    SqsTaskQueue(queue_url="q", client=client, backoff_seconds=0).send(["a", "b", "c", "d", "e"])
    assert client.bodies == [["a", "b", "c", "d", "e"], ["b", "e"]]


def test_given_a_sender_fault_then_the_queue_raises():
    with pytest.raises(QueueUnavailable):
        SqsTaskQueue(queue_url="q", client=FakeSqs(refuse_once={"0"}, sender_fault=True)).send(["a"])


def test_given_an_unknown_rollup_timezone_then_settings_refuse_it():
    from pydantic import ValidationError

    from agent_memory.settings import Settings

    assert Settings(rollup_timezone="Asia/Shanghai").rollup_timezone == "Asia/Shanghai"
    with pytest.raises(ValidationError, match="rollup_timezone"):
        Settings(rollup_timezone="Mars/Olympus_Mons")


@pytest.mark.parametrize(("week", "message"), [("notaweek", "YYYY-MM-DD"), ("2026-11-17", "Tuesday")])
def test_make_rollup_refuses_a_week_that_is_not_a_monday_before_sending_anything(week, message):
    import argparse

    from local.rollup import _monday

    with pytest.raises(argparse.ArgumentTypeError, match=message):
        _monday(week)
    assert _monday("2026-11-16") == "2026-11-16"
