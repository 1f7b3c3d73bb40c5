"""Maximal marginal relevance, the one implementation: the search's diversified order and the user_memory
block's picks both take their items from here.

Each pick is the pickable item with the best `relevance_weight * score - (1 - relevance_weight) * (its highest
similarity to the picks before it)`: 1 orders by score alone. What "similar" and "pickable" mean is the
caller's (`Redundancy`): cosines of stored embeddings for the search, with the analysed terms and the
near-duplicate rule for the block.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np


class Redundancy(Protocol):
    """Per item: its highest similarity to the picks so far (`nearest`), and whether it may still be picked
    (`alive`); `picked` updates both once an item is taken (the picked item is already not alive)."""

    nearest: np.ndarray
    alive: np.ndarray

    def picked(self, index: int) -> None: ...


def mmr_order(scores: np.ndarray, relevance_weight: float, redundancy: Redundancy) -> Iterator[int]:
    """The items' indexes in pick order, as long as some are pickable and the caller asks for more (an item
    is taken only when the caller asks for the next one, so a caller that stops at a budget leaves `redundancy`
    as it was after the last item it kept). Equal values: the first, the better ranked."""
    import numpy as np

    if not 0.0 <= relevance_weight <= 1.0:
        raise ValueError("relevance_weight must be within [0, 1]")
    while redundancy.alive.any():
        value = np.where(redundancy.alive, relevance_weight * scores - (1 - relevance_weight) * redundancy.nearest,
                         -np.inf)
        best = int(np.argmax(value))
        yield best
        redundancy.alive[best] = False
        redundancy.picked(best)
