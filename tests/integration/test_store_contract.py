"""The same contract for the DynamoDB store (on moto) and the in-memory fake."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from agent_memory.domain.models import MemoryType, NewMemory, Origin, SaveOutcome, ScopeRef
from agent_memory.errors import InvalidInput, NotFound
from agent_memory.ports import MemoryStore
from tests.fakes.store import InMemoryMemoryStore


@pytest.fixture(params=["moto", "dynamodb-local", "fake"])
def store(request: pytest.FixtureRequest) -> Iterator[MemoryStore]:
    if request.param == "fake":
        yield InMemoryMemoryStore()
    elif request.param == "moto":
        yield request.getfixturevalue("dynamo_store")
    else:
        yield request.getfixturevalue("dynamodb_local_store")


def fact(content: str, field: str | None = None, **extra: object) -> NewMemory:
    return NewMemory(memory_type=MemoryType.FACT, content=content, field=field, **extra)


def test_given_new_memory_when_saved_then_it_is_current_with_type_default_importance(store, user):
    result = store.save(user, NewMemory(memory_type=MemoryType.INTENT, content="想走高才通", category="TTPS"))

    assert result.outcome is SaveOutcome.CREATED
    stored = store.get(user, result.memory.memory_key)
    assert stored is not None and stored.is_current
    assert stored.importance == 80 and stored.category == "TTPS" and stored.content == "想走高才通"


def test_given_same_content_modulo_spacing_and_punctuation_when_saved_then_nothing_is_stored(store, user):
    first = store.save(user, fact("用户32岁", "age"))
    again = store.save(user, fact(" 用户 32 岁。", "age"))

    assert again.outcome is SaveOutcome.DUPLICATE
    assert again.memory.memory_key == first.memory.memory_key
    assert len(store.all_current(user)) == 1
    assert store.user_version(user) == 1


def test_given_field_value_when_new_value_saved_then_old_is_superseded_and_kept_in_history(store, user):
    old = store.save(user, fact("用户32岁", "age")).memory
    result = store.save(user, fact("用户33岁", "age"))

    assert result.outcome is SaveOutcome.SUPERSEDED
    assert result.superseded is not None and result.superseded.memory_key == old.memory_key
    assert [m.content for m in store.all_current(user)] == ["用户33岁"]
    history = store.history(user, result.memory)
    assert [m.content for m in history] == ["用户32岁", "用户33岁"]
    assert history[0].superseded_by == result.memory.memory_key and not history[0].is_current
    assert result.memory.supersedes == old.memory_key


def test_given_superseded_content_when_saved_again_then_it_becomes_current_again(store, user):
    store.save(user, fact("用户32岁", "age"))
    store.save(user, fact("用户33岁", "age"))
    back = store.save(user, fact("用户32岁", "age"))

    assert back.outcome is SaveOutcome.SUPERSEDED
    assert [m.content for m in store.all_current(user)] == ["用户32岁"]


def test_every_write_bumps_the_user_version(store, user):
    assert store.user_version(user) == 0
    key = store.save(user, fact("a fact")).memory.memory_key
    store.save(user, fact("v1", "city"))
    store.save(user, fact("v2", "city"))
    store.delete(user, key)
    assert store.user_version(user) == 4


def test_given_two_tenants_with_the_same_user_id_then_neither_sees_the_other(store):
    alice = ScopeRef(tenant_id="tenant-a", user_id="same-user")
    mallory = ScopeRef(tenant_id="tenant-b", user_id="same-user")
    saved = store.save(alice, fact("secret", "note")).memory

    assert store.all_current(mallory) == []
    assert store.get(mallory, saved.memory_key) is None
    with pytest.raises(NotFound):
        store.delete(mallory, saved.memory_key)
    assert store.save(mallory, fact("secret", "note")).outcome is SaveOutcome.CREATED  # no cross-tenant dedup
    assert store.get(alice, saved.memory_key) is not None


def test_list_current_pages_newest_first_with_type_filter(store, user):
    for i in range(7):
        store.save(user, fact(f"fact {i}"))
        store.save(user, NewMemory(memory_type=MemoryType.PREFERENCE, content=f"pref {i}"))
    store.save(user, fact("old", "age"))
    store.save(user, fact("new", "age"))

    seen, cursor = [], None
    while True:
        page = store.list_current(user, memory_type=MemoryType.FACT, limit=3, cursor=cursor)
        seen.extend(m.content for m in page.items)
        assert all(m.memory_type is MemoryType.FACT and m.is_current for m in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == ["new", *[f"fact {i}" for i in reversed(range(7))]]


def test_a_forged_cursor_is_rejected(store, user):
    with pytest.raises(InvalidInput):
        store.list_current(user, cursor="bm90LWEta2V5")


def test_delete_frees_the_field_and_content(store, user):
    saved = store.save(user, fact("用户32岁", "age")).memory
    store.delete(user, saved.memory_key)

    assert store.get(user, saved.memory_key) is None
    assert store.save(user, fact("用户32岁", "age")).outcome is SaveOutcome.CREATED
    with pytest.raises(NotFound):
        store.delete(user, saved.memory_key)


def test_given_a_deleted_version_then_it_stays_in_its_fields_history_valid_until_the_delete(store, user):
    first = store.save(user, fact("用户32岁", "age")).memory
    second = store.save(user, fact("用户33岁", "age")).memory

    store.delete(user, second.memory_key)

    history = store.history(user, first)
    assert [(m.content, m.is_current, m.is_deleted) for m in history] == [
        ("用户32岁", False, False), ("用户33岁", False, True)]
    deleted = history[1]
    assert deleted.deleted_at is not None and deleted.superseded_at == deleted.deleted_at
    assert deleted.superseded_by is None and deleted.valid_at(second.valid_from)
    assert not deleted.valid_at(deleted.deleted_at)
    assert store.all_current(user) == [] and store.list_current(user).items == []
    assert {m.memory_key for m in store.all_versions(user)} == {first.memory_key, second.memory_key}


def test_given_a_superseded_version_when_deleted_then_the_end_of_its_validity_is_kept(store, user):
    first = store.save(user, fact("用户32岁", "age")).memory
    second = store.save(user, fact("用户33岁", "age")).memory

    store.delete(user, first.memory_key)

    (old,) = [m for m in store.all_versions(user) if m.memory_key == first.memory_key]
    assert old.is_deleted and old.superseded_at == second.valid_from and old.superseded_by == second.memory_key
    assert [m.memory_key for m in store.all_current(user)] == [second.memory_key]


def test_given_a_field_superseded_twice_when_one_version_is_purged_then_its_whole_history_is_gone(store, user):
    first = store.save(user, fact("用户住在杭州", "location")).memory
    second = store.save(user, fact("用户搬到了上海", "location")).memory
    third = store.save(user, fact("用户现在住在深圳", "location")).memory
    other = store.save(user, fact("用户32岁", "age")).memory
    before = store.user_version(user)

    purged = store.purge(user, second.memory_key)  # any version names the field's history

    assert [m.memory_key for m in purged] == [first.memory_key, second.memory_key, third.memory_key]
    assert [m.memory_key for m in store.all_versions(user)] == [other.memory_key]
    assert store.get(user, third.memory_key) is None and store.user_version(user) > before
    assert store.save(user, fact("用户现在住在深圳", "location")).outcome is SaveOutcome.CREATED  # pointers gone
    with pytest.raises(NotFound):
        store.purge(user, first.memory_key)


def test_given_a_deleted_memory_without_a_field_then_a_purge_removes_just_it(store, user):
    kept = store.save(user, fact("喜欢喝茶")).memory
    gone = store.save(user, fact("养了一只猫")).memory
    store.delete(user, gone.memory_key)

    assert [m.memory_key for m in store.purge(user, gone.memory_key)] == [gone.memory_key]

    assert [m.memory_key for m in store.all_versions(user)] == [kept.memory_key]
    assert store.save(user, fact("养了一只猫")).outcome is SaveOutcome.CREATED


def test_given_provenance_when_saved_then_every_version_keeps_its_own(store, user):
    store.save(user, fact("用户32岁", "age", origin=Origin.DIRECT_SAVE, written_by="alice"))
    newer = store.save(user, fact("用户33岁", "age", origin=Origin.EXTRACT)).memory

    history = store.history(user, newer)

    assert [(m.origin, m.written_by) for m in history] == [(Origin.DIRECT_SAVE, "alice"), (Origin.EXTRACT, None)]


def test_import_keeps_given_created_at_and_metadata(store, user):
    when = datetime(2026, 2, 5, 10, 0, tzinfo=UTC)
    saved = store.save(user, fact("年薪约80万人民币", "annualIncome", created_at=when,
                                  metadata={"value": 800000, "currency": "CNY", "ratio": 0.5})).memory
    stored = store.get(user, saved.memory_key)
    assert stored.created_at == when
    assert stored.metadata == {"value": 800000, "currency": "CNY", "ratio": 0.5}


def test_given_a_batch_when_saved_together_then_the_outcomes_are_those_of_saving_one_by_one(store, user):
    store.save(user, fact("已经存过的事实"))
    batch = [fact(f"第{i}件事：喜欢项目{i}") for i in range(40)]  # more than one transaction holds
    batch[5] = fact("已经存过的事实")  # stored before
    batch[9] = fact("第2件事：喜欢项目2")  # repeats an earlier item of the batch
    batch[20:22] = [fact("用户32岁", "age"), fact("用户33岁", "age")]  # a field, superseded within the batch
    results = store.save_many(user, batch)

    assert [r.outcome for r in results] == (
        [SaveOutcome.CREATED] * 5 + [SaveOutcome.DUPLICATE] + [SaveOutcome.CREATED] * 3 + [SaveOutcome.DUPLICATE]
        + [SaveOutcome.CREATED] * 10 + [SaveOutcome.CREATED, SaveOutcome.SUPERSEDED] + [SaveOutcome.CREATED] * 18)
    assert results[9].memory.memory_key == results[2].memory.memory_key
    assert results[21].superseded is not None and results[21].superseded.memory_key == results[20].memory.memory_key
    current = store.all_current(user)
    assert len(current) == 1 + 40 - 2 - 1  # the earlier fact, the batch less two duplicates and one superseded
    assert {m.content for m in current} >= {"第39件事：喜欢项目39", "用户33岁", "已经存过的事实"}
    assert store.user_version(user) == 1 + 38  # one bump per write, as one by one


def test_given_an_empty_batch_then_nothing_is_written(store, user):
    assert store.save_many(user, []) == []
    assert store.user_version(user) == 0


def test_given_large_memories_then_a_batch_is_split_under_the_transaction_size_limit(store, user):
    big = "长" * 60_000  # ~180 KB of UTF-8 each: 20 of them exceed one transaction's 4 MB
    results = store.save_many(user, [fact(f"{i}{big}") for i in range(20)])
    assert [r.outcome for r in results] == [SaveOutcome.CREATED] * 20
    assert len(store.all_current(user)) == 20


def test_recorded_reads_move_the_access_version_not_the_content_version(store, user):
    first = store.save(user, fact("用户32岁", "age")).memory
    store.save(user, fact("喜欢喝咖啡"))
    before = store.versions(user)

    store.record_access(user, [first.memory_key, "mem_00000000000000000000000000"],
                        datetime(2026, 11, 20, tzinfo=UTC))
    store.record_access(user, [first.memory_key], datetime(2026, 11, 21, tzinfo=UTC))

    after = store.versions(user)
    assert after.content == before.content == store.user_version(user)
    assert after.access > before.access
    stats = store.access_stats(user)
    assert list(stats) == [first.memory_key]
    assert stats[first.memory_key].access_count == 2
    assert stats[first.memory_key].last_accessed_at == datetime(2026, 11, 21, tzinfo=UTC)


def test_given_three_fields_when_a_batch_gives_each_a_new_value_then_each_retires_its_current_one(store, user):
    old = store.save_many(user, [fact("用户32岁", "age"), fact("住在北京", "location"), fact("工程师", "jobTitle")])
    results = store.save_many(user, [fact("用户33岁", "age"), fact("住在上海", "location"), fact("经理", "jobTitle")])

    assert [r.outcome for r in results] == [SaveOutcome.SUPERSEDED] * 3
    assert [r.superseded.memory_key for r in results] == [r.memory.memory_key for r in old]
    assert sorted(m.content for m in store.all_current(user)) == ["住在上海", "用户33岁", "经理"]
    for before, after in zip(old, results, strict=True):
        retired = store.get(user, before.memory.memory_key)
        assert retired is not None and retired.superseded_by == after.memory.memory_key and not retired.is_current
        assert retired.superseded_at == after.memory.valid_from
        assert after.memory.supersedes == before.memory.memory_key and after.memory.version == 2
        assert store.get(user, after.memory.memory_key) == after.memory
    assert store.user_version(user) == 6


def test_given_a_field_set_again_and_back_in_one_batch_then_the_history_is_one_chain(store, user):
    store.save(user, fact("用户32岁", "age"))
    results = store.save_many(user, [fact("用户33岁", "age"), fact("住在上海", "location"), fact("用户32岁", "age")])

    assert [r.outcome for r in results] == [SaveOutcome.SUPERSEDED, SaveOutcome.CREATED, SaveOutcome.SUPERSEDED]
    assert sorted(m.content for m in store.all_current(user)) == ["住在上海", "用户32岁"]
    history = store.history(user, results[2].memory)
    assert [(m.content, m.version, m.is_current) for m in history] == [
        ("用户32岁", 1, False), ("用户33岁", 2, False), ("用户32岁", 3, True)]
    assert [m.superseded_by for m in history[:2]] == [m.memory_key for m in history[1:]]
    assert store.save(user, fact("用户32岁", "age")).outcome is SaveOutcome.DUPLICATE
    assert store.user_version(user) == 4


def test_given_many_superseding_fields_then_a_batch_is_split_under_the_transaction_action_limit(store, user):
    # A superseding save without keywords is 5 actions (memory, marker, pointer, retired memory, its marker):
    # 21 of them and the version bump are more than one transaction's 100.
    store.save_many(user, [fact(f"旧值{i}", f"slot_{i}") for i in range(21)])
    results = store.save_many(user, [fact(f"新值{i}", f"slot_{i}") for i in range(21)])

    assert [r.outcome for r in results] == [SaveOutcome.SUPERSEDED] * 21
    assert sorted(m.content for m in store.all_current(user)) == sorted(f"新值{i}" for i in range(21))
    assert all(store.get(user, r.superseded.memory_key).superseded_by == r.memory.memory_key for r in results)
    assert store.user_version(user) == 42


def test_recent_writes_are_the_current_memories_and_retired_keys_of_the_writes_after_a_moment(store, user):
    import time

    before = time.time() - 1
    old = store.save(user, fact("用户32岁", "age")).memory
    kept = store.save(user, fact("喜欢喝茶")).memory
    newer = store.save(user, fact("用户33岁", "age")).memory  # retires `old`
    gone = store.save(user, fact("住在杭州")).memory
    store.delete(user, gone.memory_key)

    recent = store.recent_writes(user, before)

    assert set(recent.upserted) == {kept.memory_key, newer.memory_key}
    assert recent.upserted[newer.memory_key][0].content == "用户33岁" and recent.upserted[newer.memory_key][1] > before
    assert set(recent.removed) == {old.memory_key, gone.memory_key}
    assert store.recent_writes(user, time.time() + 1) == type(recent)()  # nothing written after that
    assert len(store.recent_writes(user, before, limit=1).upserted) <= 1  # the newest record only
