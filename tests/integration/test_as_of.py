"""As-of reads on every search tier: "what did we know on date D" answered from the version history, through
search, load_context and the profile, ranked as a search of the current memories ranks them.

The tiers: serverless, osmem-server and a real OpenSearch node (the OpenSearch tier indexes current memories
only; its as-of reads come from the table, like the serverless tier's)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.adapters.opensearch.index import OpenSearchIndex
from agent_memory.api.search import SearchRequest, search_memories
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef, utcnow
from tests.fakes.search_tiers import TIERS, services_on_tier

ALICE = ScopeRef(tenant_id="acme", user_id="alice")
BOB = ScopeRef(tenant_id="acme", user_id="bob")


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture(params=TIERS)
def services(request: pytest.FixtureRequest, dynamodb_client: Any) -> Iterator[Any]:
    yield from services_on_tier(request, dynamodb_client, "test-asof")


def save(built: Any, index: OpenSearchIndex | None, user: ScopeRef, content: str, when: str, **extra: Any) -> Any:
    result = built.save.save(user, NewMemory(memory_type=extra.pop("memory_type", MemoryType.FACT), content=content,
                                             created_at=day(when), **extra))
    if index is not None:  # what the stream indexer does in AWS
        index.upsert(result.memory)
        if result.superseded is not None:
            index.delete(user.tenant_id, user.user_id, result.superseded.memory_key)
        index._client.indices.refresh(index=index._alias)
    return result.memory


def found(built: Any, query: str, as_of: datetime | None, mode: str = "keyword", user: ScopeRef = ALICE) -> list[str]:
    output = search_memories(built.search, user, SearchRequest(query=query, search_mode=mode, min_relevance_score=0,
                                                               limit=10, as_of=as_of))
    return [r.content_preview for r in output.results]


@pytest.fixture
def chains(services: Any) -> Any:
    """Three supersessions of a Chinese field and of an English one, a memory deleted today, another user."""
    built, index, modes = services
    save(built, index, ALICE, "我住在杭州", "2024-01-01", field="location")
    save(built, index, ALICE, "我搬到了上海", "2024-06-01", field="location")
    save(built, index, ALICE, "我现在住在深圳", "2025-01-01", field="location")
    save(built, index, ALICE, "I work at Siemens as an engineer", "2024-02-01", field="company")
    save(built, index, ALICE, "I work at SAP as an engineer", "2024-07-01", field="company")
    save(built, index, ALICE, "I work at Zalando as an engineer", "2025-02-01", field="company")
    gone = save(built, index, ALICE, "I keep a parrot called Kiwi", "2024-03-01", memory_type=MemoryType.FACT)
    built.save.delete(ALICE, gone.memory_key)
    if index is not None:
        index.delete(ALICE.tenant_id, ALICE.user_id, gone.memory_key)
        index._client.indices.refresh(index=index._alias)
    save(built, index, BOB, "I work at Siemens too, as an engineer", "2024-01-15")
    return built, modes


@pytest.mark.parametrize(("when", "city", "employer"), [
    ("2023-12-01", None, None),
    ("2024-03-01", "我住在杭州", "I work at Siemens as an engineer"),
    ("2024-09-01", "我搬到了上海", "I work at SAP as an engineer"),
    ("2025-06-01", "我现在住在深圳", "I work at Zalando as an engineer"),
])
def test_given_three_supersessions_when_searched_as_of_a_date_then_the_version_known_then_answers(
        chains, when, city, employer):
    built, modes = chains
    for mode in modes:
        cities = [c for c in found(built, "我住在哪里 杭州 上海 深圳", day(when), mode) if c.startswith("我")]
        jobs = [c for c in found(built, "where do I work Siemens SAP Zalando engineer", day(when), mode)
                if c.startswith("I work")]

        assert cities == ([city] if city else []), mode
        assert jobs == ([employer] if employer else []), mode


def test_given_the_moment_of_a_supersession_then_the_newer_version_answers_from_that_instant(chains):
    built, _ = chains

    assert found(built, "Siemens SAP engineer", day("2024-07-01"))[:1] == ["I work at SAP as an engineer"]
    assert "I work at Siemens as an engineer" in found(built, "Siemens SAP engineer",
                                                       datetime(2024, 6, 30, 23, 59, 59, tzinfo=UTC))


def test_given_a_deleted_memory_then_it_is_found_as_of_before_the_delete_and_not_after(chains):
    built, _ = chains

    assert found(built, "parrot Kiwi", day("2024-05-01")) == ["I keep a parrot called Kiwi"]
    assert found(built, "parrot Kiwi", day("2024-02-01")) == []  # before it was said
    assert found(built, "parrot Kiwi", utcnow()) == []
    assert found(built, "parrot Kiwi", None) == []


def test_given_as_of_now_then_the_results_are_those_of_a_current_search_with_the_same_scores(chains):
    built, modes = chains
    for mode in modes:
        for query in ("我住在哪里", "where do I work", "engineer"):
            now = search_memories(built.search, ALICE, SearchRequest(query=query, search_mode=mode, limit=10,
                                                                     min_relevance_score=0))
            then = search_memories(built.search, ALICE, SearchRequest(query=query, search_mode=mode, limit=10,
                                                                      min_relevance_score=0, as_of=utcnow()))

            assert [r.memory_key for r in then.results] == [r.memory_key for r in now.results], (mode, query)
            assert [r.relevance_score for r in then.results] == pytest.approx(
                [r.relevance_score for r in now.results], abs=1e-3), (mode, query)
            assert then.as_of is not None and now.as_of is None


def test_given_another_users_versions_then_an_as_of_search_never_returns_them(chains):
    built, _ = chains

    assert found(built, "Siemens", day("2024-01-20"), user=BOB) == ["I work at Siemens too, as an engineer"]
    assert found(built, "Siemens", day("2024-01-20")) == []  # Alice's Siemens version starts 2024-02-01


def test_given_as_of_then_load_context_answers_the_memories_known_then(chains):
    built, _ = chains

    early = built.load.load_context(ALICE, "", 20, as_of=day("2024-03-01"))
    later = built.load.load_context(ALICE, "where do I work", 20, as_of=day("2024-09-01"))
    now = built.load.load_context(ALICE, "", 20)

    assert sorted(m.content for m in early.memories) == sorted(
        ["我住在杭州", "I work at Siemens as an engineer", "I keep a parrot called Kiwi"])
    assert early.total_memories == 3
    assert sorted(m.content for m in later.memories) == sorted(
        ["我搬到了上海", "I work at SAP as an engineer", "I keep a parrot called Kiwi"])
    assert sorted(m.content for m in now.memories) == sorted(["我现在住在深圳", "I work at Zalando as an engineer"])


def test_given_as_of_then_the_profile_is_built_from_the_memories_known_then(chains):
    built, _ = chains

    then = built.summarize.summarize(ALICE, as_of=day("2024-09-01"))
    now = built.summarize.summarize(ALICE)

    assert then.profile.user_profile["basic"]["location"] == "我搬到了上海"
    assert then.profile.user_profile["career"]["company"] == "I work at SAP as an engineer"
    assert now.profile.user_profile["basic"]["location"] == "我现在住在深圳"
    assert built.summarize.summarize(ALICE, as_of=day("2024-09-01")) is then  # cached per instant
