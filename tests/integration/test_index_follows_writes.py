"""The serverless tier's index follows writes through the change log: after any sequence of saves, supersessions,
batches, deletes, purges, expired saves and erasures, an index brought up to date from the changes answers
exactly as one built from scratch (candidates, BM25 scores, cosines, conversation neighbours), on moto and on
DynamoDB Local; so does a new container that loads an older snapshot and applies the changes since."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from agent_memory.adapters.dynamodb.erasure import DynamoScopeEraser
from agent_memory.adapters.dynamodb.index_snapshots import DynamoIndexSnapshotStore
from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.in_process_index import InProcessIndex
from agent_memory.domain.lifecycle.retention import RetentionPolicy
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef, utcnow
from agent_memory.domain.text.text import tokenize
from agent_memory.errors import Conflict, NotFound
from agent_memory.ports import CandidateQuery
from tests.conftest import TABLE
from tests.fakes.embedders import HashEmbedder

WORDS = ["Caroline", "hiking", "香港", "优才", "marathon", "Lisbon", "pharmacist", "猫", "团子", "tea", "blue",
         "painting", "计算机", "硕士", "shoes", "guitar"]
FIELDS = ["age", "location", "jobTitle", None, None, None]
QUERIES = ["Caroline hiking", "香港 优才 计算机", "tea painting blue", "猫 团子 guitar", "Lisbon pharmacist shoes"]
RETENTION = RetentionPolicy(memory_days={MemoryType.INTENT: 30})


@pytest.fixture(params=["moto", "dynamodb-local"])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    yield request.getfixturevalue("dynamodb_client" if request.param == "moto" else "dynamodb_local_client")


def store_on(client: Any) -> DynamoMemoryStore:
    return DynamoMemoryStore(table_name=TABLE, client=client, retention=lambda tenant: RETENTION)


def index_on(store: DynamoMemoryStore, embedder: HashEmbedder, snapshots: DynamoIndexSnapshotStore | None = None,
             ) -> InProcessIndex:
    return InProcessIndex(store=store, embedder=lambda: embedder, snapshots=snapshots, snapshot_min_memories=1,
                          snapshot_every=4)


def answers(index: InProcessIndex, user: ScopeRef, embedder: HashEmbedder) -> dict[str, Any]:
    """Everything a search reads of the index, by memory key: not by row, which only the index knows."""
    built = index.user_index(user)
    keys = [m.memory_key for m in built.memories]
    found: dict[str, Any] = {"keys": keys, "neighbours": {
        keys[row]: keys[int(previous)] for row, previous in enumerate(built.previous_turns) if previous >= 0}}
    for text in QUERIES:
        query = CandidateQuery(text=text, terms=tokenize(text), vector=embedder.embed_query(text), k=10)
        found[text] = sorted((c.memory.memory_key, c.lexical, c.vector) for c in index.candidates(user, query))
        found[f"bm25 {text}"] = dict(zip(keys, built.bm25.scores(query.terms).tolist(), strict=True))
    return found


def assert_same(got: dict[str, Any], expected: dict[str, Any], *, vector_tolerance: float) -> None:
    assert got["keys"] == expected["keys"]
    assert got["neighbours"] == expected["neighbours"]
    for text in QUERIES:
        assert [key for key, _, _ in got[text]] == [key for key, _, _ in expected[text]], text
        for (_, lexical, vector), (_, want_lexical, want_vector) in zip(got[text], expected[text], strict=True):
            assert (lexical is None) == (want_lexical is None)
            assert lexical is None or want_lexical is None or abs(lexical - want_lexical) <= 1e-6
            assert vector is None or want_vector is None or abs(vector - want_vector) <= vector_tolerance
        assert got[f"bm25 {text}"] == pytest.approx(expected[f"bm25 {text}"], abs=1e-6)


def a_memory(rng: random.Random, step: int) -> NewMemory:
    content = " ".join(rng.sample(WORDS, rng.randint(2, 5))) + f" #{step}"
    in_conversation = rng.random() < 0.4
    kind = rng.choice([MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.INTENT])
    created = utcnow() - timedelta(days=60) if kind is MemoryType.INTENT and rng.random() < 0.3 else None
    return NewMemory(memory_type=kind, content=content, field=rng.choice(FIELDS),
                     conversation_id="c1" if in_conversation else None,
                     context=rng.choice([None, *WORDS[:4]]) if in_conversation else None,
                     **({"created_at": created} if created else {}))


def apply_step(rng: random.Random, step: int, store: DynamoMemoryStore, client: Any, user: ScopeRef) -> str:
    current = store.all_current(user)
    roll = rng.random()
    if roll < 0.4 or not current:
        store.save(user, a_memory(rng, step))
        return "save"
    if roll < 0.6:
        store.save_many(user, [a_memory(rng, step * 100 + i) for i in range(rng.randint(2, 6))])
        return "batch"
    if roll < 0.75:
        store.delete(user, rng.choice(current).memory_key)
        return "delete"
    if roll < 0.85:  # a turn answering an earlier one: a conversation neighbour
        before = rng.choice(current)
        store.save(user, NewMemory(memory_type=MemoryType.FACT, content=f"answer {step}: {rng.choice(WORDS)}",
                                   conversation_id=before.conversation_id or "c1", context=before.content))
        return "reply"
    if roll < 0.93:
        store.purge(user, rng.choice(current).memory_key)
        return "purge"
    DynamoScopeEraser(table_name=TABLE, client=client, shards=1).sweep(
        user, deadline=float("inf"), now=utcnow(), weeks=set())
    return "erase"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_given_random_writes_then_the_followed_index_answers_as_one_built_from_scratch(client, user, seed):
    rng, embedder = random.Random(seed), HashEmbedder()
    store = store_on(client)
    snapshots = DynamoIndexSnapshotStore(table_name=TABLE, client=client)
    warm = index_on(store, embedder, snapshots)
    done = []
    for step in range(30):
        done.append(apply_step(rng, step, store, client, user))
        expected = answers(index_on(store, embedder), user, embedder)
        assert_same(answers(warm, user, embedder), expected, vector_tolerance=1e-6)
        warm.flush()
        if step % 5 == 4:  # a new container: the newest snapshot and the changes since (float16 vectors)
            assert_same(answers(index_on(store, embedder, snapshots), user, embedder), expected,
                        vector_tolerance=2e-3)
    assert warm.stats.get("changes_applied", 0) > 0, (done, warm.stats)


def write_a_while(store: DynamoMemoryStore, user: ScopeRef, worker: int, errors: list[BaseException]) -> None:
    rng = random.Random(worker)
    try:
        for step in range(15):
            current = store.all_current(user)
            if rng.random() < 0.8 or not current:
                store.save(user, a_memory(rng, 1000 * worker + step))
                continue
            with contextlib.suppress(NotFound, Conflict):  # the other writer deleted it meanwhile
                store.delete(user, rng.choice(current).memory_key)
    except BaseException as error:
        errors.append(error)


def follow(index: InProcessIndex, user: ScopeRef, writing: threading.Event, errors: list[BaseException]) -> None:
    try:
        while writing.is_set():
            index.user_index(user)  # brought up to date, a snapshot saved now and then, racing the writes
    except BaseException as error:
        errors.append(error)


def test_given_two_containers_following_while_writes_land_then_both_end_as_a_fresh_build(dynamodb_local_client,
                                                                                         user):
    client, embedder = dynamodb_local_client, HashEmbedder()
    store = store_on(client)
    snapshots = DynamoIndexSnapshotStore(table_name=TABLE, client=client)
    store.save_many(user, [a_memory(random.Random(0), i) for i in range(20)])
    containers = [index_on(store, embedder, snapshots) for _ in range(2)]
    writing = threading.Event()
    writing.set()
    errors: list[BaseException] = []
    writers = [threading.Thread(target=write_a_while, args=(store, user, n, errors)) for n in range(2)]
    followers = [threading.Thread(target=follow, args=(index, user, writing, errors)) for index in containers]
    for thread in [*writers, *followers]:
        thread.start()
    for thread in writers:
        thread.join()
    writing.clear()
    for thread in followers:
        thread.join()

    assert not errors, errors
    expected = answers(index_on(store, embedder), user, embedder)
    for index in containers:
        index.flush()
        assert_same(answers(index, user, embedder), expected, vector_tolerance=1e-6)
    assert_same(answers(index_on(store, embedder, snapshots), user, embedder), expected, vector_tolerance=2e-3)
    assert len(set(expected["keys"])) == len(expected["keys"])  # nothing doubled


def test_given_one_save_then_bringing_the_index_up_to_date_reads_only_its_change(dynamodb_local_client, user):
    store, embedder = store_on(dynamodb_local_client), HashEmbedder()
    store.save_many(user, [a_memory(random.Random(0), i) for i in range(60)])
    index = index_on(store, embedder)
    index.user_index(user)
    calls: list[str] = []
    dynamodb_local_client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name))

    store.save(user, NewMemory(memory_type=MemoryType.FACT, content="a new fact about tea"))
    calls.clear()
    after = index.user_index(user)

    assert calls == ["GetItem", "Query"]  # the counter, then the one change record: no partition read
    assert "a new fact about tea" in [m.content for m in after.memories]
    assert np.all(np.isfinite(after.vectors)) if after.vectors is not None else True
