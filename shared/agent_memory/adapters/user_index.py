"""One user's search index of one version, and how the changes since make it the index of a newer one."""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from agent_memory.domain.models import Memory, StoreVersions
from agent_memory.domain.search.bm25 import Bm25Index
from agent_memory.domain.search.index_changes import IndexChanges
from agent_memory.domain.search.index_snapshot import MergedMemories, memory_keys
from agent_memory.domain.search.neighbours import previous_from_links, turn_links
from agent_memory.domain.text.text import searchable_text


@dataclass
class UserIndex:
    """One user's memories as searched: their BM25 index, vectors and conversation neighbours, of one version."""

    version: int
    memories: Sequence[Memory]  # a list, or a snapshot's memories (each validated when first read)
    bm25: Bm25Index
    vectors: np.ndarray | None  # (n, dim), rows L2-normalised
    previous_turns: np.ndarray  # (n,) each memory's conversation neighbour before it, or -1
    access_version: int = 0
    access_read_at: float = 0.0  # monotonic seconds
    rows: dict[str, int] | None = None  # memory key -> row, built when first asked for
    generation: str = ""  # the version counter's: an erased user's counter starts again in a new one
    links: np.ndarray | None = None  # (n, 2) each row's turn links (neighbours.turn_links); None: not known yet
    expires: np.ndarray | None = None  # (n,) each row's expiry stamped at save, epoch seconds (inf: none)
    snapshot_version: int = -1  # the version of the snapshot it was loaded from or last saved as (-1: none)

    def row_of(self) -> dict[str, int]:
        if self.rows is None:
            self.rows = {key: i for i, key in enumerate(memory_keys(self.memories))}
        return self.rows


def row_expiry(memories: Sequence[Memory]) -> np.ndarray:
    return np.array([m.expires_at.timestamp() if m.expires_at is not None else np.inf for m in memories],
                    dtype=np.float64)



def applied_changes(base: UserIndex, changes: IndexChanges, versions: StoreVersions, *,
                    vectors_of: Callable[[list[Memory]], np.ndarray | None], dimension: int | None) -> UserIndex:
    """The index a build from the store's memories would make, from `base` and what changed since: rows
    removed, superseded and expired (by the expiry stamped at save) dropped, new ones added in key order
    (the store's), the BM25 postings, vectors and turn links rearranged rather than made again."""
    keys = memory_keys(base.memories)
    links = base.links if base.links is not None else turn_links(base.memories)
    expires = base.expires if base.expires is not None else row_expiry(base.memories)
    kept = expires > time.time()
    rows = base.row_of()
    for key in (*changes.removed, *(m.memory_key for m in changes.upserted)):
        row = rows.get(key)
        if row is not None:
            kept[row] = False
    kept_rows = np.flatnonzero(kept)
    kept_keys = [keys[i] for i in kept_rows.tolist()]
    added = changes.upserted  # in key order
    at = [bisect.bisect_left(kept_keys, m.memory_key) for m in added]
    order = np.insert(kept_rows.astype(np.int64), at, -(np.arange(len(added), dtype=np.int64) + 1))
    taken = order >= 0
    new_keys = [keys[i] if i >= 0 else added[-i - 1].memory_key for i in order.tolist()]
    memories = MergedMemories.of(base.memories, keys).arranged(order, added, new_keys)
    where_added = -order[~taken] - 1

    added_rows = np.flatnonzero(~taken)

    def arranged(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        if not len(old):
            return new[where_added]
        rows_now = old.take(np.maximum(order, 0), axis=0)  # one gather of runs in order: a copy at memory speed
        rows_now[added_rows] = new[where_added]
        return rows_now

    vectors = None
    old_vectors = base.vectors
    if old_vectors is None and not len(base.memories) and dimension is not None:  # an empty index has none
        old_vectors = np.zeros((0, dimension), dtype=np.float32)
    if old_vectors is not None:
        fresh = vectors_of(added)
        vectors = arranged(old_vectors, fresh if fresh is not None else old_vectors[:0])
    new_links = arranged(links, turn_links(added))
    return UserIndex(versions.content, memories,
                     base.bm25.rearranged(order, [searchable_text(m) for m in added]), vectors,
                     previous_from_links(new_links), base.access_version, base.access_read_at,
                     generation=versions.generation, links=new_links,
                     expires=arranged(expires, row_expiry(added)), snapshot_version=base.snapshot_version)

