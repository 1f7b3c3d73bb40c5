"""Maximal marginal relevance (domain/search/mmr.py), the one implementation behind the search's diversified order and
the user_memory block's picks. On a fixed input both give, to the pick, what their own loops gave before."""

from __future__ import annotations

import numpy as np
import pytest

from agent_memory.domain.inject.memory_selection import SelectableMemory, diversify
from agent_memory.domain.models import MemoryType
from agent_memory.domain.search.mmr import mmr_order
from agent_memory.domain.search.ranking import diversified

TOPICS = ["paints lakes", "moved to Kowloon", "studies Cantonese", "applies for the visa"]


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def fixed_ranking() -> tuple[list[float], list[np.ndarray | None], list[SelectableMemory]]:
    """16 memories around 4 topics, scores in equal pairs (ties), every fifth without a vector."""
    rng = np.random.default_rng(29)
    topics = [_unit(rng.normal(size=8)) for _ in range(4)]
    vectors = [_unit(topics[i % 4] + 0.3 * rng.normal(size=8)) if i % 5 != 4 else None for i in range(16)]
    scores = [round(0.9 - 0.02 * (i // 2), 4) for i in range(16)]
    pool = [SelectableMemory(key=f"m{i}", score=scores[i], tokens=20 + i, vector=vectors[i],
                             model="e5" if vectors[i] is not None else None,
                             content=f"the user {TOPICS[i % 4]} note {i % 3}", memory_type=MemoryType.FACT)
            for i in range(16)]
    return scores, vectors, pool


def test_given_a_fixed_ranking_then_the_blocks_picks_are_the_ones_its_own_loop_made():
    _, _, pool = fixed_ranking()

    assert [c.key for c in diversify([pool[15]], pool[:15], budget=200, min_count=3)] == [
        "m1", "m7", "m8", "m0", "m4", "m6"]
    assert [c.key for c in diversify([], pool, budget=10_000, min_count=0)] == [
        "m0", "m3", "m1", "m2", "m7", "m4", "m6", "m5", "m8", "m9", "m11", "m10"]
    assert [c.key for c in diversify([], pool, budget=10_000, min_count=0, trade_off=0.5)] == [
        "m0", "m3", "m1", "m14", "m7", "m8", "m4", "m6", "m9", "m10", "m5", "m11"]


def test_given_a_fixed_ranking_then_the_searchs_order_is_the_one_its_own_loop_made():
    scores, vectors, _ = fixed_ranking()

    picks = diversified(scores, vectors, 10, 0.4)
    assert [i for i, _ in picks] == [0, 3, 4, 9, 14, 1, 10, 7, 8, 15]
    assert [round(r, 6) for _, r in picks] == [0.0, 0.0, 0.0, 0.0, 0.0, 0.265605, 0.216473, 0.432481, 0.520343,
                                               0.430882]
    assert [i for i, _ in diversified(scores, vectors, 16, 0.0)] == list(range(16))


class _NothingAlike:
    def __init__(self, n: int) -> None:
        self.nearest = np.zeros(n)
        self.alive = np.ones(n, dtype=bool)
        self.picks: list[int] = []

    def picked(self, index: int) -> None:
        self.picks.append(index)


def test_an_item_is_taken_only_when_the_caller_asks_for_the_next_one():
    redundancy = _NothingAlike(3)
    order = mmr_order(np.array([0.2, 0.9, 0.5]), 0.8, redundancy)

    assert next(order) == 1 and redundancy.picks == [] and redundancy.alive.all()  # a caller may stop here
    assert list(order) == [2, 0] and redundancy.picks == [1, 2, 0] and not redundancy.alive.any()


def test_a_relevance_weight_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="relevance_weight"):
        next(mmr_order(np.array([0.5]), 1.5, _NothingAlike(1)))
