"""Recall over a fake search: the round budget, the round floors, and what chat and commands get."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agent_memory.api.search import RecallRequest, recall_memories
from agent_memory.domain.models import Memory, MemoryType, ScopeRef
from agent_memory.domain.search.ranking import ScoreBreakdown
from agent_memory.domain.search.search import SearchHit, SearchOutcome, SearchQuery
from agent_memory.services.recall import RecallService

USER = ScopeRef(tenant_id="t", user_id="u")
T = datetime(2026, 11, 1, tzinfo=UTC)


def result(key: str, relevance: float, recall_round: str, content: str = "python train.py --epochs 100",
           absolute: float = 0.9) -> SearchHit:
    """A search hit whose relevance (score_breakdown.relevance) is `relevance`; its final score, which usage
    and type priority make, is lower."""
    parts = dict.fromkeys(("keyword", "text", "lexical", "vector", "time_decay", "interaction", "type_priority"),
                          0.0)
    score = round(0.6 * relevance, 4)
    memory = Memory(memory_key=key, tenant_id=USER.tenant_id, user_id=USER.user_id, memory_type=MemoryType.FACT,
                    content=content, importance=70, content_hash="h", created_at=T, updated_at=T, valid_from=T)
    return SearchHit(memory=memory, relevance_score=score, recall_round=recall_round,
                     score_breakdown=ScoreBreakdown(**parts, relevance=relevance, final=score, matched_keywords=[],
                                                    absolute_relevance=absolute))


class FakeSearch:
    """Answers every query with the same results, each search spending the rounds it is allowed."""

    def __init__(self, results: list[SearchHit], rounds_per_search: int = 3) -> None:
        self.results = results
        self.rounds_per_search = rounds_per_search
        self.calls: list[tuple[str, int]] = []

    def search(self, user: ScopeRef, request: SearchQuery, *, max_rounds: int = 3) -> SearchOutcome:
        self.calls.append((request.query, max_rounds))
        return SearchOutcome(hits=self.results, total_found=len(self.results), strategy="x", expanded_keywords=None,
                             rounds_executed=min(max_rounds, self.rounds_per_search))


def recall(search: Any, message: str, **request: Any) -> Any:
    return recall_memories(RecallService(search=search), USER, RecallRequest(message=message, **request))


def test_recall_spends_at_most_three_rounds_over_all_its_queries():
    search = FakeSearch([], rounds_per_search=2)

    output = recall(search, "还是按之前说的高才通方案吧，材料清单呢")

    assert output.rounds_executed <= 3
    assert [budget for _, budget in search.calls] == [3, 1][: len(search.calls)]


def test_each_result_is_recalled_by_a_round_its_relevance_at_that_rounds_floor_and_nothing_is_topped_up():
    search = FakeSearch([result("a", 0.72, "precise"), result("b", 0.65, "precise"), result("c", 0.62, "expanded"),
                         result("d", 0.55, "semantic"), result("e", 0.49, "semantic"), result("f", 0.95, "fill"),
                         result("g", 0.35, "fill")])

    kept = [m.memory_key for m in recall(search, "上次的训练命令是什么").memories]

    assert kept == ["a", "c", "d"]


def test_a_callers_floor_bounds_absolute_relevance_over_the_round_floors():
    search = FakeSearch([result("a", 0.72, "precise"), result("b", 0.9, "fill", absolute=0.91),
                         result("c", 0.8, "precise", absolute=0.29), result("d", 0.55, "precise", absolute=0.8)])
    kept = recall(search, "上次的训练命令是什么", min_relevance_score=0.3).memories
    assert [m.memory_key for m in kept] == ["a"]


def test_an_off_topic_memory_is_not_recalled_however_well_it_ranks():
    search = FakeSearch([result("a", 0.72, "precise", absolute=0.01), result("b", 0.62, "expanded")])
    kept = recall(search, "上次的训练命令是什么").memories
    assert [m.memory_key for m in kept] == ["b"]


def test_a_chat_message_asking_to_rerun_a_command_gets_its_content_and_placeholders():
    output = recall(FakeSearch([result("cmd-1", 0.74, "precise")]), "重新执行上次的训练命令")

    assert output.decision.intent_type == "COMMAND_EXECUTION"
    assert output.placeholders == ["[memory:cmd-1:full]"]
    assert output.context is not None and "内容: python train.py --epochs 100" in output.context


def test_a_direct_command_gets_placeholders_only():
    output = recall(FakeSearch([result("cmd-1", 0.74, "precise")]), "run it", context_type="command")

    assert output.placeholders == ["[memory:cmd-1:full]"] and output.context is None
