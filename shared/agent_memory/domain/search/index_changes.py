"""What a search index of an older version needs to become the index of a newer one, and what the last seconds' writes
stored (for an index fed off the request path, which may not have them yet)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from agent_memory.domain.models import Memory


@dataclass(frozen=True)
class IndexChanges:
    """`upserted`: the memories to index as they now stand (new ones, or rows replaced), by memory key;
    `removed`: keys no longer indexed (superseded, deleted, expired)."""

    upserted: list[Memory] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RecentWrites:
    """What the writes since some moment stored, each with when it was written (epoch seconds): the current
    memories as they now stand, and the keys that stopped being current (superseded, deleted, expired)."""

    upserted: dict[str, tuple[Memory, float]] = field(default_factory=dict)
    removed: dict[str, float] = field(default_factory=dict)

    @classmethod
    def folded(cls, writes: Iterable[tuple[float, Sequence[Memory]]], *, kept: Callable[[Memory], bool]
               ) -> RecentWrites:
        """The net effect of `writes` (when, the memory versions written), oldest first: each key as it was
        written last."""
        upserted: dict[str, tuple[Memory, float]] = {}
        removed: dict[str, float] = {}
        for written_at, memories in writes:
            for memory in memories:
                if memory.is_current and kept(memory):
                    upserted[memory.memory_key] = (memory, written_at)
                    removed.pop(memory.memory_key, None)
                else:
                    removed[memory.memory_key] = written_at
                    upserted.pop(memory.memory_key, None)
        return cls(upserted, removed)

    def since(self, moment: float) -> RecentWrites:
        """Only what was written after `moment`."""
        return RecentWrites({k: v for k, v in self.upserted.items() if v[1] > moment},
                            {k: t for k, t in self.removed.items() if t > moment})
