"""Memory models and keys: default importances, content normalisation and hashing, memory keys and ids."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.keys import is_valid_id, is_valid_memory_key, new_memory_key
from agent_memory.domain.models import MemoryType, NewMemory, content_hash, normalize_content


def test_default_importance_is_fact_70_preference_60_intent_80():
    assert [NewMemory(memory_type=t, content="x").effective_importance() for t in MemoryType] == [70, 60, 80]
    assert NewMemory(memory_type=MemoryType.FACT, content="x", importance=5).effective_importance() == 5


def test_normalisation_ignores_width_case_spacing_and_punctuation_but_not_digits():
    assert normalize_content("用户 32 岁。") == normalize_content("用户３２岁") == "用户32岁"
    assert content_hash("Lives in  Paris!") == content_hash("lives in paris")
    assert content_hash("用户32岁") != content_hash("用户33岁")


@given(st.lists(st.integers(min_value=0, max_value=2**40), min_size=2, max_size=50))
def test_memory_keys_are_valid_and_strictly_increasing_in_creation_order(times):
    keys = [new_memory_key(now_ms=t) for t in sorted(times)]
    assert all(is_valid_memory_key(k) for k in keys)
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


@pytest.mark.parametrize("value", ["u1", "user@example.com", "a:b.c-d_e", "x" * 128])
def test_valid_ids(value):
    assert is_valid_id(value)


@pytest.mark.parametrize("value", ["", "a#b", "a b", "x" * 129, "-lead", "用户"])
def test_invalid_ids(value):
    assert not is_valid_id(value)


def test_given_an_item_stored_before_provenance_when_read_then_its_origin_is_unknown_and_no_writer():
    from agent_memory.adapters.dynamodb.items import memory_from_item, memory_to_item
    from agent_memory.domain.models import Memory, Origin

    when = datetime(2026, 1, 5, tzinfo=UTC)
    item = memory_to_item(Memory(memory_key="mem_01", tenant_id="t", user_id="u", memory_type=MemoryType.FACT,
                                 content="x", importance=70, content_hash="h", created_at=when, updated_at=when,
                                 valid_from=when))
    for name in ("origin", "written_by"):
        item.pop(name, None)

    old = memory_from_item(item)
    strange = memory_from_item({**item, "origin": {"S": "a-later-origin"}})

    assert (old.origin, old.written_by) == (Origin.UNKNOWN, None)
    assert strange.origin is Origin.UNKNOWN
