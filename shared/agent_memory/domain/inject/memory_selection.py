"""Which memories the user_memory block shows, as pure rules.

1. Importance decides a top slot only where it separates memories. The candidates for the `slots` top
   slots are the memories first by importance (then recency); one of them keeps its slot when its
   importance beats the best importance left out of the slots by at least `margin`. A memory tied with
   hundreds of others (every conversation turn stored at 70) would be an arbitrary pick: its slot goes
   to relevance instead. Margin 0 gives every slot to importance.
2. The rest of the block is the search's ranking for the current message, diversified by maximal
   marginal relevance (domain/search/mmr.py): each pick maximises `trade_off * score - (1 - trade_off) *
   similarity to what is already shown`. Similarity is the cosine of the stored embeddings when both
   memories carry one of the same model, else the overlap (Jaccard) of their analysed terms.
4. No memory is shown beside a near-duplicate of one shown before it (the rule a save merges by,
   `domain/lifecycle/duplicates.py`): not among the top slots, not among the picks, not as a top slot relevance
   left empty.
3. The block's size is a token budget: a share of the tokens the user's memories hold (the history the
   block stands in for), at most a cap. The block always takes `min_count` memories when there are
   that many, and past them only while the lines fit the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter

import numpy as np

from agent_memory.domain.lifecycle.duplicates import DuplicateRule, near_duplicates
from agent_memory.domain.models import Memory, MemoryType
from agent_memory.domain.search.mmr import mmr_order
from agent_memory.domain.search.vectors import decode_vector
from agent_memory.domain.text.text import tokenize

# Defaults of the settings CONTEXT_IMPORTANCE_MARGIN, CONTEXT_USER_MEMORY_MAX_SHARE, ..._MAX_TOKENS. The
# share was chosen by two-fold cross-validation on LoCoMo dev (README, "Inject"); at the cap, each further
# 100 injected tokens bought ~0.2 points of evidence there, a fifth of the rate at small shares.
DEFAULT_IMPORTANCE_MARGIN = 10  # one step between the types' defaults: INTENT 80 over FACT 70
DEFAULT_MAX_SHARE = 0.04
DEFAULT_MAX_TOKENS = 4000
# Relevance's weight against similarity in a pick. On LoCoMo dev, 0.5-1.0 moved evidence in context by
# under one point (conversation turns are seldom near-duplicates); 0.8 still orders a paraphrase after
# a memory that says something new.
TRADE_OFF = 0.8
MAX_DEPTH = 100  # the most ranked memories a block reads (the search proposes 100 per retriever)


@dataclass(frozen=True)
class ImportanceSplit:
    """The top slots: `earned` keep theirs by importance; `fallback` are the rest of the importance
    order's candidates, shown only where relevance leaves a top slot empty."""

    earned: list[Memory]
    fallback: list[Memory]


def importance_slots(memories: Sequence[Memory], slots: int, margin: int,
                     duplicates: DuplicateRule | None = None) -> ImportanceSplit:
    """`duplicates`: the importance order less each memory near-duplicating one before it (None: as it is)."""
    # A sort, not a heap of the first few: a history arrives nearly in this order (oldest first, importances
    # tied), the heap's worst case and the sort's best.
    ordered = sorted(memories, key=attrgetter("importance", "created_at"), reverse=True)
    if duplicates is not None:
        ordered = without_near_duplicates(ordered, duplicates, stop_at=slots + 1)  # the slots and the best left out
    top, left_out = ordered[:slots], ordered[slots:]
    if not left_out:  # everything fits: no choice to make
        return ImportanceSplit(earned=top, fallback=[])
    bar = left_out[0].importance + margin
    return ImportanceSplit(earned=[m for m in top if m.importance >= bar],
                           fallback=[m for m in top if m.importance < bar])


def memory_budget(stored_tokens: int, share: float, cap: int) -> int:
    """The block's tokens: `share` of what the user's memories hold, at most `cap`."""
    if stored_tokens < 0 or share < 0 or cap < 0:
        raise ValueError("stored_tokens, share and cap must be >= 0")
    return min(cap, int(share * stored_tokens))


def search_depth(budget: int, line_tokens: float, min_count: int) -> int:
    """How many ranked memories to read: what fills the budget at the average line, half again for the
    duplicates skipped, never fewer than `min_count`, at most MAX_DEPTH."""
    fill = int(1.5 * budget / line_tokens) + 1 if line_tokens > 0 else MAX_DEPTH
    return max(1, min(MAX_DEPTH, max(min_count, fill)))


@dataclass(frozen=True)
class SelectableMemory:
    """A memory as the selection sees it: its search score, its line's tokens, what similarity reads."""

    key: str
    score: float
    tokens: int
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)  # L2-normalised
    model: str | None = None
    content: str = field(default="", compare=False, repr=False)
    memory_type: MemoryType = field(kw_only=True)

    @cached_property
    def terms(self) -> frozenset[str]:
        """The analysed terms, read only when a pair has no comparable vectors."""
        return frozenset(tokenize(self.content))


def selectable(memory: Memory, score: float, tokens: int) -> SelectableMemory:
    vector = None
    if memory.embedding and memory.embedding_model:
        decoded = decode_vector(memory.embedding)
        norm = float(np.linalg.norm(decoded))
        vector = decoded / norm if norm > 0 else None
    return SelectableMemory(key=memory.memory_key, score=score, tokens=tokens, vector=vector,
                            model=memory.embedding_model if vector is not None else None, content=memory.content,
                            memory_type=memory.memory_type)


def _cosine(a: SelectableMemory, b: SelectableMemory) -> float | None:
    if a.vector is not None and b.vector is not None and a.model == b.model and a.vector.shape == b.vector.shape:
        return float(a.vector @ b.vector)
    return None


def similarity(a: SelectableMemory, b: SelectableMemory) -> float:
    """The cosine of the vectors when comparable, else the overlap of the analysed terms."""
    cosine = _cosine(a, b)
    if cosine is not None:
        return cosine
    union = a.terms | b.terms
    return len(a.terms & b.terms) / len(union) if union else 0.0


def near_duplicate(a: SelectableMemory, b: SelectableMemory, rule: DuplicateRule) -> bool:
    return near_duplicates(rule, a, b, _cosine(a, b))


def without_near_duplicates(memories: Sequence[Memory], rule: DuplicateRule, *, stop_at: int | None = None
                            ) -> list[Memory]:
    """The memories in order, less each that near-duplicates one kept before it; the first `stop_at` so kept."""
    kept: list[tuple[Memory, SelectableMemory]] = []
    for memory in memories:
        if stop_at is not None and len(kept) >= stop_at:
            break
        seen = selectable(memory, 0.0, 0)
        if not any(near_duplicate(seen, other, rule) for _, other in kept):
            kept.append((memory, seen))
    return [memory for memory, _ in kept]


def diversify(shown: Sequence[SelectableMemory], ranked: Sequence[SelectableMemory], *, budget: int, min_count: int,
              trade_off: float = TRADE_OFF, duplicates: DuplicateRule | None = None) -> list[SelectableMemory]:
    """The picks from `ranked` (best first) to show after `shown`, in pick order: maximal marginal
    relevance, near-duplicates (by `duplicates`, the default rule when None) of anything shown skipped,
    until the block holds `min_count` memories and the next pick's line would pass `budget` tokens (the
    lines of `shown` count too)."""
    if not 0.0 <= trade_off <= 1.0:
        raise ValueError("trade_off must be within [0, 1]")
    taken = {c.key for c in shown}
    pool = [c for c in dict((c.key, c) for c in ranked).values() if c.key not in taken]
    similar = _Similarities(pool, duplicates or DuplicateRule())
    for c in shown:
        similar.compare(c)
    scores = np.array([c.score for c in pool], dtype=np.float64)
    used, count, picks = sum(c.tokens for c in shown), len(shown), []
    for best in mmr_order(scores, trade_off, similar):
        pick = pool[best]
        if count >= min_count and used + pick.tokens > budget:
            break
        picks.append(pick)
        used, count = used + pick.tokens, count + 1
    return picks


class _Similarities:
    """Each pool candidate's highest similarity to what is shown, and whether it is still pickable (not
    picked, not a near-duplicate). Vectors of the pool's model are compared in one product."""

    def __init__(self, pool: Sequence[SelectableMemory], rule: DuplicateRule) -> None:
        self._pool = pool
        self._rule = rule
        self.nearest = np.zeros(len(pool))
        self.alive = np.ones(len(pool), dtype=bool)
        self._model = next((c.model for c in pool if c.vector is not None), None)
        vectors = {i: c.vector for i, c in enumerate(pool) if c.vector is not None and c.model == self._model}
        if len({v.shape for v in vectors.values()}) > 1:  # a model id reused for another dimension
            vectors = {}
        self._rows = list(vectors)
        self._matrix = np.stack(list(vectors.values())) if vectors else None
        in_matrix = set(self._rows)
        self._by_pair = [i for i in range(len(pool)) if i not in in_matrix]

    def picked(self, index: int) -> None:
        self.compare(self._pool[index])

    def compare(self, shown: SelectableMemory) -> None:
        pairwise = self._by_pair
        if self._matrix is not None and shown.vector is not None and shown.model == self._model \
                and shown.vector.shape == self._matrix.shape[1:]:
            cosine = self._matrix @ shown.vector
            self.nearest[self._rows] = np.maximum(self.nearest[self._rows], cosine)
        else:
            pairwise = list(range(len(self._pool)))
        for i in pairwise:
            if self.alive[i]:
                self.nearest[i] = max(self.nearest[i], similarity(self._pool[i], shown))
        for i in np.flatnonzero(self.alive).tolist():  # the words decide, with the cosine when comparable
            self.alive[i] = not near_duplicate(self._pool[i], shown, self._rule)
