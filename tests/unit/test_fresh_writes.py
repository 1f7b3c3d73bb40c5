"""Read-your-writes on a search tier fed off the request path: the writes of the last seconds, from the change log,
laid over what a lagging index proposes."""

from __future__ import annotations

import numpy as np

from agent_memory.adapters.fresh_writes import FreshWritesIndex
from agent_memory.domain.models import Memory, MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.ranking import Candidate
from agent_memory.domain.search.vectors import decode_vector, encode_vector
from agent_memory.ports import CandidateQuery
from tests.fakes.embedders import HashingEmbedder
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t-fresh", user_id="u")
EMBEDDER = HashingEmbedder()


class LaggingIndex:
    """What a stream-fed index holds: the current memories as of its last `catch_up()`, every one proposed with a
    BM25 score of 1.0 and its cosine."""

    def __init__(self, store: InMemoryMemoryStore) -> None:
        self._store = store
        self.indexed: list[Memory] = []

    def catch_up(self) -> None:
        self.indexed = self._store.all_current(USER)

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]:
        vector = query.query_vector()
        return [Candidate(memory=m, lexical=1.0, vector=float(np.dot(vector, decode_vector(m.embedding))))
                for m in self.indexed if m.embedding]

    def vectors(self, user: ScopeRef, memory_keys: list[str]) -> dict[str, np.ndarray]:
        return {m.memory_key: decode_vector(m.embedding) for m in self.indexed
                if m.memory_key in memory_keys and m.embedding}

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        return [[Candidate(memory=m, vector=float(np.dot(row, decode_vector(m.embedding))))
                 for m in self.indexed if m.embedding][:k] for row in vectors]


def save(store: InMemoryMemoryStore, content: str, field: str | None = None) -> Memory:
    return store.save(USER, NewMemory(memory_type=MemoryType.FACT, content=content, field=field,
                                      embedding=encode_vector(EMBEDDER.embed_query(content)),
                                      embedding_model=EMBEDDER.model_id)).memory


def query(text: str) -> CandidateQuery:
    return CandidateQuery(text=text, vector=EMBEDDER.embed_query(text))


def tier(store: InMemoryMemoryStore, now: list[float], window: float = 30.0) -> tuple[FreshWritesIndex, LaggingIndex]:
    lagging = LaggingIndex(store)
    store.clock = lambda: now[0]
    return FreshWritesIndex(lagging, store=store, embedder=lambda: EMBEDDER, window_seconds=window,
                            clock=lambda: now[0]), lagging


def test_a_memory_saved_a_moment_ago_is_a_candidate_with_its_cosine_before_the_index_has_it():
    store, now = InMemoryMemoryStore(), [1000.0]
    index, lagging = tier(store, now)
    indexed = save(store, "lives in Hangzhou")
    lagging.catch_up()
    now[0] += 1
    fresh = save(store, "drinks green tea every morning")

    found = {c.memory.memory_key: c for c in index.candidates(USER, query("green tea"))}

    assert set(found) == {indexed.memory_key, fresh.memory_key}
    expected = float(np.dot(EMBEDDER.embed_query("green tea"), EMBEDDER.embed_query(fresh.content)))
    assert abs(found[fresh.memory_key].vector - expected) < 1e-6 and expected > 0
    assert found[fresh.memory_key].lexical is None and found[indexed.memory_key].lexical == 1.0


def test_a_memory_superseded_or_deleted_a_moment_ago_is_dropped_though_the_index_still_has_it():
    store, now = InMemoryMemoryStore(), [1000.0]
    index, lagging = tier(store, now)
    old = save(store, "is 32 years old", field="age")
    gone = save(store, "lives in Hangzhou")
    lagging.catch_up()
    now[0] += 1
    new = save(store, "is 33 years old", field="age")
    store.delete(USER, gone.memory_key)

    keys = {c.memory.memory_key for c in index.candidates(USER, query("age"))}

    assert keys == {new.memory_key}
    assert old.memory_key not in index.vectors(USER, [old.memory_key, new.memory_key])


def test_once_the_window_has_passed_the_index_answers_alone():
    store, now = InMemoryMemoryStore(), [1000.0]
    index, lagging = tier(store, now, window=30.0)
    save(store, "lives in Hangzhou")
    now[0] += 31  # the index should have had it long since; if it still has not, nothing is laid over

    assert index.candidates(USER, query("Hangzhou")) == []
    lagging.catch_up()
    assert len(index.candidates(USER, query("Hangzhou"))) == 1


def test_a_save_restating_a_memory_saved_a_moment_ago_finds_it_among_the_nearest():
    store, now = InMemoryMemoryStore(), [1000.0]
    index, _ = tier(store, now)
    first = save(store, "drinks green tea every morning")

    nearest = index.nearest(USER, EMBEDDER.embed_query("drinks green tea every morning")[None, :], 5)

    assert [c.memory.memory_key for c in nearest[0]] == [first.memory_key]
    assert abs(nearest[0][0].vector - 1.0) < 1e-6


def test_window_zero_reads_no_change_log():
    class Counting(InMemoryMemoryStore):
        reads = 0

        def recent_writes(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            Counting.reads += 1
            return super().recent_writes(*args, **kwargs)

    store, now = Counting(), [1000.0]
    index, _ = tier(store, now, window=0.0)
    save(store, "lives in Hangzhou")

    assert index.candidates(USER, query("Hangzhou")) == [] and Counting.reads == 0


def test_a_tier_that_can_score_a_text_not_indexed_yet_lends_the_fresh_memory_its_bm25_score():
    class Scoring(LaggingIndex):
        def __init__(self, store: InMemoryMemoryStore) -> None:
            super().__init__(store)
            self.asked: list[str] = []

        def unindexed_lexical(self, query: CandidateQuery, texts: list[str]) -> list[float | None]:
            self.asked.extend(texts)
            return [2.5 for _ in texts]

    store, now = InMemoryMemoryStore(), [1000.0]
    store.clock = lambda: now[0]
    scoring = Scoring(store)
    index = FreshWritesIndex(scoring, store=store, embedder=lambda: EMBEDDER, clock=lambda: now[0])
    indexed = save(store, "lives in Hangzhou")
    scoring.catch_up()
    fresh = save(store, "drinks green tea every morning")

    found = {c.memory.memory_key: c for c in index.candidates(USER, query("green tea"))}

    assert found[fresh.memory_key].lexical == 2.5 and found[indexed.memory_key].lexical == 1.0
    assert scoring.asked == ["drinks green tea every morning"]  # only what the index does not hold yet


def test_the_change_log_is_read_once_per_version_and_what_leaves_the_window_is_dropped_without_a_read():
    class Counting(InMemoryMemoryStore):
        def __init__(self) -> None:
            super().__init__()
            self.reads = 0

        def recent_writes(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.reads += 1
            return super().recent_writes(*args, **kwargs)

    store, now = Counting(), [1000.0]
    index, _ = tier(store, now, window=30.0)
    first = save(store, "lives in Hangzhou")

    assert len(index.candidates(USER, query("Hangzhou"))) == 1
    assert index.vectors(USER, [first.memory_key]).keys() == {first.memory_key}  # the same request's second read
    assert store.reads == 1
    now[0] += 10
    second = save(store, "drinks green tea")
    assert {c.memory.memory_key for c in index.candidates(USER, query("tea"))} == {first.memory_key,
                                                                                   second.memory_key}
    assert store.reads == 2  # the counter moved: read again
    now[0] += 25  # the first left the window, the second not
    assert {c.memory.memory_key for c in index.candidates(USER, query("tea"))} == {second.memory_key}
    assert store.reads == 2
