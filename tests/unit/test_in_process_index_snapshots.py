"""The serverless tier's cold path: a snapshot of the current version instead of reading every memory."""

from __future__ import annotations

import gc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import numpy as np

from agent_memory.adapters.in_process_index import InProcessIndex
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.domain.text.text import tokenize
from agent_memory.ports import CandidateQuery
from tests.fakes.embedders import FixedEmbedder
from tests.fakes.index_snapshots import InMemoryIndexSnapshotStore
from tests.fakes.store import CountingStore

USER = ScopeRef(tenant_id="t", user_id="u")
DIMENSION = 8


def vector(i: int) -> bytes:
    rows = np.random.default_rng(i).normal(size=DIMENSION).astype(np.float32)
    return encode_vector(rows / np.linalg.norm(rows))


def seeded(n: int = 12, model: str = "model-a") -> CountingStore:
    store = CountingStore()
    store.save_many(USER, [NewMemory(memory_type=MemoryType.FACT, content=f"记忆{i}: Caroline went hiking {i}",
                                     embedding=vector(i), embedding_model=model) for i in range(n)])
    return store


def index_over(store: CountingStore, snapshots: InMemoryIndexSnapshotStore, *, embedder: FixedEmbedder | None = None,
               min_memories: int = 10, background: ThreadPoolExecutor | None = None) -> InProcessIndex:
    embedder = embedder or FixedEmbedder()
    return InProcessIndex(store=store, embedder=lambda: embedder, snapshots=snapshots,
                          snapshot_min_memories=min_memories, background=background)


def query(text: str = "hiking 3") -> CandidateQuery:
    return CandidateQuery(text=text, terms=tokenize(text), vector=np.eye(DIMENSION, dtype=np.float32)[0], k=5)


def found(index: InProcessIndex) -> list[tuple[str, float | None, float | None]]:
    return [(c.memory.memory_key, c.lexical and round(c.lexical, 4), c.vector and round(c.vector, 2))
            for c in index.candidates(USER, query())]


def test_given_a_fresh_snapshot_when_a_cold_index_searches_then_it_reads_no_memory_and_finds_the_same():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    first = index_over(store, snapshots)
    expected = found(first)  # built from the memories, then saved
    assert store.partition_reads == 1 and first.stats["snapshot_saves"] == 1

    cold = index_over(store, snapshots)

    assert found(cold) == expected
    assert store.partition_reads == 1 and cold.stats["snapshot_loads"] == 1
    assert cold.current_memories(USER) == [m.model_copy(update={"embedding": None}) for m in store.all_current(USER)]


def test_given_a_snapshot_of_an_older_version_then_the_changes_since_are_applied_to_it():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    found(index_over(store, snapshots))
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="hiking 3 again, newest",
                               embedding=vector(99), embedding_model="model-a"))
    store.delete(USER, store.all_current(USER)[0].memory_key)
    reads = store.partition_reads

    cold = index_over(store, snapshots)

    assert found(cold) == found(InProcessIndex(store=store, embedder=FixedEmbedder))
    assert "hiking 3 again, newest" in [m.content for m in cold.current_memories(USER)]
    assert store.partition_reads == reads + 1  # only the index built from scratch to compare with
    assert cold.stats["snapshot_loads"] == 1 and cold.stats["changes_applied"] == 1


def test_given_a_snapshot_older_than_the_change_log_reaches_then_the_memories_are_read():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    found(index_over(store, snapshots))
    store.purge(USER, store.all_current(USER)[0].memory_key)  # a purge clears the log: it holds copies of the text
    reads = store.partition_reads

    cold = index_over(store, snapshots)

    assert len(cold.current_memories(USER)) == 11
    assert store.partition_reads == reads + 1 and cold.stats["changes_unavailable"] == 1
    assert snapshots.snapshots[USER][0] == store.user_version(USER)  # and the new version is saved in its place


def test_given_a_damaged_snapshot_then_the_memories_are_read_and_a_good_one_replaces_it():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    expected = found(index_over(store, snapshots))
    version, payload, saved_at = snapshots.snapshots[USER]
    snapshots.snapshots[USER] = (version, payload[: len(payload) // 2], saved_at)

    cold = index_over(store, snapshots)

    assert found(cold) == expected
    assert cold.stats["snapshot_unreadable"] == 1 and store.partition_reads == 2
    assert snapshots.snapshots[USER][1] == payload
    assert found(index_over(store, snapshots)) == expected and store.partition_reads == 2


class ReEmbedding(FixedEmbedder):
    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), DIMENSION), dtype=np.float32)


def test_given_a_snapshot_of_another_embedding_model_then_it_is_not_used():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    found(index_over(store, snapshots, embedder=FixedEmbedder("model-a")))

    cold = index_over(store, snapshots, embedder=ReEmbedding("model-b"))  # model-a's memories are re-embedded
    cold.current_memories(USER)

    assert cold.stats["snapshot_incompatible"] == 1 and store.partition_reads == 2


def test_given_fewer_memories_than_the_minimum_then_no_snapshot_is_saved():
    store, snapshots = seeded(n=5), InMemoryIndexSnapshotStore()

    index_over(store, snapshots, min_memories=10).current_memories(USER)

    assert snapshots.puts == 0 and USER not in snapshots.snapshots


def test_given_reads_recorded_since_the_snapshot_then_the_loaded_memories_get_the_new_counts():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    found(index_over(store, snapshots))
    key = store.list_current(USER).items[0].memory_key
    store.record_access(USER, [key], datetime(2026, 11, 20, tzinfo=UTC))

    cold = index_over(store, snapshots)
    memories = {m.memory_key: m for m in cold.current_memories(USER)}

    assert memories[key].access_count == 1 and cold.stats["snapshot_loads"] == 1
    assert store.partition_reads == 1


def test_given_a_failing_snapshot_store_then_searches_are_answered_from_the_memories():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    snapshots.fail = True
    expected = found(index_over(store, InMemoryIndexSnapshotStore()))

    assert found(index_over(store, snapshots)) == expected


def test_given_a_snapshot_store_that_raises_then_the_search_is_still_answered():
    class Raising(InMemoryIndexSnapshotStore):
        def put(self, user: ScopeRef, version: int, encode: Callable[[], bytes]) -> bool:
            raise RuntimeError("table gone")

    store = seeded()

    assert len(found(index_over(store, Raising()))) > 0


def test_given_a_background_executor_then_the_snapshot_is_saved_off_the_request_and_flush_waits_for_it():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    with ThreadPoolExecutor(max_workers=1) as background:
        index = index_over(store, snapshots, background=background)
        found(index)
        index.flush(timeout=10)

    assert snapshots.snapshots[USER][0] == store.user_version(USER) and index.stats["snapshot_saves"] == 1


def test_given_no_embedder_then_a_snapshot_with_vectors_still_serves_keyword_search():
    store, snapshots = seeded(), InMemoryIndexSnapshotStore()
    found(index_over(store, snapshots))

    cold = InProcessIndex(store=store, embedder=lambda: None, snapshots=snapshots, snapshot_min_memories=10)
    candidates = cold.candidates(USER, CandidateQuery(text="hiking 3", terms=tokenize("hiking 3")))

    assert candidates and all(c.vector is None for c in candidates) and store.partition_reads == 1


def test_an_index_build_leaves_the_garbage_collector_as_it_found_it():
    store = seeded()
    was_enabled = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            index_over(store, InMemoryIndexSnapshotStore()).current_memories(USER)
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was_enabled else gc.disable)()


def test_given_a_vector_given_as_a_call_then_the_index_reads_and_scores_first_and_calls_it_once():
    events: list[str] = []

    class RecordingStore(CountingStore):
        def versions(self, user: ScopeRef):  # type: ignore[no-untyped-def]
            events.append("versions")
            return super().versions(user)

    store = RecordingStore()
    store.save_many(USER, [NewMemory(memory_type=MemoryType.FACT, content=f"Caroline went hiking {i}",
                                     embedding=vector(i), embedding_model="model-a") for i in range(12)])

    def embedding() -> np.ndarray:
        events.append("vector")
        return np.eye(DIMENSION, dtype=np.float32)[0]

    lazy = CandidateQuery(text="hiking 3", terms=tokenize("hiking 3"), vector=embedding, k=5)
    index = index_over(store, InMemoryIndexSnapshotStore())
    assert [(c.memory.memory_key, c.vector) for c in index.candidates(USER, lazy)] == [
        (c.memory.memory_key, c.vector) for c in index.candidates(USER, query())]
    # The second read of the versions: the snapshot is saved only if the user's memories did not move meanwhile.
    assert events == ["versions", "versions", "vector", "versions"] and lazy.query_vector() is not None
    assert events.count("vector") == 1


def test_given_an_index_replaced_by_a_rebuild_then_reference_counting_frees_it_though_it_was_frozen():
    """A cached index is frozen out of the cyclic collector's sight; one with a reference cycle would leak
    when replaced. Unfrozen and collected, nothing is left unreachable: no cycle kept it."""
    store = seeded(50)
    index = index_over(store, InMemoryIndexSnapshotStore(), min_memories=1000)
    index.candidates(USER, query())
    assert gc.get_freeze_count() > 0  # the build froze what the process held, the index among it
    was_enabled = gc.isenabled()
    try:
        for round_ in range(3):
            store.save_many(USER, [NewMemory(memory_type=MemoryType.FACT, content=f"round {round_}",
                                             embedding=vector(round_), embedding_model="model-a")])
            gc.unfreeze()
            gc.collect()  # what earlier tests left, frozen or not
            gc.disable()
            index.candidates(USER, query())  # a new version: rebuilt and frozen; the old index is dropped
            gc.unfreeze()
            assert gc.collect() == 0
    finally:
        (gc.enable if was_enabled else gc.disable)()


def test_given_a_warm_index_when_memories_are_saved_and_deleted_then_it_follows_them_without_reading_them_all():
    store = seeded()
    warm = InProcessIndex(store=store, embedder=FixedEmbedder)
    found(warm)
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="hiking 3 once more", embedding=vector(50),
                               embedding_model="model-a"))
    store.delete(USER, store.all_current(USER)[3].memory_key)
    reads = store.partition_reads

    assert found(warm) == found(InProcessIndex(store=store, embedder=FixedEmbedder))
    assert store.partition_reads == reads + 1  # only the index built from scratch to compare with
    assert warm.stats["changes_applied"] == 1
