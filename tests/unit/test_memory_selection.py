"""The user_memory block's selection rules, pure: importance slots, the token budget, MMR."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agent_memory.domain.inject.memory_selection import (
    MAX_DEPTH,
    SelectableMemory,
    diversify,
    importance_slots,
    memory_budget,
    near_duplicate,
    search_depth,
    selectable,
    similarity,
    without_near_duplicates,
)
from agent_memory.domain.lifecycle.duplicates import DuplicateRule
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef, new_memory_version
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.settings import Settings

WHO = ScopeRef(tenant_id="t-select", user_id="u")
START = datetime(2026, 1, 1, tzinfo=UTC)


def memory(key: str, importance: int = 70, *, content: str | None = None, day: int = 0,
           vector: list[float] | None = None):
    return new_memory_version(WHO, NewMemory(
        memory_type=MemoryType.FACT, content=content or f"memory {key}", importance=importance,
        created_at=START + timedelta(days=day),
        embedding=encode_vector(np.array(vector, dtype=np.float32)) if vector else None,
        embedding_model="test-model" if vector else None), key, None)


def ranked(*keys: str, tokens: int = 10, vectors: dict[str, list[float]] | None = None,
           texts: dict[str, str] | None = None) -> list[SelectableMemory]:
    """Candidates best first, scores falling by 0.01 a rank; each one's text is its key unless `texts` says."""
    vectors, texts = vectors or {}, texts or {}
    return [SelectableMemory(key=k, score=0.9 - 0.01 * i, tokens=tokens, model="m" if k in vectors else None,
                             vector=np.array(vectors[k]) / np.linalg.norm(vectors[k]) if k in vectors else None,
                             content=texts.get(k, k), memory_type=MemoryType.FACT) for i, k in enumerate(keys)]


# ---- importance slots ----------------------------------------------------------------------------

def test_given_tied_importances_when_splitting_the_top_slots_then_importance_earns_none_of_them():
    memories = [memory(f"m{i}", 70, day=i) for i in range(20)]

    split = importance_slots(memories, 5, margin=10)

    assert split.earned == []
    assert [m.memory_key for m in split.fallback] == ["m19", "m18", "m17", "m16", "m15"]  # newest first


def test_given_a_clear_spread_when_splitting_then_the_memories_above_the_margin_keep_their_slots():
    memories = [memory("intent-1", 80), memory("intent-2", 80), *(memory(f"fact-{i}", 70, day=i) for i in range(9))]

    split = importance_slots(memories, 5, margin=10)

    assert sorted(m.memory_key for m in split.earned) == ["intent-1", "intent-2"]
    assert len(split.fallback) == 3 and all(m.importance == 70 for m in split.fallback)


def test_a_spread_below_the_margin_is_not_informative_and_margin_zero_gives_every_slot_to_importance():
    memories = [memory("a", 75), memory("b", 74), *(memory(f"f{i}", 70) for i in range(6))]

    assert importance_slots(memories, 2, margin=10).earned == []
    assert [m.memory_key for m in importance_slots(memories, 2, margin=5).earned] == ["a"]  # 75 - 70 >= 5
    assert [m.memory_key for m in importance_slots(memories, 2, margin=0).earned] == ["a", "b"]


def test_given_restatements_in_the_importance_order_then_each_takes_one_slot_and_the_next_memory_the_rest():
    memories = [memory("a", 90, content="Is allergic to peanuts"), memory("b", 90, content="Allergic to peanuts"),
                memory("c", 80, content="Wants to apply for the QMAS"), *(memory(f"f{i}", 70) for i in range(5))]

    split = importance_slots(memories, 3, margin=10, duplicates=DuplicateRule())

    assert [m.memory_key for m in split.earned] == ["a", "c"] and len(split.fallback) == 1


def test_when_near_duplicates_fill_the_first_places_of_a_long_history_the_slots_are_those_of_the_whole_order():
    restated = [memory(f"r{i}", 90, content="Is allergic to peanuts", day=i) for i in range(40)]
    rest = [memory(f"f{i}", 70 + i % 7, content=f"distinct fact number {i} about topic {i * 7}", day=i)
            for i in range(200)]
    history = [*rest[:100], *restated, *rest[100:]]

    split = importance_slots(history, 5, margin=3, duplicates=DuplicateRule())

    by_sort = without_near_duplicates(sorted(history, key=lambda m: (m.importance, m.created_at), reverse=True),
                                      DuplicateRule(), stop_at=6)
    assert [m.memory_key for m in [*split.earned, *split.fallback]] == [m.memory_key for m in by_sort[:5]]
    assert split.earned[0].memory_key == "r39"  # one of the restatements, the newest; no other takes a slot
    assert sum(m.memory_key.startswith("r") for m in [*split.earned, *split.fallback]) == 1


def test_when_every_memory_fits_the_top_slots_there_is_nothing_to_choose():
    memories = [memory("a", 70), memory("b", 70)]
    assert {m.memory_key for m in importance_slots(memories, 5, margin=10).earned} == {"a", "b"}


# ---- budget --------------------------------------------------------------------------------------

def test_the_budget_is_a_share_of_the_stored_tokens_up_to_the_cap():
    assert memory_budget(30_000, 0.04, 4000) == 1200
    assert memory_budget(300_000, 0.04, 4000) == 4000
    assert memory_budget(30_000, 0.0, 4000) == 0
    with pytest.raises(ValueError):
        memory_budget(-1, 0.04, 4000)


def test_search_depth_covers_the_budget_with_room_for_skipped_duplicates():
    assert search_depth(1200, 60, 3) == 31  # 1.5 * 1200 / 60 + 1
    assert search_depth(0, 60, 3) == 3  # the floor still needs its memories
    assert search_depth(1_000_000, 60, 3) == MAX_DEPTH


# ---- similarity and MMR --------------------------------------------------------------------------

def test_similarity_is_the_cosine_of_comparable_vectors_else_term_overlap():
    a = selectable(memory("a", content="Ann paints lakes", vector=[1.0, 0.0]), 0.9, 10)
    b = selectable(memory("b", content="Ann paints lakes at dawn", vector=[0.8, 0.6]), 0.8, 10)
    plain = selectable(memory("c", content="Ann paints lakes at dusk"), 0.7, 10)

    assert similarity(a, b) == pytest.approx(0.8, abs=1e-3)
    assert 0.5 < similarity(b, plain) < 1.0  # no vector on one side: the analysed terms


def test_a_near_duplicate_restates_in_nearly_the_same_words_whatever_the_cosine_says():
    said = selectable(memory("a", content="Is allergic to peanuts", vector=[1.0, 0.0]), 0.9, 10)
    again = selectable(memory("b", content="Allergic to peanuts!", vector=[0.0, 1.0]), 0.8, 10)
    other = selectable(memory("c", content="Is allergic to shellfish", vector=[1.0, 0.0]), 0.7, 10)

    assert near_duplicate(said, again, DuplicateRule()) and not near_duplicate(said, other, DuplicateRule())
    assert not near_duplicate(said, again, DuplicateRule(min_cosine=0.9))  # a cosine floor, when set, applies
    assert not near_duplicate(said, again, DuplicateRule(min_cosine=0, min_overlap=0))  # off


TEXTS = {"a": "Prefers email over phone calls", "a-again": "prefers email over phone calls.",
         "b": "Lives in Shenzhen", "c": "Wants to apply for the QMAS"}


def test_given_a_near_duplicate_of_a_better_ranked_memory_when_diversifying_then_it_is_dropped():
    vectors = {"a": [1.0, 0.0, 0.0], "a-again": [0.999, 0.02, 0.0], "b": [0.0, 1.0, 0.0], "c": [0.0, 0.0, 1.0]}

    picks = diversify([], ranked("a", "a-again", "b", "c", vectors=vectors, texts=TEXTS), budget=1000, min_count=0)

    assert [c.key for c in picks] == ["a", "b", "c"]


def test_near_duplicates_of_what_importance_already_shows_are_dropped_too():
    vectors = {"shown": [1.0, 0.0], "same": [1.0, 0.001], "other": [0.0, 1.0]}
    texts = {"shown": "用户对花生过敏", "same": "我对花生过敏", "other": "我住在上海"}
    shown, *rest = ranked("shown", "same", "other", vectors=vectors, texts=texts)
    assert [c.key for c in diversify([shown], rest, budget=1000, min_count=0)] == ["other"]


def test_a_close_variant_that_says_something_else_is_never_dropped_as_a_duplicate():
    vectors = {"a": [1.0, 0.0], "b": [1.0, 0.001]}  # as close as vectors get
    texts = {"a": "我住在上海", "b": "我住在北京"}
    picks = diversify([], ranked("a", "b", vectors=vectors, texts=texts), budget=1000, min_count=0)
    assert [c.key for c in picks] == ["a", "b"]


def test_without_near_duplicates_keeps_the_first_of_each_statement_in_order():
    memories = [memory("a", content="Is allergic to peanuts"), memory("b", content="Lives in Shenzhen"),
                memory("c", content="Allergic to peanuts."), memory("d", content="lives in shenzhen")]

    assert [m.memory_key for m in without_near_duplicates(memories, DuplicateRule())] == ["a", "b"]


def test_mmr_prefers_a_memory_that_says_something_new_over_a_close_variant_of_one_shown():
    vectors = {"a": [1.0, 0.0], "a-variant": [0.9, 0.436], "b": [0.0, 1.0]}  # cosine 0.9: similar, not a duplicate
    picks = diversify([], ranked("a", "a-variant", "b", vectors=vectors), budget=1000, min_count=0, trade_off=0.5)
    assert [c.key for c in picks] == ["a", "b", "a-variant"]
    plain = diversify([], ranked("a", "a-variant", "b", vectors=vectors), budget=1000, min_count=0, trade_off=1.0)
    assert [c.key for c in plain] == ["a", "a-variant", "b"]  # trade_off 1: relevance order


def test_the_budget_stops_the_picks_once_the_floor_is_reached():
    pool = ranked(*"abcdefghij", tokens=100)

    assert len(diversify([], pool, budget=450, min_count=2)) == 4  # 4 lines fit 450 tokens
    assert len(diversify([], pool, budget=0, min_count=3)) == 3  # the floor, whatever the budget
    shown = ranked("x", "y", tokens=200)  # what importance shows counts against the budget
    assert len(diversify(shown, pool, budget=450, min_count=2)) == 0


def test_settings_defaults_are_the_selections_defaults():
    from agent_memory.domain.inject import memory_selection as rules

    defaults = Settings()
    assert defaults.context_importance_margin == rules.DEFAULT_IMPORTANCE_MARGIN
    assert defaults.context_user_memory_max_share == rules.DEFAULT_MAX_SHARE
    assert defaults.context_user_memory_max_tokens == rules.DEFAULT_MAX_TOKENS
