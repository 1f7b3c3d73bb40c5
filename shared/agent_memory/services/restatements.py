"""What a save's new memories restate: the candidates are read here, the domain decides
(domain/lifecycle/duplicates.py).

A new memory may restate one of the user's current memories or an earlier memory of the same call (a batch that
says one thing twice). The candidates of each new memory: its NEAREST current memories by the search index's
vectors (one read for the whole call: the serverless tier's cached index, or one msearch of the OpenSearch tier),
the NEAREST of the user's newest memories (one small page, read once per call and shared with the conversation
context: a memory saved a moment ago that a tier fed by the table's stream may not show yet) and the NEAREST of the
call's earlier memories; every one of these when the memory has no embedding to compare (the words alone decide).
Cosines are computed in one matrix product per call. A memory chosen as restated is read once more from the store,
consistently, and dropped when it is gone or no longer current meanwhile. Two saves racing with the same statement
may both be stored: the check saves space, it is not a constraint (and the injected context drops a
near-duplicate of what it shows anyway).

A search tier that cannot answer never fails a save: its candidates are then left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from agent_memory.domain.lifecycle.duplicates import DuplicateRule, Statement, merge_choice
from agent_memory.domain.models import Memory, NewMemory, ScopeRef, content_hash
from agent_memory.domain.search.vectors import decode_vector
from agent_memory.errors import AgentMemoryError
from agent_memory.observability import logger
from agent_memory.ports import MemoryStore, SearchIndex

# The current memories nearest to a new one that are read as what it may restate.
NEAREST = 5

# What a new memory restates: a current memory, the index of an earlier memory of the call, or nothing.
Target = Memory | int | None
Candidates = dict[str, tuple[Memory, float | None]]  # memory key -> (memory, its cosine to the new one)


class Restatements:
    def __init__(self, *, store: MemoryStore, index: SearchIndex | None, rule: DuplicateRule) -> None:
        self._store = store
        self._index = index
        self._rule = rule

    def targets(self, user: ScopeRef, memories: Sequence[NewMemory], recent: Callable[[], list[Memory]]
                ) -> list[Target]:
        """For each memory, in order, what a save of it restates; a current memory as the store holds it now."""
        if not self._rule.enabled or not memories:
            return [None] * len(memories)
        model = next((m.embedding_model for m in memories if m.embedding), None)
        vectors = [_unit(m.embedding) if m.embedding_model == model else None for m in memories]
        found = self._candidates(user, memories, vectors, recent(), model)
        within = _cosines(vectors, vectors)
        verified: dict[str, Memory | None] = {}
        while True:
            targets = self._plan(memories, within, found, verified)
            unchecked = sorted({t.memory_key for t in targets if isinstance(t, Memory)} - set(verified))
            if not unchecked:
                return [verified[t.memory_key] if isinstance(t, Memory) else t for t in targets]
            for key in unchecked:
                current = self._store.get(user, key)
                verified[key] = current if current is not None and current.is_current else None

    def _candidates(self, user: ScopeRef, memories: Sequence[NewMemory], vectors: list[np.ndarray | None],
                    newest: list[Memory], model: str | None) -> list[Candidates]:
        """Per memory: its NEAREST current memories by the index, and of the newest memories the NEAREST nearest
        to it (every one, when it has no vector to compare)."""
        found: list[Candidates] = [{} for _ in memories]
        rows = {i: vector for i, vector in enumerate(vectors) if vector is not None}
        if self._index is not None and rows:
            try:
                nearest = self._index.nearest(user, np.stack(list(rows.values())), NEAREST)
            except AgentMemoryError as error:
                logger.warning("near-duplicate candidates unavailable: saving without the index's",
                               error_code=error.code)
                nearest = [[] for _ in rows]
            for i, candidates in zip(rows, nearest, strict=True):
                found[i].update((c.memory.memory_key, (c.memory, c.vector)) for c in candidates)
        cosines = _cosines(vectors, [_unit(m.embedding) if m.embedding_model == model else None for m in newest])
        for i in range(len(memories)):
            for j in _nearest(cosines[i], len(newest)):
                found[i].setdefault(newest[j].memory_key, (newest[j], _value(cosines[i, j])))
        return found

    def _plan(self, memories: Sequence[NewMemory], within: np.ndarray, found: list[Candidates],
              verified: dict[str, Memory | None]) -> list[Target]:
        """Each memory's target, as saving them one by one would see the user's memories: an earlier memory of the
        call stored with a field retires the field's current memory, so a later one cannot restate that."""
        targets: list[Target] = []
        claimed: dict[str, int] = {}  # field -> the last earlier memory of the call stored with it
        for i, new in enumerate(memories):
            options: list[tuple[Statement, float | None]] = []
            keys: list[Memory | int] = []
            # A statement never restates its own retraction ("I'm not allergic to peanuts" is near "I'm allergic
            # to peanuts" in words and vectors), nor the reverse.
            for key, (old, cosine) in found[i].items():
                if old.retraction != new.retraction:
                    continue
                if verified.get(key, old) is not None and not (old.field and old.field in claimed):
                    options.append((old, cosine))
                    keys.append(old)
            for j in _nearest(within[i, :i], i):
                earlier = memories[j]
                if earlier.retraction != new.retraction:
                    continue
                if targets[j] is None and (not earlier.field or claimed.get(earlier.field) == j):
                    options.append((earlier, _value(within[i, j])))
                    keys.append(j)
            choice = merge_choice(self._rule, new, options)
            target = None if choice is None else _unless_identical(new, options, keys[choice], memories, targets)
            targets.append(target)
            if target is None and new.field:
                claimed[new.field] = i
        return targets


def _unless_identical(new: NewMemory, options: list[tuple[Statement, float | None]], target: Memory | int,
                      memories: Sequence[NewMemory], targets: list[Target]) -> Target:
    """The target, unless `new` repeats one of the options word for word (case, spacing and punctuation aside):
    that is the store's to recognise (`duplicate`), or, for an earlier memory of the call that was merged,
    the same merge."""
    digest = content_hash(new.content)
    for old, _ in options:
        if isinstance(old, Memory) and old.content_hash == digest:
            return None
        if isinstance(old, NewMemory) and content_hash(old.content) == digest:
            return targets[next(j for j, m in enumerate(memories) if m is old)]
    return target


def _unit(embedding: bytes | None) -> np.ndarray | None:
    if not embedding:
        return None
    vector = decode_vector(embedding)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else None


def _cosines(first: list[np.ndarray | None], second: list[np.ndarray | None]) -> np.ndarray:
    """Each pair's cosine in one product; NaN where either has no vector (of the same model and dimension)."""
    found = np.full((len(first), len(second)), np.nan, dtype=np.float32)
    rows = {i: vector for i, vector in enumerate(first) if vector is not None}
    if not rows:
        return found
    shape = next(iter(rows.values())).shape
    columns = {j: vector for j, vector in enumerate(second) if vector is not None and vector.shape == shape}
    if columns:
        found[np.ix_(list(rows), list(columns))] = np.stack(list(rows.values())) @ np.stack(list(columns.values())).T
    return found


def _nearest(cosines: np.ndarray, count: int) -> list[int]:
    """Of `count` columns, the NEAREST highest cosines, and every one without a cosine (compared by words)."""
    known = np.flatnonzero(~np.isnan(cosines[:count]))
    best = known[np.argsort(-cosines[known], kind="stable")[:NEAREST]]
    return sorted([*best.tolist(), *np.flatnonzero(np.isnan(cosines[:count])).tolist()])


def _value(cosine: float) -> float | None:
    return None if np.isnan(cosine) else float(cosine)
