"""The OpenSearch tier against a real OpenSearch 2.19 with the k-NN plugin (the local node, started once per
test run, or OPENSEARCH_URL) and against osmem-server (in-memory, OpenSearch-compatible).

osmem-server cannot run kNN queries, so there the kNN request is captured and checked against the documented
k-NN query format; on the real engine it runs for real.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from opensearchpy import OpenSearch

from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.opensearch.admin import ensure_index, index_body, indexed_documents, reindex_from_table
from agent_memory.adapters.opensearch.documents import document_id
from agent_memory.adapters.opensearch.index import LINK_FIELDS, OpenSearchIndex, cosine_from_score
from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.models import Keyword, Memory, MemoryType, NewMemory, ScopeRef, new_memory_version
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.domain.text.text import tokenize
from agent_memory.errors import SearchIndexMismatch
from agent_memory.ports import CandidateQuery
from tests.conftest import TABLE
from tests.fakes.embedders import HashEmbedder
from tests.fakes.opensearch import legacy_index

DIM = HashEmbedder.dimension


# ---- backends -----------------------------------------------------------------------------


@pytest.fixture(params=["osmem", "opensearch"])
def backend(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    """The real engine, and osmem-server with indexes made before the `text` field (see legacy_index)."""
    if request.param == "osmem":
        clone = request.getfixturevalue("osmem_clone")
        yield "osmem", OpenSearch(hosts=[clone.url])
        return
    client = OpenSearch(hosts=[request.getfixturevalue("opensearch_url")])
    yield "opensearch", client
    client.indices.delete(index="test-mem-*", ignore_unavailable=True)  # type: ignore[call-arg]



@pytest.fixture
def client(backend: tuple[str, Any]) -> Any:
    return backend[1]


@pytest.fixture
def settle(backend: tuple[str, Any]) -> Any:
    """Make writes searchable. The adapter never refreshes; only the test does, on a real cluster."""
    kind, client = backend

    def refresh(alias: str) -> None:
        if kind == "opensearch":
            client.indices.refresh(index=alias)

    return refresh


@pytest.fixture
def alias() -> str:
    return f"test-mem-{uuid.uuid4().hex[:10]}"


def create_index(backend: tuple[str, Any], alias: str) -> None:
    kind, client = backend
    if kind == "osmem":
        legacy_index(client, alias, DIM)
    else:
        ensure_index(client, alias, DIM)


@pytest.fixture
def index(backend: tuple[str, Any], alias: str) -> OpenSearchIndex:
    create_index(backend, alias)
    return OpenSearchIndex(client=backend[1], alias=alias)


def memory(user: ScopeRef, content: str, *, memory_type: MemoryType = MemoryType.FACT,
           created_at: datetime | None = None, keywords: list[str] | None = None,
           embedder: HashEmbedder | None = None, **extra: Any) -> Memory:
    new = NewMemory(memory_type=memory_type, content=content, created_at=created_at,
                    keywords=[Keyword(term=k) for k in keywords or []], **extra)
    built = new_memory_version(user, new, new_memory_key(), None)
    if embedder is not None:
        built = built.model_copy(update={"embedding": encode_vector(embedder.embed_query(content)),
                                         "embedding_model": embedder.model_id})
    return built


def keys(candidates: list[Any]) -> set[str]:
    return {c.memory.memory_key for c in candidates}


# ---- index management ---------------------------------------------------------------------


def test_given_no_index_when_ensured_twice_then_one_physical_index_behind_the_alias(client, alias):
    first = ensure_index(client, alias, DIM)
    second = ensure_index(client, alias, DIM)

    assert first == second and first.startswith(f"{alias}-v")
    assert set(client.indices.get_alias(name=alias)) == {first}
    mapping = client.indices.get_mapping(index=first)[first]["mappings"]["properties"]
    assert mapping["content"]["analyzer"] == "cjk"
    assert mapping["content"]["fields"]["english"]["analyzer"] == "english"
    assert mapping["embedding"]["method"]["space_type"] == "cosinesimil"
    assert {mapping[f]["type"] for f in ("tenant_id", "user_id", "memory_type", "category")} == {"keyword"}
    assert mapping["created_at"]["type"] == "date"


def test_given_no_embedder_then_the_mapping_has_no_vector_field():
    body = index_body(None)
    assert "embedding" not in body["mappings"]["properties"] and "index" not in body["settings"]


def _index_without_link_fields(client: Any, alias: str) -> str:
    """A physical index as ensure_index made it before the conversation link fields (and the `text` field that
    came after them), behind `alias`."""
    body = index_body(DIM)
    for field in (*LINK_FIELDS, "text"):
        del body["mappings"]["properties"][field]
    del body["settings"]["analysis"]
    client.indices.create(index=f"{alias}-v1", body=body)
    client.indices.put_alias(index=f"{alias}-v1", name=alias)
    return f"{alias}-v1"


def test_given_an_index_made_before_the_link_fields_when_a_turn_is_written_then_they_are_added(
        client, alias, settle, user):
    physical = _index_without_link_fields(client, alias)
    index = OpenSearchIndex(client=client, alias=alias)
    question = memory(user, "How long have you had the turtles?", conversation_id="c-1")
    answer = memory(user, "Three years now!", conversation_id="c-1", context="How long have you had the turtles?")

    index.bulk_upsert([question, answer])  # a strict mapping refuses unknown fields: they were added first
    settle(alias)

    mapping = client.indices.get_mapping(index=physical)[physical]["mappings"]["properties"]
    assert {field: mapping[field]["type"] for field in LINK_FIELDS} == {"turn_id": "keyword",
                                                                       "previous_turn_id": "keyword"}
    found = index.candidates(user, CandidateQuery(text="turtles", neighbour_share=0.5))
    assert keys(found) == {question.memory_key, answer.memory_key}


def test_given_an_index_made_before_the_link_fields_when_ensured_then_they_are_added(client, alias):
    physical = _index_without_link_fields(client, alias)

    assert ensure_index(client, alias, DIM) == physical
    assert set(LINK_FIELDS) <= set(client.indices.get_mapping(index=physical)[physical]["mappings"]["properties"])


def test_given_neighbour_share_then_a_question_scores_its_share_of_the_turn_answering_it(
        index, alias, settle, user):
    question = memory(user, "How long have you had the turtles?", conversation_id="c-1")
    answer = memory(user, "Three years now!", conversation_id="c-1", context=question.content)
    other_conversation = memory(user, "Since last spring", conversation_id="c-2", context="Three years now!")
    index.bulk_upsert([question, answer, other_conversation])
    settle(alias)

    alone = {c.memory.memory_key: c.lexical for c in index.candidates(user, CandidateQuery(text="three years"))}
    shared = {c.memory.memory_key: c.lexical
              for c in index.candidates(user, CandidateQuery(text="three years", neighbour_share=0.5))}

    # The answer matches; the question shares none of its words and comes in through it, with half its
    # score. The turn of another conversation quoting the same words matches on its own, links to nothing.
    assert set(alone) == {answer.memory_key, other_conversation.memory_key}
    assert set(shared) == {question.memory_key, answer.memory_key, other_conversation.memory_key}
    assert shared[question.memory_key] == pytest.approx(0.5 * alone[answer.memory_key], rel=1e-4)
    assert shared[answer.memory_key] == pytest.approx(alone[answer.memory_key], rel=1e-4)  # its question scored 0
    assert shared[other_conversation.memory_key] == pytest.approx(alone[other_conversation.memory_key], rel=1e-4)


# ---- BM25 ---------------------------------------------------------------------------------


def test_given_chinese_memories_when_searching_a_prefix_word_then_bm25_finds_it(index, alias, settle, user):
    target = memory(user, "用户正在申请高才通B类签证")
    other = memory(user, "用户喜欢在早上跑步")
    index.bulk_upsert([target, other])
    settle(alias)

    found = index.candidates(user, CandidateQuery(text="高才通"))

    assert keys(found) == {target.memory_key}
    assert found[0].lexical is not None and found[0].lexical > 0 and found[0].vector is None
    assert found[0].memory == target  # rebuilt from _source, field for field


def test_given_english_memories_when_searching_another_inflection_then_stemming_matches(
        index, alias, settle, user):
    runner = memory(user, "User prefers running in the mornings", memory_type=MemoryType.PREFERENCE)
    index.upsert(runner)
    index.upsert(memory(user, "User holds a master's degree in physics"))
    settle(alias)

    assert keys(index.candidates(user, CandidateQuery(text="runs morning"))) == {runner.memory_key}


def test_given_keywords_when_searching_a_keyword_absent_from_content_then_found(index, alias, settle, user):
    tagged = memory(user, "用户年薪八十万港币", keywords=["income", "收入"])
    index.upsert(tagged)
    settle(alias)

    assert keys(index.candidates(user, CandidateQuery(text="income"))) == {tagged.memory_key}


def test_given_k_when_more_matches_then_at_most_k_candidates(index, alias, settle, user):
    index.bulk_upsert([memory(user, f"用户的高才通申请材料 {i}") for i in range(5)])
    settle(alias)

    assert len(index.candidates(user, CandidateQuery(text="高才通", k=3))) == 3


# ---- filters and isolation ----------------------------------------------------------------


def test_given_memory_types_filter_then_only_those_types(index, alias, settle, user):
    fact = memory(user, "用户计划申请高才通", memory_type=MemoryType.FACT)
    intent = memory(user, "用户打算下个月递交高才通申请", memory_type=MemoryType.INTENT)
    index.bulk_upsert([fact, intent])
    settle(alias)

    found = index.candidates(user, CandidateQuery(text="高才通", memory_types=[MemoryType.INTENT]))

    assert keys(found) == {intent.memory_key}


def test_given_time_window_then_only_memories_created_inside_it(index, alias, settle, user):
    old = memory(user, "用户咨询过高才通", created_at=datetime(2023, 3, 1, tzinfo=UTC))
    new = memory(user, "用户再次咨询高才通", created_at=datetime(2025, 3, 1, tzinfo=UTC))
    index.bulk_upsert([old, new])
    settle(alias)

    window = CandidateQuery(text="高才通", created_from=datetime(2024, 1, 1, tzinfo=UTC),
                            created_to=datetime(2026, 1, 1, tzinfo=UTC))
    before = CandidateQuery(text="高才通", created_to=datetime(2024, 1, 1, tzinfo=UTC))

    assert keys(index.candidates(user, window)) == {new.memory_key}
    assert keys(index.candidates(user, before)) == {old.memory_key}


def test_given_same_user_id_under_two_tenants_then_each_sees_only_its_own(index, alias, settle):
    user_id = f"u-{uuid.uuid4().hex[:8]}"
    acme, globex = ScopeRef(tenant_id="acme", user_id=user_id), ScopeRef(tenant_id="globex", user_id=user_id)
    mine, theirs = memory(acme, "用户申请高才通B类"), memory(globex, "用户申请高才通A类")
    index.bulk_upsert([mine, theirs])
    settle(alias)

    assert keys(index.candidates(acme, CandidateQuery(text="高才通"))) == {mine.memory_key}
    assert keys(index.candidates(globex, CandidateQuery(text="高才通"))) == {theirs.memory_key}
    assert index.candidates(ScopeRef(tenant_id="initech", user_id=user_id), CandidateQuery(text="高才通")) == []


# ---- writes -------------------------------------------------------------------------------


def test_given_indexed_memory_when_deleted_then_not_found_and_deleting_again_is_harmless(
        index, alias, settle, user):
    gone = memory(user, "用户申请高才通B类")
    index.upsert(gone)
    settle(alias)
    index.delete(user.tenant_id, user.user_id, gone.memory_key)
    index.delete(user.tenant_id, user.user_id, gone.memory_key)
    settle(alias)

    assert index.candidates(user, CandidateQuery(text="高才通")) == []


def test_given_upserted_twice_then_one_document_with_the_latest_version(client, index, alias, settle, user):
    first = memory(user, "用户申请高才通B类")
    index.upsert(first)
    index.upsert(first.model_copy(update={"access_count": 3}))
    settle(alias)

    found = index.candidates(user, CandidateQuery(text="高才通"))

    assert [c.memory.access_count for c in found] == [3]
    assert client.count(index=alias)["count"] == 1


def test_given_superseded_memory_when_upserted_then_it_is_removed_instead(index, alias, settle, user):
    old = memory(user, "用户申请高才通B类")
    index.upsert(old)
    settle(alias)
    index.upsert(old.model_copy(update={"superseded_at": datetime.now(UTC), "superseded_by": "mem_x"}))
    settle(alias)

    assert index.candidates(user, CandidateQuery(text="高才通")) == []


def test_given_serverless_mode_without_custom_ids_then_upsert_and_delete_still_work(
        backend, client, alias, settle, user):
    create_index(backend, alias)
    index = OpenSearchIndex(client=client, alias=alias, custom_ids=False)
    kept = memory(user, "用户申请高才通B类")
    index.upsert(kept)
    settle(alias)
    index.upsert(kept.model_copy(update={"access_count": 2}))  # replaces: new doc, then old one deleted
    settle(alias)

    assert [c.memory.access_count for c in index.candidates(user, CandidateQuery(text="高才通"))] == [2]
    index.delete(user.tenant_id, user.user_id, kept.memory_key)
    settle(alias)
    assert index.candidates(user, CandidateQuery(text="高才通")) == []


# ---- kNN ----------------------------------------------------------------------------------


class RecordingClient:
    """Passes everything to the real client but answers kNN searches itself (osmem cannot run them)."""

    def __init__(self, inner: Any, knn_hits: list[dict[str, Any]]) -> None:
        self.inner = inner
        self.knn_bodies: list[dict[str, Any]] = []
        self.knn_hits = knn_hits

    def search(self, *, index: str, body: dict[str, Any]) -> dict[str, Any]:
        if "knn" in body.get("query", {}):
            self.knn_bodies.append(body)
            return {"hits": {"hits": self.knn_hits}}
        return self.inner.search(index=index, body=body)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_given_a_query_vector_then_the_knn_request_has_the_filter_inside_the_knn_clause(
        osmem_clone, alias, user):
    inner = OpenSearch(hosts=[osmem_clone.url])
    legacy_index(inner, alias, DIM)
    embedder = HashEmbedder()
    lexical = memory(user, "用户申请高才通B类", embedder=embedder)
    semantic = memory(user, "用户想移居香港", embedder=embedder)
    knn_hits = [{"_id": "x", "_score": 0.9, "_source": {"memory": semantic.model_dump(mode="json")}},
                {"_id": "y", "_score": 0.6, "_source": {"memory": lexical.model_dump(mode="json")}}]
    recording = RecordingClient(inner, knn_hits)
    index = OpenSearchIndex(client=recording, alias=alias)
    index.bulk_upsert([lexical, semantic])
    vector = embedder.embed_query("香港身份")

    found = {c.memory.memory_key: c for c in index.candidates(
        user, CandidateQuery(text="高才通", vector=vector, k=7, memory_types=[MemoryType.FACT]))}

    (body,) = recording.knn_bodies
    # The documented k-NN query: {"knn": {"<field>": {"vector": [...], "k": n, "filter": {...}}}}
    (field, clause), = body["query"]["knn"].items()
    assert field == "embedding" and body["size"] == 7
    assert clause["k"] == 7 and clause["vector"] == pytest.approx(vector.tolist())
    filters = clause["filter"]["bool"]["filter"]
    assert {"term": {"tenant_id": user.tenant_id}} in filters and {"term": {"user_id": user.user_id}} in filters
    assert {"terms": {"memory_type": ["FACT"]}} in filters
    assert set(body) == {"size", "_source", "query"}  # no post_filter: filtering happens inside the search
    # Both hit lists merge by memory_key; kNN scores become cosine similarities.
    assert found[semantic.memory_key].vector == pytest.approx(0.8) and found[semantic.memory_key].lexical is None
    assert found[lexical.memory_key].vector == pytest.approx(0.2) and found[lexical.memory_key].lexical > 0


def test_cosinesimil_score_maps_back_to_cosine():
    assert cosine_from_score(1.0) == 1.0 and cosine_from_score(0.5) == 0.0 and cosine_from_score(0.0) == -1.0


def test_given_real_opensearch_then_knn_finds_the_nearest_of_this_user_only(opensearch_url, alias, user):
    client = OpenSearch(hosts=[opensearch_url])
    ensure_index(client, alias, DIM)
    index = OpenSearchIndex(client=client, alias=alias)
    embedder = HashEmbedder()
    near = memory(user, "用户想移居香港", embedder=embedder)
    stranger = ScopeRef(tenant_id=user.tenant_id, user_id=f"{user.user_id}-other")
    index.bulk_upsert([near, memory(user, "用户喜欢跑步", embedder=embedder),
                       memory(stranger, "用户想移居香港", embedder=embedder)])
    client.indices.refresh(index=alias)

    found = index.candidates(user, CandidateQuery(text="", vector=embedder.embed_query("用户想移居香港"), k=1))

    assert [c.memory.memory_key for c in found] == [near.memory_key]
    assert found[0].vector == pytest.approx(1.0, abs=1e-2)


# ---- reindex from the table ---------------------------------------------------------------


def test_given_table_when_reindexed_then_only_current_memories_behind_a_new_alias_target(
        opensearch_url, dynamodb_client, alias, user):
    client = OpenSearch(hosts=[opensearch_url])
    store = DynamoMemoryStore(table_name=TABLE, client=dynamodb_client)
    embedder = HashEmbedder()
    old = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户学历本科", field="education")).memory
    new = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户学历硕士", field="education")).memory
    stale = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户申请高才通B类",
                                       embedding=encode_vector(np.ones(4, np.float32) / 2),
                                       embedding_model="some-older-model")).memory
    deleted = store.save(user, NewMemory(memory_type=MemoryType.INTENT, content="用户打算买房")).memory
    store.delete(user, deleted.memory_key)
    first = ensure_index(client, alias, DIM)
    OpenSearchIndex(client=client, alias=alias).upsert(  # the old index holds something long gone
        memory(user, "用户已经删除的高才通记录"))

    rebuilt = reindex_from_table(dynamodb_client, TABLE, client, alias, embedder)
    client.indices.refresh(index=alias)

    assert rebuilt != first and set(client.indices.get_alias(name=alias)) == {rebuilt}
    assert not client.indices.exists(index=first)
    assert set(indexed_documents(client, alias)) == {document_id(user.tenant_id, user.user_id, m.memory_key)
                                       for m in (new, stale)}
    index = OpenSearchIndex(client=client, alias=alias)
    assert keys(index.candidates(user, CandidateQuery(text="学历"))) == {new.memory_key}
    assert old.memory_key not in keys(index.candidates(user, CandidateQuery(text="本科")))
    # Missing and other-model vectors were embedded with the configured model, once each.
    assert sorted(embedder.embedded) == sorted([new.content, stale.content])


class ChangingTable:
    """A DynamoDB client that runs `change` once, right after the reindex's first full scan."""

    def __init__(self, inner: Any, change: Any) -> None:
        self.inner, self.change, self.done = inner, change, False

    def scan(self, **params: Any) -> Any:
        page = self.inner.scan(**params)
        if "LastEvaluatedKey" not in page and not self.done:
            self.done = True
            self.change()
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_given_writes_during_the_first_pass_when_reindexed_then_the_catch_up_applies_them(
        opensearch_url, dynamodb_client, alias, user):
    client = OpenSearch(hosts=[opensearch_url])
    store = DynamoMemoryStore(table_name=TABLE, client=dynamodb_client)
    removed = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户考虑申请优才计划")).memory
    replaced = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户住在深圳", field="city")).memory
    added: list[Memory] = []

    def meanwhile() -> None:  # what the stream would have sent to the old index during the scan
        store.delete(user, removed.memory_key)
        added.append(store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户住在香港",
                                                field="city")).memory)

    reindex_from_table(ChangingTable(dynamodb_client, meanwhile), TABLE, client, alias, HashEmbedder())
    client.indices.refresh(index=alias)

    assert set(indexed_documents(client, alias)) == {document_id(user.tenant_id, user.user_id, added[0].memory_key)}
    assert replaced.memory_key not in keys(OpenSearchIndex(client=client, alias=alias).candidates(
        user, CandidateQuery(text="深圳")))


def test_given_memory_keys_then_vectors_returns_this_users_normalised_embeddings_only(index, alias, settle, user):
    embedder = HashEmbedder()
    with_vector = memory(user, "用户申请高才通B类", embedder=embedder)
    without_vector = memory(user, "用户喜欢粤语")
    other_user = ScopeRef(tenant_id=user.tenant_id, user_id=f"other-{uuid.uuid4().hex[:8]}")
    theirs = memory(other_user, "用户申请高才通A类", embedder=embedder)
    index.bulk_upsert([with_vector, without_vector, theirs])
    settle(alias)

    found = index.vectors(user, [with_vector.memory_key, without_vector.memory_key, theirs.memory_key, "mem_none"])

    assert set(found) == {with_vector.memory_key}
    expected = embedder.embed_query(with_vector.content)
    np.testing.assert_allclose(found[with_vector.memory_key], expected, atol=2e-3)  # stored as float16
    assert index.vectors(user, []) == {}


# ---- an index built for another embedder ----------------------------------------------------


def test_given_an_index_of_another_dimension_then_ensure_search_and_write_name_the_reindex(
        opensearch_url, alias, user):
    client = OpenSearch(hosts=[opensearch_url])
    ensure_index(client, alias, DIM)
    index = OpenSearchIndex(client=client, alias=alias)
    wider = np.ones(2 * DIM, np.float32) / np.sqrt(2 * DIM)

    with pytest.raises(SearchIndexMismatch, match="make reindex") as refused:
        ensure_index(client, alias, 2 * DIM)
    assert refused.value.details == {"index_dimension": DIM, "embedder_dimension": 2 * DIM}
    # A query vector of the new embedder is an error naming the cure, never a silent empty result.
    with pytest.raises(SearchIndexMismatch, match="make reindex"):
        index.candidates(user, CandidateQuery(text="", vector=wider))
    written = memory(user, "用户想移居香港").model_copy(update={"embedding": encode_vector(wider),
                                                          "embedding_model": "wider-model"})
    with pytest.raises(SearchIndexMismatch, match="make reindex"):
        index.upsert(written)


def test_given_near_identical_vectors_of_two_tenants_and_two_users_then_each_gets_k_of_its_own(opensearch_url, alias):
    """Filtered inside the graph search: other scopes' vectors, nearer to the query than any of one's own, can
    neither crowd out one's k results (as a post-filter would) nor appear among them."""
    client = OpenSearch(hosts=[opensearch_url])
    ensure_index(client, alias, DIM)
    index = OpenSearchIndex(client=client, alias=alias)
    rng = np.random.default_rng(7)
    query = rng.normal(size=DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    user_id = f"u-{uuid.uuid4().hex[:6]}"
    scopes = [ScopeRef(tenant_id=tenant, user_id=uid) for tenant in ("acme", "globex")
              for uid in (user_id, f"{user_id}-2")]
    owned: dict[ScopeRef, set[str]] = {}
    for rank, scope in enumerate(scopes):
        memories = []
        for i in range(12):  # each scope a little further from the query than the one before it
            vector = query + (0.01 * (rank + 1)) * rng.normal(size=DIM).astype(np.float32)
            memories.append(memory(scope, f"记忆 {rank}-{i}").model_copy(update={
                "embedding": encode_vector(vector / np.linalg.norm(vector)), "embedding_model": "test"}))
        index.bulk_upsert(memories)
        owned[scope] = {m.memory_key for m in memories}
    client.indices.refresh(index=alias)

    for scope in scopes:
        found = index.candidates(scope, CandidateQuery(text="", vector=query, k=5))
        assert len(found) == 5 and keys(found) <= owned[scope], scope
        assert all(c.vector is not None and c.vector > 0.99 for c in found)


def test_given_hits_of_one_retriever_only_then_each_candidate_gets_both_signals(opensearch_url, alias, user):
    """As on the serverless tier: a lexical hit outside the kNN's k keeps its true cosine, and a kNN hit outside
    the lexical k its BM25 score, instead of counting as the worst match on the signal that missed it."""
    client = OpenSearch(hosts=[opensearch_url])
    ensure_index(client, alias, DIM)
    index = OpenSearchIndex(client=client, alias=alias)
    embedder = HashEmbedder()
    query_vector = embedder.embed_query("a question about turtles")
    wordy = memory(user, "turtle turtle turtle", embedder=embedder)
    near = memory(user, "a turtle among many other words of a long sentence").model_copy(update={
        "embedding": encode_vector(query_vector), "embedding_model": embedder.model_id})
    unrelated = memory(user, "用户喜欢跑步", embedder=embedder)
    index.bulk_upsert([wordy, near, unrelated])
    client.indices.refresh(index=alias)

    found = {c.memory.memory_key: c for c in index.candidates(user, CandidateQuery(text="turtle", vector=query_vector,
                                                                                    k=1))}

    assert set(found) == {wordy.memory_key, near.memory_key}  # the lexical top 1 and the kNN top 1
    expected = float(embedder.embed_query(wordy.content) @ query_vector)
    assert found[wordy.memory_key].vector == pytest.approx(expected, abs=2e-3)  # stored as float16
    assert found[near.memory_key].vector == pytest.approx(1.0, abs=2e-3)
    assert 0 < found[near.memory_key].lexical < found[wordy.memory_key].lexical


ANALYSER_SAMPLES = [
    "Caroline's running shoes, bought in Hangzhou in 2024",
    "用户对香港优才计划感兴趣，高才通B类也在考虑",
    "I'm planning to run a marathon next spring!",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ and the user's 3 dogs",
    "我喜欢打篮球 and tennis on Sundays",
]


@pytest.mark.parametrize("text", ANALYSER_SAMPLES)
def test_the_memory_text_analyser_makes_the_serverless_tiers_tokens(opensearch_url, alias, text):
    """The same tokens on both tiers: the same BM25 candidates (the query sends our tokens as terms)."""
    client = OpenSearch(hosts=[opensearch_url])
    physical = ensure_index(client, alias, DIM)

    analysed = client.indices.analyze(index=physical, body={"analyzer": "memory_text", "text": text})

    assert sorted(t["token"] for t in analysed["tokens"]) == sorted(tokenize(text))


# ---- texts not indexed yet ----------------------------------------------------------------


def test_the_bm25_score_of_a_text_not_indexed_yet_is_the_one_the_index_gives_it_once_indexed(opensearch_url, alias):
    from agent_memory.domain.text.text import searchable_text

    client = OpenSearch(hosts=[opensearch_url])
    ensure_index(client, alias, DIM)
    try:
        index = OpenSearchIndex(client=client, alias=alias)
        user = ScopeRef(tenant_id="t-unindexed", user_id="u")
        other = ScopeRef(tenant_id="t-unindexed", user_id="someone-else")  # statistics are the index's, all users'
        corpus = [f"keeps a notebook labelled n{i} for the garden project and waters {i % 7} plants" for i in range(40)]
        index.bulk_upsert([memory(user, text) for text in corpus[:30]] + [memory(other, t) for t in corpus[30:]])
        long_text = ("Keeps a notebook labelled fresh for the garden project, waters the tomatoes each morning, "
                     "and writes down which seeds came up, 种了番茄和黄瓜 in the garden beds behind the house")
        fresh = [memory(user, long_text), memory(user, "Prefers window seats"), memory(user, "nothing shared here")]
        client.indices.refresh(index=alias)
        query = CandidateQuery(text="garden notebook tomatoes 番茄", terms=tokenize("garden notebook tomatoes 番茄"))

        predicted = index.unindexed_lexical(query, [searchable_text(m) for m in fresh])

        index.bulk_upsert(fresh[:1])
        client.indices.refresh(index=alias)
        indexed = {c.memory.memory_key: c.lexical for c in index.candidates(user, query)}
        assert predicted[0] is not None and abs(predicted[0] - indexed[fresh[0].memory_key]) < 1e-5 * predicted[0]
        assert predicted[1:] == [None, None]  # no query term in them
        assert len(tokenize(long_text)) > 24  # the length Lucene's norm rounds
    finally:
        client.indices.delete(index=f"{alias}*", ignore_unavailable=True)  # type: ignore[call-arg]
