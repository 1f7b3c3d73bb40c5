"""The weekly report's deterministic parts (the weekly memory rollup): the week a rollup covers,
the week's metrics, and the offline writer. Pure: no I/O, no clock, no SDK.

Metrics are always counted here, never by the LLM: an LLM writes the prose (summary, key events)
and is told to quote these numbers, so a report's counts are right whoever wrote its text.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.inject.summary import extractive_summary
from agent_memory.domain.models import is_cjk_text
from agent_memory.domain.tiers.memory_layers import LogMessage, previous_week

REPORT_MAX_CHARS = 500  # a report is at most 500 characters ("不超过500字")
MAX_KEY_EVENTS = 8
KEY_EVENT_MAX_CHARS = 160


def rollup_week(now: datetime, timezone: str, week: date | None = None) -> date:
    """The week a rollup at `now` reports on: `week` when given (it must be a Monday), else the week
    before `now`'s in the rollup's timezone (Monday 01:00 Shanghai is Sunday 17:00 UTC: still last week)."""
    if week is None:
        return previous_week(now, ZoneInfo(timezone))
    if week.weekday() != 0:
        raise ValueError(f"a week starts on a Monday; {week.isoformat()} is a {week.strftime('%A')}")
    this_week = previous_week(now, ZoneInfo(timezone)) + timedelta(days=7)
    if week > this_week:  # the week under way may be rolled up (a partial report); a later one holds nothing yet
        raise ValueError(f"the week of {week.isoformat()} has not started (the current week began "
                         f"{this_week.isoformat()})")
    return week


class ReportDraft(BaseModel):
    """What a writer produces: the report's prose. The service adds the week, metrics and embedding."""

    model_config = ConfigDict(frozen=True)

    summary: str = Field(min_length=1, max_length=REPORT_MAX_CHARS)
    key_events: list[str] = Field(default_factory=list, max_length=MAX_KEY_EVENTS)


class WeekLog(BaseModel):
    """A scope's week, as a report writer sees it."""

    model_config = ConfigDict(frozen=True)

    week_start: date
    timezone: str = "UTC"
    project: bool = False
    messages: list[LogMessage]
    metrics: dict[str, Any]

    @property
    def week_end(self) -> date:
        return self.week_start + timedelta(days=6)

    @property
    def zh(self) -> bool:
        """The conversation's language decides the report's (what the user wrote, else everything)."""
        users = [m.content for m in self.messages if m.role == "user"]
        return is_cjk_text("\n".join(users or [m.content for m in self.messages]))


def week_metrics(messages: list[LogMessage], timezone: str = "UTC") -> dict[str, Any]:
    """Counts for the report: messages (by role, by local day), conversations, active days, intents."""
    tz = ZoneInfo(timezone)
    by_day = Counter(m.created_at.astimezone(tz).date().isoformat() for m in messages)
    metrics: dict[str, Any] = {
        "messages": len(messages),
        "by_role": {role: sum(1 for m in messages if m.role == role) for role in ("user", "assistant")},
        "conversations": len({m.conversation_id for m in messages}),
        "active_days": len(by_day),
        "messages_by_day": dict(sorted(by_day.items())),
        "intents": dict(sorted(Counter(m.intent for m in messages if m.intent).items(),
                               key=lambda kv: (-kv[1], kv[0]))),
    }
    authors = {m.author_id for m in messages if m.author_id}
    if authors:
        metrics["authors"] = len(authors)
    return metrics


def _dialogue(messages: list[LogMessage]) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def _in_order(messages: list[LogMessage]) -> list[LogMessage]:
    return sorted(messages, key=lambda m: (m.created_at, m.message_id))


def _lines(summary: str) -> list[str]:
    return [line.removeprefix("- ").strip() for line in summary.splitlines() if line.strip()]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ExtractiveReportWriter:
    """The offline writer: a counts line in the conversation's language, then the week's most
    informative sentences, verbatim (so Chinese stays Chinese); one key event per conversation.
    Deterministic: the same log always gives the same report."""

    generated_by: Literal["llm", "extractive"] = "extractive"

    def write(self, week: WeekLog) -> ReportDraft:
        metrics = week.metrics
        users = metrics["by_role"]["user"]
        if week.zh:
            header = (f"本周共{metrics['conversations']}次对话、{metrics['messages']}条消息"
                      f"（用户{users}条），活跃{metrics['active_days']}天。")
        else:
            header = (f"This week: {metrics['messages']} messages ({users} from the user) in "
                      f"{metrics['conversations']} conversation(s) over {metrics['active_days']} active day(s).")
        body = extractive_summary(_dialogue(_in_order(week.messages)), max_chars=REPORT_MAX_CHARS - len(header) - 1)
        summary = f"{header}\n{body}" if body else header
        return ReportDraft(summary=_cut(summary, REPORT_MAX_CHARS), key_events=self._key_events(week))

    def _key_events(self, week: WeekLog) -> list[str]:
        tz = ZoneInfo(week.timezone)
        conversations: dict[str, list[LogMessage]] = {}
        for message in _in_order(week.messages):
            conversations.setdefault(message.conversation_id, []).append(message)
        events = []
        for messages in conversations.values():
            lines = _lines(extractive_summary(_dialogue(messages), max_chars=KEY_EVENT_MAX_CHARS - 8))
            if lines:
                day = messages[0].created_at.astimezone(tz).strftime("%m-%d")
                events.append(_cut(f"{day} {' '.join(lines)}", KEY_EVENT_MAX_CHARS))
        return events[:MAX_KEY_EVENTS]
