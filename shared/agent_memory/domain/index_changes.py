"""What a search index of an older version needs to become the index of a newer one."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_memory.domain.models import Memory


@dataclass(frozen=True)
class IndexChanges:
    """`upserted`: the memories to index as they now stand (new ones, or rows replaced), by memory key;
    `removed`: keys no longer indexed (superseded, deleted, expired)."""

    upserted: list[Memory] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
