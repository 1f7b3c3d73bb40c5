"""Which context blocks fit in the token budget: P0 always, then P1 before P2."""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.domain.context import ContextBlock, Priority


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
