"""The inject budget: what a context window keeps for the model's answer and the caller's system prompt, and
which context blocks fit in the rest (P0 always, then P1 before P2)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory.domain.inject.context import ContextBlock, Priority

# The reserves' defaults: the answer's reserve is 10% of the window, at most 4,096 tokens; the system prompt's is
# 25% of the window, at most 10,000. A window of 40,960 tokens or more keeps 14,096; a smaller one keeps 35% of
# itself, so 4,000 leaves 2,600 for history and context and 8,000 leaves 5,200.
OUTPUT_RESERVE_SHARE = 0.10
OUTPUT_RESERVE_CAP = 4096
SYSTEM_RESERVE_SHARE = 0.25
SYSTEM_RESERVE_CAP = 10_000


@dataclass(frozen=True)
class Reserves:
    """The tokens a window keeps for the model's answer and for the system prompt; the rest is `available`
    to the history and the injected context."""

    window: int
    output: int
    system: int

    @property
    def available(self) -> int:
        return self.window - self.output - self.system


@dataclass(frozen=True)
class ReserveRule:
    """Each reserve is a share of the window, rounded down, up to a cap; a caller that knows its own (its
    `max_tokens`, its system prompt's size) states it instead."""

    output_share: float = OUTPUT_RESERVE_SHARE
    output_cap: int = OUTPUT_RESERVE_CAP
    system_share: float = SYSTEM_RESERVE_SHARE
    system_cap: int = SYSTEM_RESERVE_CAP

    def reserves(self, window: int, *, output: int | None = None, system: int | None = None) -> Reserves:
        return Reserves(
            window=window,
            output=min(self.output_cap, _share(window, self.output_share)) if output is None else output,
            system=min(self.system_cap, _share(window, self.system_share)) if system is None else system,
        )


def _share(window: int, share: float) -> int:
    """`share` of `window`, rounded down (10% of 8,000 is 800, not 799 by a float's last bit)."""
    return int(window * share + 1e-9)


def fit(blocks: Sequence[ContextBlock], budget: int) -> tuple[list[ContextBlock], list[ContextBlock]]:
    """(injected, dropped) over priority-sorted blocks: P0 always goes in (it may force compaction);
    every other block goes in if it fits in what is left, in priority order, so a small lower-priority
    block still goes in after a large higher-priority one did not fit."""
    injected: list[ContextBlock] = []
    dropped: list[ContextBlock] = []
    for block in blocks:
        if block.priority == Priority.CRITICAL or block.estimated_tokens <= budget:
            injected.append(block)
            budget -= block.estimated_tokens
        else:
            dropped.append(block)
    return injected, dropped


def context_tokens(blocks: Sequence[ContextBlock], frame: int) -> int:
    """The blocks' tokens plus the frame's, which comes only with at least one block."""
    return sum(b.estimated_tokens for b in blocks) + (frame if blocks else 0)


def shed(blocks: Sequence[ContextBlock], budget: int, frame: int) -> tuple[list[ContextBlock], list[ContextBlock]]:
    """(kept, shed): the last resort once the history is as small as it gets. While the blocks and their
    frame exceed `budget`, the lowest-priority block goes (the later one within a priority); P0 stays."""
    kept = list(blocks)
    dropped: list[ContextBlock] = []
    while context_tokens(kept, frame) > budget and any(b.priority > Priority.CRITICAL for b in kept):
        worst = max(range(len(kept)), key=lambda i: (kept[i].priority, i))
        dropped.append(kept.pop(worst))
    return kept, dropped
