"""Context for a prompt from the three layers, over the fake layer store."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from agent_memory.domain.layers import Intent, LogMessage, WeeklyReport
from agent_memory.domain.models import ScopeRef, utcnow
from agent_memory.services.conversation_log import ConversationLogService
from agent_memory.services.memory_layers import MemoryLayersService
from tests.fakes.layer_store import FakeLayerStore

SCOPE = ScopeRef(tenant_id="t", user_id="project/p-1")
MOMENT = datetime(2026, 11, 20, tzinfo=UTC)


def service(store: FakeLayerStore) -> MemoryLayersService:
    log = ConversationLogService(layers=store, embedder=lambda: None)
    return MemoryLayersService(layers=store, log=log, embedder=lambda: None,
                               question_intents=frozenset({"qa_query"}))


def report(week: int, summary: str) -> WeeklyReport:
    start = date(2026, 10, 5) + timedelta(weeks=week)
    return WeeklyReport(week_start=start, week_end=start + timedelta(days=6), summary=summary, created_at=MOMENT)


@pytest.mark.parametrize(("reports", "log_searched"), [
    (["访视窗口由PI确认为±3天", "访视窗口的例外须报伦理委员会"], False),  # the history book is full
    (["访视窗口由PI确认为±3天"], True),  # thin: one report of two
    ([], True),
])
def test_the_log_is_searched_only_when_the_history_book_is_thin(reports, log_searched):
    store = FakeLayerStore()
    for week, summary in enumerate(reports):
        store.put_report_if_absent(SCOPE, report(week, summary))
    now = utcnow()
    store.append_messages(SCOPE, [LogMessage(message_id="m-1", conversation_id="c1", role="user",
                                             content="访视窗口可以放宽到5天吗", created_at=now - timedelta(hours=1),
                                             expires_at=now + timedelta(days=30))], set())

    context = service(store).context_for_prompt(SCOPE, Intent(type="QA_QUERY", query="访视窗口"))

    assert ("log" in [p.layer for p in context.parts]) is log_searched
    assert [p.layer for p in context.parts if p.layer == "reports"] == (["reports"] if reports else [])
