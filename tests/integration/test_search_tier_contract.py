"""One contract for every search tier: the same memories, the same requests, the same answers.

The tiers: serverless (in the function), a real OpenSearch 2.19 with the k-NN plugin (local/opensearch_node.py,
started once per test run) and osmem-server (in-memory, OpenSearch-compatible, no kNN and no custom analysers:
keyword mode over an index made before the `text` field, which the adapter searches through its older fields). The
ranking layer is shared, so the tiers may differ only in which candidates they propose. Semantic and hybrid
searches use a bag-of-words embedder, so texts sharing words are near.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.adapters.opensearch.index import OpenSearchIndex
from agent_memory.api.search import SearchRequest, search_memories
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from tests.fakes.search_tiers import TIERS, services_on_tier

ALICE = ScopeRef(tenant_id="acme", user_id="alice")
MALLORY = ScopeRef(tenant_id="evil", user_id="alice")
BOB = ScopeRef(tenant_id="acme", user_id="bob")
ALL_MODES = ("keyword", "semantic", "hybrid")


@pytest.fixture(params=TIERS)
def services(request: pytest.FixtureRequest, dynamodb_client: Any) -> Iterator[Any]:
    yield from services_on_tier(request, dynamodb_client, "test-mem")


def save(built: Any, index: OpenSearchIndex | None, user: ScopeRef, content: str, **extra: Any) -> None:
    result = built.save.save(user, NewMemory(memory_type=extra.pop("memory_type", MemoryType.FACT), content=content,
                                             **extra))
    if index is not None:  # what the stream indexer does in AWS
        index.upsert(result.memory)
        if result.superseded is not None:
            index.delete(user.tenant_id, user.user_id, result.superseded.memory_key)
        index._client.indices.refresh(index=index._alias)  # only the test refreshes; the adapter never does


def contents(built: Any, user: ScopeRef, mode: str = "keyword", **request: Any) -> list[str]:
    output = search_memories(built.search, user,
                             SearchRequest(search_mode=mode, min_relevance_score=0, limit=10, **request))
    return [r.content_preview for r in output.results]


@pytest.fixture
def seeded(services: Any) -> Any:
    """The services, with `modes`: the search modes this tier runs."""
    built, index, modes = services
    save(built, index, ALICE, "对高才通B类非常感兴趣", memory_type=MemoryType.INTENT, category="TTPS",
         created_at=datetime(2025, 3, 1, tzinfo=UTC))
    save(built, index, ALICE, "用户32岁", field="age")
    save(built, index, ALICE, "用户33岁", field="age")
    save(built, index, ALICE, "I play tennis every Sunday", memory_type=MemoryType.PREFERENCE,
         created_at=datetime(2025, 6, 1, tzinfo=UTC))
    save(built, index, ALICE, "My sister lives in Toronto", created_at=datetime(2024, 1, 1, tzinfo=UTC))
    save(built, index, ALICE, "My sister plays tennis in Toronto", created_at=datetime(2023, 1, 1, tzinfo=UTC))
    save(built, index, MALLORY, "mallory also plays tennis every Sunday")
    save(built, index, BOB, "bob plays tennis every Sunday")
    return Seeded(built, modes)


class Seeded:
    def __init__(self, built: Any, modes: tuple[str, ...]) -> None:
        self.search, self.modes = built.search, modes


def test_chinese_prefix_and_english_stems(seeded):
    assert contents(seeded, ALICE, query="高才通")[0] == "对高才通B类非常感兴趣"
    assert contents(seeded, ALICE, query="playing tennis")[0] == "I play tennis every Sunday"


def test_every_mode_finds_the_memory_sharing_the_query_words(seeded):
    for mode in seeded.modes:
        assert contents(seeded, ALICE, mode, query="tennis every Sunday")[0] == "I play tennis every Sunday", mode


def test_superseded_never_current(seeded):
    for mode in seeded.modes:
        found = contents(seeded, ALICE, mode, query="用户 岁 用户33岁 用户32岁")
        assert "用户33岁" in found and "用户32岁" not in found, mode


def test_memory_type_filter_in_every_mode(seeded):
    for mode in seeded.modes:
        assert contents(seeded, ALICE, mode, query="tennis sister Toronto",
                        memory_types=[MemoryType.PREFERENCE]) == ["I play tennis every Sunday"], mode


def test_time_range_filter_in_every_mode(seeded):
    window = (datetime(2023, 6, 1, tzinfo=UTC), datetime(2025, 4, 1, tzinfo=UTC))
    for mode in seeded.modes:
        found = contents(seeded, ALICE, mode, query="sister tennis Toronto Sunday", time_range=window)
        assert found[0] == "My sister lives in Toronto", mode
        assert set(found) <= {"My sister lives in Toronto", "对高才通B类非常感兴趣"}, mode  # the two inside it


def test_tenant_and_user_isolation_in_every_mode(seeded):
    for mode in seeded.modes:
        mine = contents(seeded, ALICE, mode, query="plays tennis every Sunday")
        assert not {"mallory also plays tennis every Sunday", "bob plays tennis every Sunday"} & set(mine), mode
        assert contents(seeded, MALLORY, mode, query="plays tennis every Sunday") == [
            "mallory also plays tennis every Sunday"], mode
        assert contents(seeded, BOB, mode, query="plays tennis every Sunday") == ["bob plays tennis every Sunday"], mode


def test_a_question_is_found_through_the_turn_answering_it_and_never_another_users(services):
    built, index, _ = services
    question, answer = "How long have you had the turtles?", "Three years now, they bring me joy!"
    save(built, index, ALICE, question, conversation_id="c-1")
    save(built, index, ALICE, answer, conversation_id="c-1", context=question)
    save(built, index, MALLORY, "How long is the trip?", conversation_id="c-1")
    save(built, index, MALLORY, answer, conversation_id="c-1", context="How long is the trip?")

    # The question shares no word with the query: it comes in with a share of its answer's BM25 score.
    assert contents(built, ALICE, query="three years") == [answer, question]
    assert contents(built, MALLORY, query="three years") == [answer, "How long is the trip?"]


def test_nearest_proposes_the_users_own_memories_nearest_first(services):
    built, index, modes = services
    if "semantic" not in modes:
        pytest.skip("this tier runs no kNN")
    for user, content in ((ALICE, "I play tennis every Sunday"), (ALICE, "My sister lives in Toronto"),
                          (MALLORY, "mallory plays tennis every Sunday"), (BOB, "bob plays tennis every Sunday")):
        save(built, index, user, content)
    vectors = built.embedder_provider().embed_documents(["tennis every Sunday", "sister in Toronto"])

    tennis, sister = built.index.nearest(ALICE, vectors, 5)

    assert [c.memory.content for c in tennis] == ["I play tennis every Sunday", "My sister lives in Toronto"]
    assert sister[0].memory.content == "My sister lives in Toronto"
    assert tennis[0].vector == pytest.approx(float(vectors[0] @ built.embedder_provider().embed_documents(
        ["I play tennis every Sunday"])[0]), abs=1e-2)  # the cosine (stored vectors are float16)
    assert tennis[0].vector > tennis[1].vector


def test_a_restatement_is_merged_on_every_tier(services):
    built, index, _ = services
    save(built, index, ALICE, "I play tennis every Sunday", memory_type=MemoryType.PREFERENCE)

    result = built.save.save(ALICE, NewMemory(memory_type=MemoryType.PREFERENCE,
                                              content="I am playing tennis every Sunday"))

    assert result.outcome.value == "merged" and result.memory.content == "I play tennis every Sunday"
    assert built.save.save(BOB, NewMemory(memory_type=MemoryType.PREFERENCE, content="I am playing tennis every "
                                          "Sunday")).outcome.value == "created"  # never another user's
