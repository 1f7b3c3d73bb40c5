"""Erasure and retention on the real OpenSearch node (the OpenSearch tier): a scope's documents removed and
counted, none of another scope touched; an expired memory proposed by neither BM25 nor kNN."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opensearchpy import OpenSearch

from agent_memory.adapters.opensearch.admin import ensure_index
from agent_memory.adapters.opensearch.erasure import OpenSearchScopeEraser
from agent_memory.adapters.opensearch.index import OpenSearchIndex
from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.lifecycle.retention import RetentionPolicy
from agent_memory.domain.models import Memory, MemoryType, NewMemory, ScopeRef, new_memory_version
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.domain.text.text import tokenize
from agent_memory.ports import CandidateQuery
from tests.fakes.embedders import HashEmbedder

EMBEDDER = HashEmbedder()
NOW = datetime.now(UTC)


@pytest.fixture
def engine(opensearch_url: str) -> Iterator[tuple[Any, str]]:
    client = OpenSearch(hosts=[opensearch_url])
    alias = f"test-erase-{uuid.uuid4().hex[:10]}"
    ensure_index(client, alias, EMBEDDER.dimension)
    yield client, alias
    client.indices.delete(index=f"{alias}-*", ignore_unavailable=True)  # type: ignore[call-arg]


def memory(user: ScopeRef, content: str, memory_type: MemoryType = MemoryType.FACT,
           created_at: datetime | None = None) -> Memory:
    built = new_memory_version(user, NewMemory(memory_type=memory_type, content=content, created_at=created_at),
                               new_memory_key(), None)
    return built.model_copy(update={"embedding": encode_vector(EMBEDDER.embed_query(content)),
                                    "embedding_model": EMBEDDER.model_id})


def scope() -> ScopeRef:
    return ScopeRef(tenant_id="acme", user_id=f"u-{uuid.uuid4().hex[:8]}")


def test_given_two_users_when_one_is_erased_then_its_documents_are_gone_and_counted_and_the_other_is_kept(engine):
    client, alias = engine
    index = OpenSearchIndex(client=client, alias=alias)
    erased, kept = scope(), scope()
    index.bulk_upsert([memory(erased, f"Grows tomatoes, note {i}") for i in range(7)])
    index.bulk_upsert([memory(kept, "Grows tomatoes too")])
    client.indices.refresh(index=alias)
    eraser = OpenSearchScopeEraser(client=client, alias=alias)

    found, removed = eraser.erase(erased)

    assert (found, removed) == (7, 7)
    assert eraser.remaining(erased) == 0  # once the engine refreshes on its own, as deployed
    query = CandidateQuery(text="tomatoes", terms=tokenize("tomatoes"))
    assert index.candidates(erased, query) == []
    assert [c.memory.content for c in index.candidates(kept, query)] == ["Grows tomatoes too"]
    assert eraser.erase(erased) == (0, 0)  # again: nothing left to find


def test_given_a_retention_policy_then_an_expired_memory_is_proposed_by_neither_bm25_nor_knn(engine):
    client, alias = engine
    index = OpenSearchIndex(client=client, alias=alias)
    user = scope()
    old_intent = memory(user, "Plans to renovate the kitchen", MemoryType.INTENT, NOW - timedelta(days=40))
    new_intent = memory(user, "Plans to renovate the garden shed", MemoryType.INTENT, NOW - timedelta(days=2))
    old_fact = memory(user, "Renovated the kitchen floor before", MemoryType.FACT, NOW - timedelta(days=400))
    index.bulk_upsert([old_intent, new_intent, old_fact])
    client.indices.refresh(index=alias)
    policy = RetentionPolicy(memory_days={MemoryType.INTENT: 30})
    query = CandidateQuery(text="renovate kitchen", terms=tokenize("renovate kitchen"), k=10,
                           vector=EMBEDDER.embed_query("renovate kitchen"), expired_before=policy.expired_before(NOW))

    found = {c.memory.content: c for c in index.candidates(user, query)}

    assert set(found) == {"Plans to renovate the garden shed", "Renovated the kitchen floor before"}
    assert all(c.vector is not None for c in found.values())  # kNN's filter left it out too, not just BM25's
