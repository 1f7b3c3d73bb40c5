"""One contract for both search tiers: the same memories, the same requests, the same answers.

Lexical (keyword-mode) searches, because osmem-server cannot run kNN; against a real OpenSearch
(OPENSEARCH_URL) the same contract runs too. The ranking layer is shared, so the tiers may differ
only in which candidates they propose.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.adapters.opensearch.admin import ensure_index
from agent_memory.adapters.opensearch.index import OpenSearchIndex
from agent_memory.bootstrap import build_services
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.services.search import SearchRequest
from agent_memory.settings import Settings
from tests.conftest import TABLE

ALICE = ScopeRef(tenant_id="acme", user_id="alice")
MALLORY = ScopeRef(tenant_id="evil", user_id="alice")


@pytest.fixture(params=["serverless", "osmem", "opensearch"])
def services(request: pytest.FixtureRequest, dynamodb_client: Any) -> Iterator[Any]:
    settings = Settings(memory_table_name=TABLE, embedding_provider="none")
    index = None
    if request.param != "serverless":
        from opensearchpy import OpenSearch

        if request.param == "osmem":
            client = OpenSearch(hosts=[request.getfixturevalue("osmem_clone").url])
        elif os.environ.get("OPENSEARCH_URL"):
            client = OpenSearch(hosts=[os.environ["OPENSEARCH_URL"]], verify_certs=False, ssl_show_warn=False)
        else:
            pytest.skip("OPENSEARCH_URL not set: no real OpenSearch to run the contract against")
        alias = f"test-mem-{uuid.uuid4().hex[:8]}"
        ensure_index(client, alias, None)
        index = OpenSearchIndex(client=client, alias=alias)
    built = build_services(settings, dynamodb_client=dynamodb_client, embedder=None, index=index)
    yield built, index, request.param


def save(built: Any, index: OpenSearchIndex | None, user: ScopeRef, content: str, **extra: Any) -> None:
    result = built.save.save(user, NewMemory(memory_type=extra.pop("memory_type", MemoryType.FACT), content=content,
                                             **extra))
    if index is not None:  # what the stream indexer does in AWS
        index.upsert(result.memory)
        if result.superseded is not None:
            index.delete(user.tenant_id, user.user_id, result.superseded.memory_key)
    _refresh(index)


def _refresh(index: OpenSearchIndex | None) -> None:
    if index is not None and os.environ.get("OPENSEARCH_URL"):
        index._client.indices.refresh(index=index._alias)  # only a real cluster needs it; the adapter never does


def contents(built: Any, user: ScopeRef, **request: Any) -> list[str]:
    output = built.search.search(user, SearchRequest(search_mode="keyword", min_relevance_score=0, limit=10,
                                                     **request))
    return [r.content_preview for r in output.results]


@pytest.fixture
def seeded(services: Any) -> Any:
    built, index, _ = services
    save(built, index, ALICE, "对高才通B类非常感兴趣", memory_type=MemoryType.INTENT, category="TTPS")
    save(built, index, ALICE, "用户32岁", field="age")
    save(built, index, ALICE, "用户33岁", field="age")
    save(built, index, ALICE, "I play tennis every Sunday", memory_type=MemoryType.PREFERENCE)
    save(built, index, ALICE, "My sister lives in Toronto")
    save(built, index, MALLORY, "mallory also plays tennis")
    return built


def test_chinese_prefix_and_english_stems(seeded):
    assert contents(seeded, ALICE, query="高才通")[0] == "对高才通B类非常感兴趣"
    assert contents(seeded, ALICE, query="playing tennis")[0] == "I play tennis every Sunday"


def test_superseded_never_current(seeded):
    found = contents(seeded, ALICE, query="用户 岁")
    assert "用户33岁" in found and "用户32岁" not in found


def test_filters(seeded):
    assert contents(seeded, ALICE, query="tennis sister", memory_types=[MemoryType.PREFERENCE]) == [
        "I play tennis every Sunday"]


def test_tenant_isolation(seeded):
    assert "mallory also plays tennis" not in contents(seeded, ALICE, query="tennis")
    assert contents(seeded, MALLORY, query="tennis") == ["mallory also plays tennis"]


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
