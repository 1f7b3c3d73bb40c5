"""Periods read from search queries, and how close a memory's date lies to one."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from agent_memory.api.search import SearchRequest, search_memories
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.temporal import AFTERWARDS, time_cue
from agent_memory.services.search import SearchService
from agent_memory.settings import Settings
from tests.fakes.services import services_over_fakes
from tests.fakes.store import InMemoryMemoryStore

NOW = datetime(2026, 11, 23, 15, 0, tzinfo=UTC)
USER = ScopeRef(tenant_id="t", user_id="u")


def period(query: str) -> tuple[date, date, str, bool] | None:
    cue = time_cue(query, NOW)
    return None if cue is None else (cue.start.date(), cue.end.date(), cue.text, cue.every_year)


@pytest.mark.parametrize(("query", "expected"), [
    ("What painting did Melanie show on October 13, 2023?", (date(2023, 10, 13), date(2023, 10, 14),
                                                             "October 13, 2023", False)),
    ("What did Gina find on 1 February, 2023?", (date(2023, 2, 1), date(2023, 2, 2), "1 February, 2023", False)),
    ("the 3rd of March 2024 trip", (date(2024, 3, 3), date(2024, 3, 4), "3rd of March 2024", False)),
    ("What setback did Melanie face in October 2023?", (date(2023, 10, 1), date(2023, 11, 1), "October 2023",
                                                        False)),
    ("plans for Dec. 2025", (date(2025, 12, 1), date(2026, 1, 1), "Dec. 2025", False)),
    ("beach trips in 2023?", (date(2023, 1, 1), date(2024, 1, 1), "in 2023", False)),
    ("camping in June?", (date(2026, 6, 1), date(2026, 7, 1), "in June", True)),
    ("what happened in december", (date(2025, 12, 1), date(2026, 1, 1), "in december", True)),
    ("我2023年5月去了哪里", (date(2023, 5, 1), date(2023, 6, 1), "2023年5月", False)),
    ("2024年10月1日的安排", (date(2024, 10, 1), date(2024, 10, 2), "2024年10月1日", False)),
    ("5月13号那天", (date(2026, 5, 13), date(2026, 5, 14), "5月13号", True)),
    ("2022年的计划", (date(2022, 1, 1), date(2023, 1, 1), "2022年", False)),
    ("what did I say yesterday", (date(2026, 11, 22), date(2026, 11, 23), "yesterday", False)),
    ("上周我说了什么", (date(2026, 11, 16), date(2026, 11, 23), "上周", False)),
    ("last month's goals", (date(2026, 10, 1), date(2026, 11, 1), "last month", False)),
    ("去年的旅行", (date(2025, 1, 1), date(2026, 1, 1), "去年", False)),
])
def test_named_periods_are_read(query: str, expected: tuple[date, date, str, bool]) -> None:
    assert period(query) == expected


@pytest.mark.parametrize("query", [
    "May I ask what you like?", "the march of time", "Where did Caroline move from 4 years ago?",
    "what is my phone number 2023456789", "February 30, 2023", "room 2023", "高才通B类的条件",
])
def test_no_period_where_the_words_leave_doubt(query: str) -> None:
    assert time_cue(query, NOW) is None


def test_closeness_is_full_inside_the_period_and_shortly_after() -> None:
    cue = time_cue("in July 2023", NOW)
    assert cue is not None
    assert cue.closeness(datetime(2023, 7, 1, tzinfo=UTC), 14) == 1.0
    assert cue.closeness(datetime(2023, 7, 31, 23, tzinfo=UTC), 14) == 1.0
    assert cue.closeness(datetime(2023, 8, 1, tzinfo=UTC) + AFTERWARDS / 2, 14) == 1.0


def test_closeness_halves_every_half_life_outside() -> None:
    cue = time_cue("in July 2023", NOW)
    assert cue is not None
    before = cue.closeness(datetime(2023, 6, 17, tzinfo=UTC), 14)
    after = cue.closeness(datetime(2023, 8, 1, tzinfo=UTC) + AFTERWARDS + (datetime(2023, 7, 15, tzinfo=UTC)
                                                                           - datetime(2023, 7, 1, tzinfo=UTC)), 14)
    assert before == pytest.approx(0.5)
    assert after == pytest.approx(0.5)
    assert cue.closeness(datetime(2021, 7, 15, tzinfo=UTC), 14) < 1e-9


def test_a_month_without_a_year_matches_that_month_of_any_year() -> None:
    cue = time_cue("camping in June", NOW)
    assert cue is not None
    assert cue.closeness(datetime(2023, 6, 20, tzinfo=UTC), 14) == 1.0
    assert cue.closeness(datetime(2024, 1, 15, tzinfo=UTC), 14) < 0.01


def test_29_february_without_a_year_does_not_fail_in_other_years() -> None:
    cue = time_cue("2月29日", datetime(2025, 3, 10, tzinfo=UTC))
    assert cue is not None and cue.start == datetime(2024, 2, 29, tzinfo=UTC)
    assert cue.closeness(datetime(2024, 3, 1, tzinfo=UTC), 14) == 1.0
    assert 0.0 <= cue.closeness(datetime(2023, 3, 1, tzinfo=UTC), 14) <= 1.0


def camping_search(settings: Settings) -> SearchService:
    """A search over the same words said in March, July and October 2023."""
    store = InMemoryMemoryStore()
    for month in (3, 7, 10):
        store.save(USER, NewMemory(memory_type=MemoryType.FACT, content=f"Went camping at the lake ({month})",
                                   created_at=datetime(2023, month, 12, tzinfo=UTC)))
    return services_over_fakes(settings, store=store, embedder=None).search


def test_search_ranks_what_was_said_in_the_named_period_first_and_says_which_period():
    search = camping_search(Settings())

    output = search_memories(search, USER,
                             SearchRequest(query="camping at the lake in July 2023", min_relevance_score=0))
    recency = search_memories(search, USER, SearchRequest(query="camping at the lake", min_relevance_score=0))

    assert output.results[0].content_preview.endswith("(7)")
    assert output.time_cue is not None and output.time_cue.text == "July 2023"
    assert output.time_cue.start == datetime(2023, 7, 1, tzinfo=UTC)
    assert recency.results[0].content_preview.endswith("(10)") and recency.time_cue is None


def test_a_zero_time_cue_weight_leaves_ranking_to_recency():
    search = camping_search(Settings(memory_search_time_cue_weight=0))

    output = search_memories(search, USER,
                             SearchRequest(query="camping at the lake in July 2023", min_relevance_score=0))

    assert output.results[0].content_preview.endswith("(10)") and output.time_cue is None
