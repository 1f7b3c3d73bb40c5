"""The domain decides what a save supersedes: the store only writes these decisions."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from agent_memory.domain.lifecycle.supersession import CurrentMemories, plan_saves
from agent_memory.domain.models import MemoryType, NewMemory, SaveOutcome, ScopeRef, new_memory_version

USER = ScopeRef(tenant_id="t", user_id="u")


def fact(content: str, field: str | None = None, **extra: object) -> NewMemory:
    return NewMemory(memory_type=MemoryType.FACT, content=content, field=field, **extra)


def keys() -> itertools.count[int]:
    return itertools.count(1)


def plan(proposed: list[NewMemory], current: CurrentMemories | None = None) -> list:
    numbers = keys()
    return plan_saves(USER, proposed, current or CurrentMemories(), lambda: f"mem_{next(numbers):02d}")


def stored(content: str, field: str | None, key: str, version: int = 1):
    return new_memory_version(USER, fact(content, field), key, None).model_copy(update={"version": version})


def test_given_three_current_fields_when_each_gets_a_new_value_then_each_new_memory_retires_its_fields_current():
    current = [
        stored("32岁", "age", "old_age", version=2),
        stored("住在北京", "location", "old_city"),
        stored("工程师", "jobTitle", "old_job"),
    ]

    results = plan(
        [fact("33岁", "age"), fact("住在上海", "location"), fact("经理", "jobTitle")], CurrentMemories.of(current)
    )

    assert [r.outcome for r in results] == [SaveOutcome.SUPERSEDED] * 3
    assert [r.superseded.memory_key for r in results] == ["old_age", "old_city", "old_job"]
    assert [r.memory.supersedes for r in results] == ["old_age", "old_city", "old_job"]
    assert [r.memory.version for r in results] == [3, 2, 2]
    for result in results:
        assert result.superseded.superseded_by == result.memory.memory_key
        assert result.superseded.superseded_at == result.memory.valid_from and not result.superseded.is_current
        assert result.memory.is_current


def test_given_current_content_when_saved_again_then_it_is_a_duplicate_of_the_stored_memory():
    current = CurrentMemories.of([stored("32岁", "age", "old_age")])

    (result,) = plan([fact(" 32 岁。", "age")], current)

    assert result.outcome is SaveOutcome.DUPLICATE and result.memory.memory_key == "old_age"


def test_given_a_field_set_twice_in_one_batch_then_the_second_retires_the_first():
    first, second = plan([fact("32岁", "age"), fact("33岁", "age")])

    assert first.outcome is SaveOutcome.CREATED and first.memory.version == 1
    assert second.outcome is SaveOutcome.SUPERSEDED and second.memory.version == 2
    assert second.superseded.memory_key == first.memory.memory_key == second.memory.supersedes


def test_given_content_retired_earlier_in_the_batch_then_it_may_be_stored_again_as_the_newest_value():
    current = CurrentMemories.of([stored("32岁", "age", "old_age")])

    results = plan([fact("33岁", "age"), fact("32岁", "age"), fact("33岁", "age")], current)

    assert [r.outcome for r in results] == [SaveOutcome.SUPERSEDED] * 3
    assert [r.superseded.memory_key for r in results] == ["old_age", "mem_01", "mem_02"]
    assert [r.memory.version for r in results] == [2, 3, 4]


def test_given_content_repeated_in_a_batch_then_the_repeat_is_a_duplicate_of_the_earlier_item():
    results = plan([fact("喜欢网球"), fact("喜欢网球！")])

    assert [r.outcome for r in results] == [SaveOutcome.CREATED, SaveOutcome.DUPLICATE]
    assert results[1].memory.memory_key == results[0].memory.memory_key


def test_a_memory_without_a_field_retires_nothing():
    current = CurrentMemories.of([stored("32岁", "age", "old_age")])

    (result,) = plan([fact("33岁")], current)

    assert result.outcome is SaveOutcome.CREATED and result.superseded is None and result.memory.supersedes is None


def test_a_backdated_value_becomes_valid_no_earlier_than_the_value_it_retires():
    current = CurrentMemories.of([stored("32岁", "age", "old_age")])

    (result,) = plan([fact("31岁", "age", created_at=datetime(2020, 1, 1, tzinfo=UTC))], current)

    assert result.memory.valid_from == current.by_field["age"].valid_from == result.superseded.superseded_at


def test_the_current_memories_read_from_a_list_leave_history_out():
    old = stored("32岁", "age", "old_age").model_copy(update={"superseded_at": datetime(2026, 1, 1, tzinfo=UTC)})

    assert CurrentMemories.of([old]) == CurrentMemories()
