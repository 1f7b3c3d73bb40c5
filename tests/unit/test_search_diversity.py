"""Diversified search results: maximal marginal relevance over the best-ranked memories, on both the
in-process index's vectors and vectors the index is asked for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.api.search import SearchRequest, search_memories
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.settings import Settings
from tests.fakes.embedders import HashingEmbedder
from tests.fakes.services import services_over_fakes
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t", user_id="u")
START = datetime(2026, 3, 1, tzinfo=UTC)
# Two memories say the same thing; the third is about the same city, and something else.
REPEATED = "The user moved to Hong Kong in March with the family"
REPEATED_AGAIN = "The user moved to Hong Kong in March with the whole family"
OTHER = "The family chose a school in Hong Kong for the daughter"


def services(diversity: float, embedder: HashingEmbedder | None = None):
    embedder = embedder or HashingEmbedder()
    store = InMemoryMemoryStore()
    for i, content in enumerate([REPEATED, REPEATED_AGAIN, OTHER]):
        store.save(USER, NewMemory(memory_type=MemoryType.FACT, content=content, importance=70,
                                   created_at=START + timedelta(days=i),
                                   embedding=encode_vector(embedder.embed_documents([content])[0]),
                                   embedding_model=embedder.model_id))
    settings = Settings(memory_table_name="x", memory_search_diversity=diversity)
    return services_over_fakes(settings, store=store, embedder=embedder)


def search(built, mode: str = "hybrid", limit: int = 3):
    return search_memories(built.search, USER, SearchRequest(query="Hong Kong family", limit=limit,
                                                   min_relevance_score=0.0, search_mode=mode)).results


def test_by_score_alone_the_two_repeats_come_first():
    results = search(services(0.0))
    assert [r.summary for r in results][:2] in ([REPEATED, REPEATED_AGAIN], [REPEATED_AGAIN, REPEATED])
    assert all(r.score_breakdown.redundancy == 0.0 for r in results)
    assert [r.relevance_score for r in results] == sorted((r.relevance_score for r in results), reverse=True)


def test_diversified_the_memory_that_adds_something_takes_the_repeats_place_on_the_page_shown_by_score():
    results = search(services(0.4), limit=2)
    assert results[1].summary == OTHER and results[0].summary in (REPEATED, REPEATED_AGAIN)
    assert results[0].score_breakdown.redundancy == 0.0 and results[1].score_breakdown.redundancy < 0.9
    assert results[0].relevance_score > results[1].relevance_score  # the page is in the order of its scores


def test_a_page_holding_every_candidate_is_the_score_order_whatever_the_diversity():
    diverse, by_score = search(services(0.4)), search(services(0.0))
    assert [r.summary for r in diverse] == [r.summary for r in by_score]
    assert [r.relevance_score for r in diverse] == sorted((r.relevance_score for r in diverse), reverse=True)


def test_keyword_mode_has_no_vectors_and_keeps_the_score_order():
    results = search(services(0.4), mode="keyword")
    assert all(r.score_breakdown.redundancy == 0.0 for r in results)
    assert [r.relevance_score for r in results] == sorted((r.relevance_score for r in results), reverse=True)


def test_a_ranking_without_the_candidates_vectors_asks_the_index_for_them(monkeypatch):
    built = services(0.4)
    asked: list[list[str]] = []
    index = built.search._index
    given = index.vectors

    def vectors(user, keys):
        asked.append(keys)
        return given(user, keys)

    candidates = index.candidates

    def without_embeddings(user, query):  # as the OpenSearch tier proposes them
        return [c.model_copy(update={"embedding": None}) for c in candidates(user, query)]

    monkeypatch.setattr(index, "candidates", without_embeddings)
    monkeypatch.setattr(index, "vectors", vectors)
    results = search(built, limit=2)
    assert results[1].summary == OTHER and len(asked) == 1 and len(asked[0]) == 3


def test_the_setting_is_bounded():
    with pytest.raises(ValueError, match="memory_search_diversity"):
        Settings(memory_table_name="x", memory_search_diversity=1.5)
