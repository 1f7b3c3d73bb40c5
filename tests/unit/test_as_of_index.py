"""The as-of index's own work: its windows of validity (made once, reused, evicted) and its snapshots (a cold
container loads every version from one instead of reading the partition)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agent_memory.adapters.as_of_index import _WINDOWS_KEPT, AsOfIndex
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.domain.text.text import tokenize
from agent_memory.ports import CandidateQuery
from tests.fakes.embedders import FixedEmbedder
from tests.fakes.index_snapshots import InMemoryIndexSnapshotStore
from tests.fakes.store import CountingStore, InMemoryMemoryStore

USER = ScopeRef(tenant_id="t", user_id="u")
DIMENSION = 8
T0 = datetime(2024, 1, 1, tzinfo=UTC)
CHAIN = 2 * _WINDOWS_KEPT + 3  # more windows than a user keeps: some are evicted and made again


def vector(i: int) -> bytes:
    rows = np.random.default_rng(i).normal(size=DIMENSION).astype(np.float32)
    return encode_vector(rows / np.linalg.norm(rows))


def chained() -> CountingStore:
    """A city stated CHAIN times (each a day after the last), and a hobby stated twice, between them."""
    store = CountingStore()
    for i in range(CHAIN):
        store.save(USER, NewMemory(memory_type=MemoryType.FACT, field="location", content=f"I live in city {i}",
                                   created_at=T0 + timedelta(days=i), embedding=vector(i), embedding_model="model-a"))
        if i in (3, 9):
            store.save(USER, NewMemory(memory_type=MemoryType.FACT, field="hobby", content=f"hobby {i}: hiking",
                                       created_at=T0 + timedelta(days=i, hours=12), embedding=vector(100 + i),
                                       embedding_model="model-a"))
    return store


def query(at: datetime, text: str = "live city hiking") -> CandidateQuery:
    return CandidateQuery(text=text, terms=tokenize(text), vector=np.eye(DIMENSION, dtype=np.float32)[0], k=10,
                          neighbour_share=0.3, as_of=at)


def answer(index: AsOfIndex, at: datetime) -> list[tuple[str, float | None, float | None]]:
    return [(c.memory.content, c.lexical, c.vector) for c in index.candidates(USER, query(at))]


def test_given_windows_made_evicted_and_made_again_then_every_instant_answers_as_a_fresh_index_would():
    store = chained()
    warm = AsOfIndex(store=store, embedder=FixedEmbedder)
    instants = [T0 + timedelta(days=i, hours=h) for i in range(-1, CHAIN + 1) for h in (0, 12, 18)]  # on changes too
    order = [*instants, *reversed(instants), *instants[::3]]  # every window made, most evicted, some made again
    # A fresh index's answer depends on the instant alone: one per instant.
    fresh = {at: answer(AsOfIndex(store=store, embedder=FixedEmbedder), at) for at in instants}

    for at in order:
        assert answer(warm, at) == fresh[at], at
        expected = sorted(m.content for m in store.all_versions(USER) if m.valid_at(at))
        assert sorted(m.content for m in warm.memories_at(USER, at)) == expected, at


def test_given_an_instant_inside_a_window_then_it_is_answered_from_the_window_made_for_another_instant_in_it():
    index = AsOfIndex(store=chained(), embedder=FixedEmbedder)
    validity = index._validity_of(USER, index._versions.user_index(USER))

    first = validity.window_at(T0 + timedelta(days=5, hours=1))

    assert validity.window_at(T0 + timedelta(days=5, hours=23)) is first  # nothing changed in between
    assert validity.window_at(T0 + timedelta(days=6, hours=1)) is not first  # the next city's day


def test_given_a_snapshot_of_every_version_then_a_cold_container_answers_without_reading_them():
    store, snapshots = chained(), InMemoryIndexSnapshotStore()
    first = AsOfIndex(store=store, embedder=FixedEmbedder, snapshots=snapshots, snapshot_min_memories=1)
    at = T0 + timedelta(days=4, hours=18)
    answered = answer(first, at)
    assert store.version_reads == 1 and snapshots.puts == 1  # built from the versions, then saved

    cold = AsOfIndex(store=store, embedder=FixedEmbedder, snapshots=snapshots, snapshot_min_memories=1)

    loaded = answer(cold, at)
    assert [(content, lexical) for content, lexical, _ in loaded] == [(c, lexical) for c, lexical, _ in answered]
    assert [v for *_, v in loaded] == pytest.approx([v for *_, v in answered], abs=1e-3)  # float16 vectors
    assert [m.content for m in cold.memories_at(USER, at)] == [m.content for m in first.memories_at(USER, at)]
    assert store.version_reads == 1


def test_given_a_save_after_the_snapshot_then_a_cold_container_applies_it_to_the_snapshot():
    store, snapshots = chained(), InMemoryIndexSnapshotStore()
    answer(AsOfIndex(store=store, embedder=FixedEmbedder, snapshots=snapshots, snapshot_min_memories=1), T0)
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, field="location", content="I live in city 99",
                               created_at=T0 + timedelta(days=99), embedding=vector(99), embedding_model="model-a"))

    cold = AsOfIndex(store=store, embedder=FixedEmbedder, snapshots=snapshots, snapshot_min_memories=1)

    assert [m.content for m in cold.memories_at(USER, T0 + timedelta(days=100)) if "city" in m.content] == [
        "I live in city 99"]
    assert store.version_reads == 1 and cold.stats["changes_applied"] == 1


def test_a_search_index_multiplies_its_vectors_on_one_blas_thread():
    from threadpoolctl import threadpool_info, threadpool_limits

    from agent_memory.adapters.in_process_index import one_blas_thread

    threadpool_limits(limits=2, user_api="blas")  # as a fresh process may start
    one_blas_thread.cache_clear()

    AsOfIndex(store=InMemoryMemoryStore(), embedder=FixedEmbedder)

    assert {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"} == {1}


def test_given_a_snapshot_then_conversation_neighbours_and_validity_are_read_from_its_rows_outlines():
    store, snapshots = CountingStore(), InMemoryIndexSnapshotStore()
    turns = ["How long have you had the dog?", "Three years now!", "And the cat?", "Since last spring."]
    for i, (before, text) in enumerate(zip([None, *turns], turns, strict=False)):
        store.save(USER, NewMemory(memory_type=MemoryType.FACT, content=text, context=before, conversation_id="c1",
                                   created_at=T0 + timedelta(hours=i), embedding=vector(i), embedding_model="model-a"))
    at = T0 + timedelta(days=1)
    built = AsOfIndex(store=store, embedder=FixedEmbedder, snapshots=snapshots, snapshot_min_memories=1)
    loaded = AsOfIndex(store=store, embedder=FixedEmbedder, snapshots=snapshots, snapshot_min_memories=1)

    windows = [index._validity_of(USER, index._versions.user_index(USER)).window_at(at) for index in (built, loaded)]

    assert store.version_reads == 1  # the second one came from the snapshot
    assert windows[0].previous_turns.tolist() == windows[1].previous_turns.tolist() == [-1, 0, 1, 2]
    assert windows[0].rows.tolist() == windows[1].rows.tolist() == [0, 1, 2, 3]
