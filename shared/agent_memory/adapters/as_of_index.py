"""As-of reads: the memories that were current at an instant, searched as current ones are.

Both search tiers answer as-of through this one: every version of a user's memories (current, superseded and
deleted) is read from the store and indexed in process (BM25, the stored embeddings, conversation neighbours),
cached by the user's content version exactly like the serverless tier's index (a repeated as-of search costs one
GetItem). A query's `as_of` then picks the versions valid at that instant (from `valid_from` until superseded or
deleted) and scores them as an index of just those versions would: BM25's document count, frequencies and average
length are those of the chosen versions, and conversation neighbours are found among them. The candidates are the
versions as they stood then (what retired them later is not yet known), so the ranking treats them as current.

The versions valid throughout one stretch between two changes are the same, so what searching them takes (their
rows, vectors, BM25 statistics, conversation neighbours and the versions as they stood) is made once per stretch:
a warm as-of search then costs what a search of that many current memories costs. The index is saved as a
snapshot of its version, apart from the current index's, so a new container loads it instead of the partition.

The OpenSearch tier indexes only current memories, so as-of reads there come from the table too: one partition
read when the user's version moved, then in-process work of the same order as a current search.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from agent_memory.adapters.in_process_index import InProcessIndex, select_candidates
from agent_memory.adapters.user_index import UserIndex
from agent_memory.domain.models import AccessStats, Memory, ScopeRef, StoreVersions
from agent_memory.domain.search.bm25 import Bm25Subset
from agent_memory.domain.search.index_changes import IndexChanges
from agent_memory.domain.search.index_snapshot import MergedMemories, RowOutline, StoredMemories
from agent_memory.domain.search.neighbours import previous_turns, with_neighbours
from agent_memory.domain.search.ranking import Candidate
from agent_memory.ports import CandidateQuery, Embedder, IndexSnapshotStore, MemoryStore, SearchIndex

_NEVER = np.inf  # the end of a version's validity that nothing retired yet
_WINDOWS_KEPT = 8  # per user, the last asked for: each holds its versions' vectors, row numbers and BM25 statistics
_WINDOW_BYTES = 8 << 20  # and their vectors no more than this (one window is always kept): ~5,000 memories


class _EveryVersion:
    """The store as the in-process index reads it, with every version standing in for the current memories."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def versions(self, user: ScopeRef) -> StoreVersions:
        return self._store.versions(user)

    def all_current(self, user: ScopeRef) -> list[Memory]:
        return self._store.all_versions(user)

    def access_stats(self, user: ScopeRef) -> dict[str, AccessStats]:
        return self._store.access_stats(user)

    def changes(self, user: ScopeRef, after: StoreVersions, through: StoreVersions) -> IndexChanges | None:
        return self._store.changes(user, after, through, every_version=True)


class AsOfIndex(SearchIndex):  # windows of the past, no copy of the current memories: no memory_cache
    """A search tier for queries with `as_of`, over every version of a user's memories."""

    def __init__(self, *, store: MemoryStore, embedder: Callable[[], Embedder | None], max_users: int = 8,
                 snapshots: IndexSnapshotStore | None = None, snapshot_min_memories: int = 100,
                 background: Executor | None = None) -> None:
        """`max_users`: how many users' indexes of every version a container keeps (each holds all their versions:
        as-of reads are rarer than current ones, so fewer are kept than of the current index). `snapshots`: where
        these indexes are saved and looked for, apart from the current index's (see InProcessIndex)."""
        self._versions = InProcessIndex(store=_EveryVersion(store), embedder=embedder, max_users=max_users,
                                        snapshots=snapshots, snapshot_min_memories=snapshot_min_memories,
                                        background=background)
        self._validity: OrderedDict[ScopeRef, _Validity] = OrderedDict()
        self._max_users = max_users
        self._lock = threading.Lock()

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]:
        if query.as_of is None:
            raise ValueError("the as-of index answers queries with as_of only")
        index = self._versions.user_index(user)
        window = self._validity_of(user, index).window_at(query.as_of)
        if not len(window.rows):
            return []
        lexical = (index.bm25.scores(query.terms, among=window.bm25)[window.rows] if query.terms
                   else np.zeros(len(window.rows), np.float32))
        lexical = with_neighbours(lexical, window.previous_turns, query.neighbour_share)
        return select_candidates(window.memories, lexical, window.vectors, query)

    def vectors(self, user: ScopeRef, memory_keys: list[str]) -> dict[str, np.ndarray]:
        return self._versions.vectors(user, memory_keys)

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        """Saves look for the current memories a new one restates: never in the past."""
        return [[] for _ in range(len(vectors))]

    @property
    def stats(self) -> dict[str, int]:
        """Its cache's hits and misses, and its snapshots' loads and saves."""
        return self._versions.stats

    def flush(self, timeout: float | None = None) -> None:
        """Wait for the snapshots being saved in the background."""
        self._versions.flush(timeout)

    def memories_at(self, user: ScopeRef, at: datetime) -> list[Memory]:
        """The versions valid at `at`, as they stood then, oldest key first."""
        index = self._versions.user_index(user)
        validity = self._validity_of(user, index)
        return list(validity.window_at(at).memories)

    def _validity_of(self, user: ScopeRef, index: UserIndex) -> _Validity:
        """The versions' validity, computed once per index version."""
        with self._lock:
            cached = self._validity.get(user)
            if cached is not None and cached.index is index:
                self._validity.move_to_end(user)
                return cached
        built = _Validity.of(index)
        with self._lock:
            self._validity[user] = built
            self._validity.move_to_end(user)
            while len(self._validity) > self._max_users:
                self._validity.popitem(last=False)
        return built


@dataclass(frozen=True)
class _Window:
    """The versions valid throughout one stretch of time between two saves, deletes or supersessions, with what
    searching them needs (their BM25 statistics and conversation neighbours): made once, reused by every query
    as of an instant in that stretch."""

    rows: np.ndarray  # the index's rows of the valid versions, ascending
    memories: list[Memory]  # as they stood while valid
    bm25: Bm25Subset
    previous_turns: np.ndarray  # among `rows`, as positions in it
    vectors: np.ndarray | None  # the index's vectors of `rows` (a copy: scoring a contiguous block is faster)


@dataclass
class _Validity:
    """Each version's [valid_from, superseded_at) as epoch seconds, the versions as they stood while valid (made
    when first chosen: whatever the instant, a valid version stood with nothing retiring it yet), and the last
    few windows asked for."""

    index: UserIndex  # what it was computed for: the index is built anew for every version and generation
    starts: np.ndarray
    ends: np.ndarray
    changes: np.ndarray  # every instant at which some version became or ceased to be valid, ascending
    outlines: Sequence[RowOutline | Memory]  # each row's validity and conversation links
    stood: dict[int, Memory] = field(default_factory=dict)
    windows: OrderedDict[int, _Window] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, index: UserIndex) -> _Validity:
        # A snapshot's rows are outlined without validating every memory; a list of memories is read as it is.
        memories = index.memories
        rows: Sequence[RowOutline | Memory] = (memories.outlines()
                                               if isinstance(memories, StoredMemories | MergedMemories) else memories)
        starts = np.fromiter((m.valid_from.timestamp() for m in rows), dtype=np.float64, count=len(rows))
        ends = np.fromiter((m.superseded_at.timestamp() if m.superseded_at else _NEVER for m in rows),
                           dtype=np.float64, count=len(rows))
        changes = np.unique(np.concatenate([starts, ends[np.isfinite(ends)]]))
        return cls(index, starts, ends, changes, rows)

    def _as_it_stood(self, row: int) -> Memory:
        """Copied once per version, then shared by every window it is valid in."""
        memory = self.stood.get(row)
        if memory is None:
            memory = self.stood[row] = self.index.memories[row].while_valid()
        return memory

    def window_at(self, at: datetime) -> _Window:
        instant = at.timestamp()
        stretch = int(np.searchsorted(self.changes, instant, side="right"))  # instants in one stretch: same versions
        with self.lock:
            window = self.windows.get(stretch)
            if window is not None:
                self.windows.move_to_end(stretch)
                return window
        valid = (self.starts <= instant) & (instant < self.ends)
        rows = np.flatnonzero(valid)
        memories = [self._as_it_stood(row) for row in rows.tolist()]
        vectors = self.index.vectors[rows] if self.index.vectors is not None else None
        window = _Window(rows, memories, self.index.bm25.among(valid),
                         previous_turns([self.outlines[i] for i in rows.tolist()]), vectors)
        with self.lock:
            self.windows[stretch] = window
            while len(self.windows) > 1 and (len(self.windows) > _WINDOWS_KEPT or sum(
                    w.vectors.nbytes for w in self.windows.values() if w.vectors is not None) > _WINDOW_BYTES):
                self.windows.popitem(last=False)
        return window
