"""Concurrent saves never lose an update nor leave two current values for one field.

Run against AWS's DynamoDB Local: in-process moto is not thread-safe, so it cannot judge races.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from agent_memory.domain.lifecycle.supersession import CurrentMemories
from agent_memory.domain.models import MemoryType, NewMemory, SaveOutcome, StoreVersions


def test_given_concurrent_saves_to_one_field_then_exactly_one_is_current_and_history_is_a_chain(
    dynamodb_local_store, user
):
    contents = [f"用户{20 + i}岁" for i in range(8)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(
            lambda c: dynamodb_local_store.save(user, NewMemory(memory_type=MemoryType.FACT, content=c, field="age")),
            contents,
        ))

    assert all(r.outcome is not SaveOutcome.DUPLICATE for r in results)
    current = [m for m in dynamodb_local_store.all_current(user) if m.field == "age"]
    assert len(current) == 1
    history = dynamodb_local_store.history(user, current[0])
    assert sorted(m.content for m in history) == sorted(contents)  # nothing lost
    superseded = [m for m in history if not m.is_current]
    assert len(superseded) == 7
    # Every superseded version names a distinct successor: a single chain, no forks.
    assert len({m.superseded_by for m in superseded}) == 7
    assert dynamodb_local_store.user_version(user) == 8


def test_given_concurrent_saves_of_identical_content_then_it_is_stored_once(dynamodb_local_store, user):
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(
            lambda _: dynamodb_local_store.save(user, NewMemory(memory_type=MemoryType.FACT, content="已婚")), range(6)
        ))

    created = [r for r in results if r.outcome is SaveOutcome.CREATED]
    assert len(created) == 1
    assert {r.memory.memory_key for r in results} == {created[0].memory.memory_key}
    assert len(dynamodb_local_store.all_current(user)) == 1


def test_given_content_stored_after_a_batch_read_its_markers_then_the_batch_reports_it_as_a_duplicate(
        dynamodb_local_store, user, monkeypatch):
    earlier = dynamodb_local_store.save(user, NewMemory(memory_type=MemoryType.FACT, content="喜欢网球")).memory
    # As if a concurrent request stored it between the batch's first read and its write.
    read = dynamodb_local_store._current_memories
    reads: list[int] = []

    def stale_first(*args):
        reads.append(1)
        return (CurrentMemories(), StoreVersions()) if len(reads) == 1 else read(*args)  # read before anything

    monkeypatch.setattr(dynamodb_local_store, "_current_memories", stale_first)
    results = dynamodb_local_store.save_many(user, [NewMemory(memory_type=MemoryType.FACT, content="喜欢游泳"),
                                                    NewMemory(memory_type=MemoryType.FACT, content="喜欢网球")])

    assert [r.outcome for r in results] == [SaveOutcome.CREATED, SaveOutcome.DUPLICATE]
    assert results[1].memory.memory_key == earlier.memory_key
    assert len(dynamodb_local_store.all_current(user)) == 2
    assert dynamodb_local_store.user_version(user) == 2
    assert len(reads) == 2  # the cancelled transaction was read again and decided again
