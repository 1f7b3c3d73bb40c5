"""The serverless search tier: candidates from the user's own memories, searched inside the Lambda.

Exact cosine over the stored embeddings plus in-process BM25. A per-container cache keyed by the
user's version counter means a repeated search costs one GetItem, not a partition read. Recorded
reads move a second counter: then only the access statistics are read again (a projection query,
at most every `access_refresh_seconds`), so the interaction score follows them without a rebuild.

With a snapshot store, a container that has no index of the user's current version first looks for a
snapshot of exactly that version (the memories without embeddings, the BM25 postings, the vectors as
float16): one Query, no tokenising, and a memory validated only when a search first touches it, instead of
reading and indexing every memory (at 10,000 memories: ~0.2 s instead of ~3 s). After a build from the
memories, the index is saved as that version's snapshot, off the request's path. A snapshot of another
version is never used; a missing, damaged or incompatible one (another embedding model, other text
analysis) falls back to reading the memories.
"""

from __future__ import annotations

import gc
import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, wait
from contextlib import contextmanager, suppress
from functools import cache

import numpy as np

from agent_memory.adapters.user_index import UserIndex, applied_changes, row_expiry
from agent_memory.domain.models import Keyword, Memory, ScopeRef, StoreVersions
from agent_memory.domain.search.bm25 import Bm25Index
from agent_memory.domain.search.index_changes import IndexChanges
from agent_memory.domain.search.index_snapshot import (
    IndexSnapshot,
    MergedMemories,
    SnapshotCorrupt,
    StoredMemories,
    decode_snapshot,
    encode_snapshot,
)
from agent_memory.domain.search.neighbours import previous_from_links, turn_links, with_neighbours
from agent_memory.domain.search.ranking import Candidate
from agent_memory.domain.search.vectors import decode_vector
from agent_memory.domain.text.text import searchable_text, tokenize
from agent_memory.observability import logger
from agent_memory.ports import CandidateQuery, Embedder, IndexedMemories, IndexSnapshotStore


@cache
def analyzer_fingerprint() -> str:
    """What the lexical index makes of a probe memory (stemming, stop words, CJK bigrams, what is indexed):
    a snapshot whose postings were made by other text analysis is not used."""
    probe = Memory.model_construct(
        content="Caroline's running shoes, bought in Hangzhou in 2024; the user's ＡＢＣ", category="Travel",
        keywords=[Keyword(term="高才通B类"), Keyword(term="marathons")], context="用户对香港优才计划感兴趣")
    return hashlib.sha256(json.dumps(tokenize(searchable_text(probe))).encode()).hexdigest()[:16]


class _CollectorPause:
    """The cyclic garbage collector off while an index is built: the build makes tens of thousands of objects
    that all live on, and the collector would walk the growing heap over and over for nothing (10,000
    memories validated in 0.45 s with it, 0.12 s without). Process-wide, so nested and concurrent pauses
    are counted and only the last one out turns it back on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._was_enabled = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._was_enabled:
                    gc.enable()


_collector_paused = _CollectorPause()


class _FrozenHeap:
    """Moves what the process holds, the index just cached among it, out of the cyclic collector's sight
    (gc.freeze): a full collection, which any request's garbage may trigger, then skips it instead of walking
    it (one took 48 ms in a warm inject at 1,000 memories). An index replaced or evicted is still freed by
    reference counting, as it holds no reference cycles.

    A freeze takes garbage with it, though: cycles already unreachable but not yet collected, and those other
    threads' requests held at that moment and dropped later. Frozen, the collector never frees them (a
    three-client soak froze 55,000 such objects in 8 minutes, and memory grew for as long as it ran). So once
    the frozen heap has grown by `regrowth` since the last full pass, it is unfrozen, collected whole and
    frozen again: frozen garbage stays under that share of the heap, for one full collection per that growth.
    The first freeze takes the heap as it is: a full pass then walks everything the process imported (the
    embedder, the SDKs), which made a new container's first search ~0.5 s slower, for the little garbage
    start-up leaves."""

    def __init__(self, regrowth: float = 0.5) -> None:
        self._regrowth = regrowth
        self._after_full_pass = 0  # objects frozen at the first freeze or right after the last full pass
        self._lock = threading.Lock()

    def freeze(self) -> None:
        with self._lock:
            gc.freeze()
            if not self._after_full_pass:
                self._after_full_pass = gc.get_freeze_count()
            elif gc.get_freeze_count() >= self._after_full_pass * (1 + self._regrowth):
                gc.unfreeze()
                gc.collect()
                gc.freeze()
                self._after_full_pass = gc.get_freeze_count()


_frozen_heap = _FrozenHeap()


def _out_of_collectors_sight() -> None:
    _frozen_heap.freeze()


@cache
def one_blas_thread() -> None:
    """Matrix products in this process on one thread. A search multiplies one query vector by a user's vectors,
    a memory-bound product that OpenBLAS splits over threads above a few thousand rows; on a Lambda's 1-2 vCPUs,
    or in a server answering requests side by side, those threads wait for each other instead (3,000 x 384 under
    load: 0.35 ms on two threads, 0.10 ms on one; 10,000: 3.2 ms against 1.4 ms). Process-wide, set once."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def allowed_by(memory: Memory, query: CandidateQuery) -> bool:
    """The query's filters: memory types, the created_at range, and retention (what expired is never proposed)."""
    if query.memory_types and memory.memory_type not in query.memory_types:
        return False
    if query.created_from and memory.created_at < query.created_from:
        return False
    cutoff = query.expired_before.get(memory.memory_type)
    if cutoff is not None and memory.created_at < cutoff:
        return False
    return not (query.created_to and memory.created_at > query.created_to)


def select_candidates(memories: Sequence[Memory], lexical: np.ndarray, vectors: np.ndarray | None,
                      query: CandidateQuery) -> list[Candidate]:
    """The best `query.k` of the memories by each signal (BM25 `lexical`, cosine to the query over `vectors`, the
    rows L2-normalised), among those the query's filters allow: the candidates a ranking orders."""
    allowed = (np.array([allowed_by(m, query) for m in memories], dtype=bool)
               if query.memory_types or query.created_from or query.created_to or query.expired_before
               else np.ones(len(memories), dtype=bool))
    # Last: the query's embedding may still be under way on another thread.
    query_vector = query.query_vector() if vectors is not None else None
    vector = vectors @ query_vector if vectors is not None and query_vector is not None else None
    chosen: set[int] = set()
    for signal in (lexical, vector):
        if signal is None:
            continue
        masked = np.where(allowed, signal, -np.inf)
        top = np.argsort(-masked)[: query.k]
        chosen.update(int(i) for i in top if np.isfinite(masked[i]) and (signal is vector or masked[i] > 0))
    return [
        Candidate(
            memory=memories[i],
            lexical=float(lexical[i]) if lexical[i] > 0 else None,
            vector=float(vector[i]) if vector is not None else None,
            embedding=vectors[i] if vectors is not None else None,
        )
        for i in sorted(chosen)
    ]


class InProcessIndex:
    def __init__(
        self, *, store: IndexedMemories, embedder: Callable[[], Embedder | None], max_users: int = 256,
        access_refresh_seconds: float = 10.0, clock: Callable[[], float] = time.monotonic,
        snapshots: IndexSnapshotStore | None = None, snapshot_min_memories: int = 100,
        background: Executor | None = None, max_changes: int = 2000, snapshot_every: int = 50,
    ) -> None:
        """`snapshots`: where indexes are saved and looked for (None: always read the memories); only users
        with at least `snapshot_min_memories` are saved. `background` runs the saving and an access refresh
        after a snapshot load (None: in the request). An index up to `max_changes` versions behind the store
        is brought up to date from the store's change log; further behind, it is built again. One brought
        `snapshot_every` versions (or a twentieth of its memories, if more) past its last snapshot is saved
        as a new one, so a new container applies no more changes than that."""
        one_blas_thread()
        self._max_changes = max_changes
        self._snapshot_every = snapshot_every
        self._store = store
        self._snapshots = snapshots
        self._snapshot_min_memories = snapshot_min_memories
        self._background = background
        self._pending: set[Future[None]] = set()
        self._access_refresh = access_refresh_seconds
        self._clock = clock
        self._embedder = embedder
        self._max_users = max_users
        self._cache: OrderedDict[ScopeRef, UserIndex] = OrderedDict()
        self._lock = threading.Lock()
        self.stats = {"hits": 0, "misses": 0}

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]:
        index = self._index(user)
        if not index.memories:
            return []
        lexical = index.bm25.scores(query.terms) if query.terms else np.zeros(len(index.memories), np.float32)
        lexical = with_neighbours(lexical, index.previous_turns, query.neighbour_share)
        return select_candidates(index.memories, lexical, index.vectors, query)

    def vectors(self, user: ScopeRef, memory_keys: list[str]) -> dict[str, np.ndarray]:
        index = self._index(user)
        if index.vectors is None:
            return {}
        rows = index.row_of()
        return {key: index.vectors[rows[key]] for key in memory_keys if key in rows}

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        """The k current memories nearest each vector. The index is the search's: after a save it is rebuilt
        here rather than at the next search, which then finds it current."""
        index = self._index(user)
        if index.vectors is None or not len(index.memories) or k <= 0:
            return [[] for _ in range(len(vectors))]
        cosines = vectors @ index.vectors.T  # (batch, memories)
        k = min(k, cosines.shape[1])
        top = np.argpartition(-cosines, k - 1, axis=1)[:, :k]
        found = []
        for row, columns in zip(cosines, top, strict=True):
            ordered = columns[np.argsort(-row[columns], kind="stable")]
            found.append([Candidate(memory=index.memories[i], vector=float(row[i]), embedding=index.vectors[i])
                          for i in ordered])
        return found

    def memory_cache(self) -> InProcessIndex:
        """Its version-keyed cache of each user's index holds the user's current memories."""
        return self

    def current_memories(self, user: ScopeRef) -> list[Memory]:
        """The user's current memories from the version-keyed cache (one GetItem when warm)."""
        index = self._index(user)
        with _collector_paused():
            return list(index.memories)

    def user_index(self, user: ScopeRef) -> UserIndex:
        """The user's index of the store's current version, from the cache when it is of that version."""
        return self._index(user)

    def _index(self, user: ScopeRef) -> UserIndex:
        versions = self._store.versions(user)
        with self._lock:
            cached = self._cache.get(user)
            hit = cached is not None and (cached.version, cached.generation) == (versions.content,
                                                                                 versions.generation)
            if hit:
                self._cache.move_to_end(user)
                self.stats["hits"] += 1
        if hit and cached is not None:
            if cached.access_version != versions.access and (
                    self._clock() - cached.access_read_at >= self._access_refresh):
                self._refresh_access(user, cached, versions.access)
            return cached
        self.stats["misses"] += 1
        with _collector_paused():
            advanced = self._advanced(user, cached, versions)
            built = advanced or self._from_snapshot(user, versions) or self._from_memories(user, versions)
        if self._max_users:
            with self._lock:
                self._cache[user] = built
                self._cache.move_to_end(user)
                while len(self._cache) > self._max_users:
                    self._cache.popitem(last=False)
            if advanced is None:  # an index brought up to date adds a few objects to one already out of sight
                _out_of_collectors_sight()
        return built

    def _advanced(self, user: ScopeRef, base: UserIndex | None, versions: StoreVersions) -> UserIndex | None:
        """`base` brought to `versions` by the changes since its version, read from the store's change log; None
        when it cannot be (another generation, too far behind, the log does not reach back to it)."""
        if base is None or base.generation != versions.generation or base.version > versions.content \
                or versions.content - base.version > self._max_changes:
            return None
        changes = self._store.changes(user, StoreVersions(content=base.version, generation=base.generation),
                                      versions)
        if changes is None:
            self._count("changes_unavailable")
            return None
        built = self._applied(base, changes, versions)
        self._count("changes_applied")
        snapshots = self._snapshots
        since = built.version - max(built.snapshot_version, 0)
        if snapshots is not None and len(built.memories) >= max(1, self._snapshot_min_memories) \
                and since >= max(self._snapshot_every, len(built.memories) // 20):
            self._later(lambda: self._save_snapshot(snapshots, user, built))
        return built

    def _applied(self, base: UserIndex, changes: IndexChanges, versions: StoreVersions) -> UserIndex:
        embedder = self._embedder()
        return applied_changes(base, changes, versions, vectors_of=self._vectors,
                               dimension=embedder.dimension if embedder is not None else None)

    def _from_memories(self, user: ScopeRef, versions: StoreVersions) -> UserIndex:
        memories = self._store.all_current(user)
        links = turn_links(memories)  # the neighbours are found from them, as after a change
        built = UserIndex(versions.content, memories, Bm25Index([searchable_text(m) for m in memories]),
                           self._vectors(memories), previous_from_links(links), versions.access, self._clock(),
                           generation=versions.generation, links=links, expires=row_expiry(memories))
        snapshots = self._snapshots
        if snapshots is not None and len(memories) >= max(1, self._snapshot_min_memories):
            self._later(lambda: self._save_snapshot(snapshots, user, built))
        return built

    def _from_snapshot(self, user: ScopeRef, versions: StoreVersions) -> UserIndex | None:
        if self._snapshots is None:
            return None
        payload = self._snapshots.get(user, versions.content)
        if payload is None and versions.content:
            payload = self._snapshots.newest(user, versions.content - 1)  # then the changes since are applied
        if payload is None:
            return None
        embedder = self._embedder()
        try:
            snapshot = decode_snapshot(payload)
            bm25 = Bm25Index.from_state(snapshot.bm25)
        except (SnapshotCorrupt, ValueError) as error:
            logger.warning("index snapshot unreadable: reading the memories", reason=str(error))
            self._count("snapshot_unreadable")
            return None
        vectors = snapshot.vectors
        stale = snapshot.generation != versions.generation or snapshot.version > versions.content
        if stale or snapshot.analyzer != analyzer_fingerprint() or (
                embedder is not None and (vectors is None or snapshot.embedding_model != embedder.model_id
                                          or vectors.shape[1] != embedder.dimension)):
            self._count("snapshot_incompatible")
            return None
        self._count("snapshot_loads")
        loaded = UserIndex(snapshot.version, snapshot.memories, bm25, vectors if embedder else None,
                           snapshot.previous_turns, snapshot.access_version, self._clock(),
                           generation=versions.generation, links=snapshot.links, expires=snapshot.expires,
                           snapshot_version=snapshot.version)
        built = loaded if snapshot.version == versions.content else self._advanced(user, loaded, versions)
        if built is None:
            return None
        if snapshot.access_version != versions.access:  # reads recorded since it was saved
            self._later(lambda: self._refresh_access(user, built, versions.access))
        return built

    def _save_snapshot(self, snapshots: IndexSnapshotStore, user: ScopeRef, index: UserIndex) -> None:
        embedder = self._embedder()
        model = embedder.model_id if embedder is not None and index.vectors is not None else None

        def encode() -> bytes:  # only when the store will save it (~0.5 s of CPU at 10,000 memories)
            return encode_snapshot(IndexSnapshot(
                version=index.version, access_version=index.access_version, analyzer=analyzer_fingerprint(),
                embedding_model=model, memories=index.memories, bm25=index.bm25.state(), vectors=index.vectors,
                previous_turns=index.previous_turns, generation=index.generation,
                links=index.links if index.links is not None else turn_links(index.memories),
                expires=index.expires if index.expires is not None else row_expiry(index.memories)))

        now = self._store.versions(user)  # moved on (or the user erased) meanwhile: the index is not saved
        if (now.content, now.generation) == (index.version, index.generation) and snapshots.put(
                user, index.version, encode):
            index.snapshot_version = index.version
            self._count("snapshot_saves")

    def forget(self, user: ScopeRef) -> None:
        """Drop the user's cached index (the user was erased: nothing of it stays in this container)."""
        with self._lock:
            self._cache.pop(user, None)

    def _later(self, work: Callable[[], None]) -> None:
        """Work that only ever saves time (a snapshot, fresher access counts): in the background when there is
        one, and never failing anything: a fault is logged and the work dropped."""

        def guarded() -> None:
            try:
                work()
            except Exception as error:  # see the docstring
                logger.warning("background index work failed", error_type=type(error).__name__)

        if self._background is None:
            guarded()
            return
        with suppress(RuntimeError):  # the executor is shut down
            future = self._background.submit(guarded)
            with self._lock:
                self._pending.add(future)
            future.add_done_callback(self._done)

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)

    def flush(self, timeout: float | None = None) -> None:
        """Wait for the background work started so far (snapshot saves, access refreshes)."""
        with self._lock:
            pending = list(self._pending)
        wait(pending, timeout=timeout)

    def _count(self, name: str) -> None:
        self.stats[name] = self.stats.get(name, 0) + 1

    def _refresh_access(self, user: ScopeRef, cached: UserIndex, access_version: int) -> None:
        """New access statistics on the cached memories; same memories, same order, same index."""
        stats = self._store.access_stats(user)
        memories = cached.memories
        if isinstance(memories, StoredMemories | MergedMemories):  # the rows not read yet stay unvalidated
            cached.memories = memories.replaced({i: memories[i].model_copy(update=stats[key].model_dump())
                                                 for i, key in enumerate(memories.keys) if key in stats})
        else:
            cached.memories = [m.model_copy(update=stats[m.memory_key].model_dump()) if m.memory_key in stats
                               else m for m in memories]
        cached.access_version, cached.access_read_at = access_version, self._clock()
        self._count("access_refreshes")

    def _vectors(self, memories: list[Memory]) -> np.ndarray | None:
        embedder = self._embedder()
        if embedder is None or not memories:
            return None
        model = embedder.model_id
        matrix = np.zeros((len(memories), embedder.dimension), dtype=np.float32)
        stale = []
        for row, memory in enumerate(memories):
            if memory.embedding and memory.embedding_model == model:
                matrix[row] = decode_vector(memory.embedding)
            else:
                stale.append(row)
        if stale:  # another model (or none) wrote these: embed them now rather than compare across models
            matrix[stale] = embedder.embed_documents([memories[row].content for row in stale])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)
