"""Context for a prompt from the three layers, over the fake layer store."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from agent_memory.domain.models import ScopeRef, utcnow
from agent_memory.domain.tiers.memory_layers import Intent, LogMessage, WeeklyReport
from agent_memory.services.conversation_log import ConversationLogService
from agent_memory.services.memory_layers import MemoryLayersService
from tests.fakes.layer_store import FakeLayerStore

SCOPE = ScopeRef(tenant_id="t", user_id="project/p-1")
MOMENT = datetime(2026, 11, 20, tzinfo=UTC)


def service(store: FakeLayerStore, retrievers: dict[str, Any] | None = None) -> MemoryLayersService:
    log = ConversationLogService(layers=store, embedder=lambda: None)
    return MemoryLayersService(layers=store, log=log, embedder=lambda: None,
                               question_intents=frozenset({"qa_query"}), retrievers=retrievers)


def report(week: int, summary: str) -> WeeklyReport:
    start = date(2026, 10, 5) + timedelta(weeks=week)
    return WeeklyReport(week_start=start, week_end=start + timedelta(days=6), summary=summary, created_at=MOMENT)


@pytest.mark.parametrize("reports", [
    ["访视窗口由PI确认为±3天", "访视窗口的例外须报伦理委员会"],  # as many reports as a question gets
    ["访视窗口由PI确认为±3天"],
    [],
])
def test_a_question_gets_the_matching_reports_and_the_log_however_many_reports_matched(reports):
    store = FakeLayerStore()
    for week, summary in enumerate(reports):
        store.put_report_if_absent(SCOPE, report(week, summary))
    now = utcnow()
    store.append_messages(SCOPE, [LogMessage(message_id="m-1", conversation_id="c1", role="user",
                                             content="访视窗口可以放宽到5天吗", created_at=now - timedelta(hours=1),
                                             expires_at=now + timedelta(days=30))], set())

    context = service(store).context_for_prompt(SCOPE, Intent(type="QA_QUERY", query="访视窗口"))

    assert [p.layer for p in context.parts] == (["reports"] if reports else []) + ["log"]
    assert "访视窗口可以放宽到5天吗" in context.text


class Folder:
    """A retriever answering every query with the same items, recording what it was asked."""

    def __init__(self, *items: dict[str, Any]) -> None:
        self.items = list(items)
        self.asked: list[tuple[str, str]] = []

    def retrieve(self, user: ScopeRef, query: str, limit: int) -> list[dict[str, Any]]:
        self.asked.append((user.user_id, query))
        return self.items[:limit]


@pytest.mark.parametrize(("intent", "layer", "title"), [
    ("QC_TASK", "sop", "## 相关SOP"),
    ("PROTOCOL_QA", "protocol", "## 方案知识库"),
])
def test_a_qc_task_gets_hot_memory_and_the_sops_and_a_protocol_question_the_knowledge_base(intent, layer, title):
    from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType

    store = FakeLayerStore()
    store.put_hot(SCOPE, HotMemoryEntry(type=HotMemoryType.STATUS, key="enrolled", value=12, created_at=MOMENT,
                                        updated_at=MOMENT))
    sop = Folder({"content": "- [ ] 知情同意书签署日期早于入组日期", "source": "qc.md › 入组"})
    protocol = Folder({"content": "入组标准：18至65岁", "source": "protocol.md › 入组标准"})

    context = service(store, {"sop": sop, "protocol": protocol}).context_for_prompt(
        SCOPE, Intent(type=intent, query="入组"))

    assert [p.layer for p in context.parts] == ["hot_memory", layer]
    assert context.parts[1].text.startswith(title + "\n- [")
    assert (sop if layer == "sop" else protocol).asked == [(SCOPE.user_id, "入组")]
    assert (protocol if layer == "sop" else sop).asked == []  # the other source is not asked
    assert "reports" in context.skipped and "log" in context.skipped


def test_a_retrieval_with_nothing_found_or_no_retriever_is_named_as_skipped():
    nothing = service(FakeLayerStore(), {"sop": Folder()}).context_for_prompt(SCOPE, Intent(type="QC_TASK",
                                                                                             query="入组"))
    assert nothing.parts == [] and "sop" in nothing.skipped
    unset = service(FakeLayerStore()).context_for_prompt(SCOPE, Intent(type="PROTOCOL_QA", query="入组"))
    assert unset.parts == [] and "protocol" in unset.skipped
