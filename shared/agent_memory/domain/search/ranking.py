"""The one ranking layer: whichever tier proposed the candidates, they are scored here.

relevance = keyword match + text similarity + time decay (MEMORY_SEARCH_*_WEIGHT, normalised to sum to 1)
final     = relevance (70%) + interaction (MEMORY_SEARCH_INTERACTION_WEIGHT) + type priority (10%)

Relevance here is relative to the search's candidates and orders them; the absolute relevance
(domain/search/relevance.py) is what a caller's floor bounds. Usage (interaction) only breaks ties unless a
deployment gives it a weight: how often earlier answers were read must not reorder what a question
finds. Every weight comes from settings; every result keeps its breakdown so a caller can see why it
ranked where it did. Pure functions: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.models import Memory, MemoryType
from agent_memory.domain.search.mmr import mmr_order
from agent_memory.domain.search.relevance import RelevanceCalibration, memory_terms, memory_text, term_coverage
from agent_memory.domain.search.temporal import TimeCue
from agent_memory.domain.text.keywords import normalize_keyword
from agent_memory.domain.text.text import is_cjk
from agent_memory.domain.text.topics import topic_match, topics_of

if TYPE_CHECKING:
    import numpy as np


class Candidate(BaseModel):
    """A current memory proposed by a search tier, with the raw signals it found it by."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory
    lexical: float | None = None  # raw BM25 (>= 0); None = not found lexically
    vector: float | None = None  # cosine similarity in [-1, 1]; None = not found by vector
    # The memory's stored embedding (an L2-normalised numpy vector) when the tier has it at hand, else None
    # (SearchIndex.vectors reads it). Typed Any: numpy is imported only where vectors are used.
    embedding: Any = Field(default=None, exclude=True, repr=False)


SearchMode = Literal["semantic", "keyword", "hybrid"]

# Type priority: preferences, then intents, then facts.
TYPE_PRIORITY: dict[MemoryType, float] = {
    MemoryType.PREFERENCE: 1.0,
    MemoryType.INTENT: 0.75,
    MemoryType.FACT: 0.5,
}


@dataclass(frozen=True, kw_only=True)
class RankingWeights:
    """The weights a search ranks by. Those a deployment sets have no default here: settings hold them
    (MEMORY_SEARCH_*_WEIGHT, _HALF_LIFE_DAYS, _LEXICAL_SHARE, MEMORY_RELEVANCE_*) and
    `bootstrap.ranking_weights` builds this from them. The rest are fixed."""

    # Relevance: keyword match, text similarity and time decay (normalised to sum to 1).
    keyword: float
    text: float
    time: float
    half_life_days: float
    # Within text similarity in hybrid mode: the share of BM25 (the rest is vector similarity).
    lexical_share: float
    # When the query names a period ("in July 2023"): time's weight in relevance, and how fast closeness to
    # that period falls off outside it.
    time_cue: float
    time_cue_half_life_days: float = 14.0
    # The final score: relevance, usage (interaction) and type priority.
    relevance: float = 0.7
    interaction: float
    # When the query names a topic (domain/text/topics.py): the weight in relevance of a memory naming it too.
    topic: float = 0.0
    # The share of relevance that is the absolute relevance (the calibrated chance the memory answers), the rest
    # the relevance relative to the search's candidates.
    absolute: float = 0.0
    type_priority: float = 0.1
    exact_match: float = 1.0
    prefix_match: float = 0.8
    synonym_match: float = 0.7
    # Absolute relevance from the cosine's margin over the background and the term coverage (fitted for the
    # bundled multilingual-e5-small).
    calibration: RelevanceCalibration


class ScoreBreakdown(BaseModel):
    keyword: float
    text: float
    lexical: float
    vector: float
    time_decay: float
    relevance: float
    interaction: float
    type_priority: float
    final: float
    matched_keywords: list[str]
    # The share of the query's terms the memory's text holds: absolute relevance's lexical evidence.
    term_coverage: float = 0.0
    # The share of the everyday topics the query names (residence, pets, ...) the memory names too.
    topic: float = 0.0
    # The highest cosine similarity to a result ranked above this one: what diversification weighed against
    # `final` when it ordered the results (0 for the first, and when the ranking is not diversified).
    redundancy: float = 0.0
    # How likely the memory answers the query, on a scale that holds across queries and users (what
    # min_relevance_score bounds); `relevance` is relative to this search's candidates.
    absolute_relevance: float = 0.0


@dataclass
class ScoredMemory:
    memory: Memory
    score: float
    # keyword, text, lexical, vector, time decay, relevance, interaction, type priority
    parts: tuple[float, float, float, float, float, float, float, float]
    matched_keywords: list[str]
    redundancy: float = 0.0
    absolute_relevance: float = 0.0
    term_coverage: float = 0.0
    topic: float = 0.0

    @property
    def relevance(self) -> float:
        """Relevance relative to the search's candidates: keyword match, text match and time decay,
        weighted (the final score adds interaction and type priority to it)."""
        return self.parts[5]

    @property
    def breakdown(self) -> ScoreBreakdown:
        """Built on demand: only returned results need it, and a ranking scores hundreds."""
        keyword, text, lexical, vector, decay, relevance, interaction, priority = self.parts
        return ScoreBreakdown(
            keyword=round(keyword, 4), text=round(text, 4), lexical=round(lexical, 4), vector=round(vector, 4),
            time_decay=round(decay, 4), relevance=round(relevance, 4), interaction=round(interaction, 4),
            type_priority=priority, final=round(self.score, 4), matched_keywords=self.matched_keywords,
            redundancy=round(self.redundancy, 4), absolute_relevance=round(self.absolute_relevance, 4),
            term_coverage=round(self.term_coverage, 4), topic=self.topic,
        )


@dataclass(frozen=True)
class QueryKeywords:
    """Normalised query keywords, and their synonyms with similarity (from the synonym store)."""

    terms: tuple[str, ...]
    synonyms: dict[str, tuple[tuple[str, float], ...]] = field(default_factory=dict)


def time_decay(created_at: datetime, now: datetime, half_life_days: float) -> float:
    """Exponential decay with the given half-life, never below 50%."""
    age_days = max(0.0, (now - created_at).total_seconds() / 86400)
    # typeshed types float ** float as Any (a negative base makes a complex number); 0.5 makes a float.
    decay: float = 0.5 ** (age_days / half_life_days)
    return 0.5 + 0.5 * decay


def keyword_match(memory: Memory, query: QueryKeywords, weights: RankingWeights) -> tuple[float, list[str]]:
    """Exact 1.0, prefix 0.8, synonym 0.7 — best per query keyword, averaged over them."""
    return _keyword_scores([memory], query, weights)[memory.memory_key]


def memory_topics(memory: Memory) -> frozenset[str]:
    """The everyday topics a memory names: in its text, its keywords or its category."""
    keywords = tuple(k.term for k in memory.keywords)
    return topics_of(memory_text(memory.content, keywords, memory.category),
                     memory_terms(memory.content, keywords, memory.category))


def _memory_terms(memory: Memory) -> frozenset[str]:
    return _normalised_terms(tuple(k.term for k in memory.keywords), memory.category)


@lru_cache(maxsize=16384)
def _normalised_terms(terms: tuple[str, ...], category: str | None) -> frozenset[str]:
    """Memoised: every search normalises the keywords of each of its ~200 candidates, mostly the same ones."""
    normalised = {normalize_keyword(t) for t in terms}
    if category:
        normalised.add(normalize_keyword(category))
    return frozenset(normalised)


def _keyword_scores(memories: Sequence[Memory], query: QueryKeywords, weights: RankingWeights
                    ) -> dict[str, tuple[float, list[str]]]:
    """`keyword_match` for many memories at once: each distinct keyword of theirs is compared with each
    query term (and its synonyms) once, not once per memory holding it."""
    if not query.terms:
        return {m.memory_key: (0.0, []) for m in memories}
    holders: dict[str, list[str]] = {}  # a memory keyword -> the memories that hold it
    for memory in memories:
        for term in _memory_terms(memory):
            holders.setdefault(term, []).append(memory.memory_key)
    by_first: dict[str, list[str]] = {}  # two terms share a prefix only when they start alike
    for term in holders:
        by_first.setdefault(term[:1], []).append(term)
    totals = {m.memory_key: 0.0 for m in memories}
    matched: dict[str, list[str]] = {m.memory_key: [] for m in memories}
    for term in query.terms:
        best: dict[str, float] = {}
        for variant, similarity in ((term, None), *query.synonyms.get(term, ())):
            for candidate, value in _matching_terms(variant, by_first, weights):
                if similarity is not None:  # a synonym's match, whatever its kind, counts as the synonym's
                    value = min(weights.synonym_match, similarity)
                for key in holders[candidate]:
                    best[key] = max(best.get(key, 0.0), value)
        for key, value in best.items():
            if value > 0:
                totals[key] += value
                matched[key].append(term)
    return {key: (total / len(query.terms), matched[key]) for key, total in totals.items()}


def _matching_terms(term: str, by_first: dict[str, list[str]], weights: RankingWeights
                    ) -> Iterator[tuple[str, float]]:
    """The memory keywords `term` matches, with the match's score: exact, or a shared prefix."""
    for candidate in by_first.get(term[:1], ()):
        if candidate == term:
            yield candidate, weights.exact_match
        elif _shares_prefix(term, candidate):
            yield candidate, weights.prefix_match


def _shares_prefix(a: str, b: str) -> bool:
    """One is a prefix of the other (高才通 / 高才通b类), or, for unsegmented CJK compounds, they
    share a stem of 3+ characters covering most of the shorter one (高才通方案 / 高才通b类)."""
    if not a or not b or a[0] != b[0]:  # the common case, decided in one comparison
        return False
    if a.startswith(b) or b.startswith(a):
        return True
    if not is_cjk(a[0]):
        return False
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return common >= 3 and common >= 0.6 * min(len(a), len(b))


def interaction_score(memory: Memory, now: datetime, half_life_days: float) -> float:
    """How much the user has used this memory: access count (saturating) and recency of access."""
    if memory.access_count <= 0:
        return 0.0
    frequency = min(1.0, math.log1p(memory.access_count) / math.log1p(20))
    recency = time_decay(memory.last_accessed_at, now, half_life_days) if memory.last_accessed_at else 0.5
    return 0.5 * frequency + 0.5 * (2 * recency - 1)


# The least range of cosine similarity min-max spreads over 0..1: among a few candidates that are all but
# equally similar (the same words, one detail apart), a difference of 0.005 must not become one of 1.0,
# outweighing every other signal. Larger candidate sets span more than this (their ranking is unchanged:
# LoCoMo and MADial dev gave identical figures).
MIN_VECTOR_SPAN = 0.05


def _normalised(values: Sequence[float | None]) -> list[float]:
    """Min-max over the candidates, over a range of at least MIN_VECTOR_SPAN; missing signals score 0."""
    present = [v for v in values if v is not None]
    if not present:
        return [0.0 for _ in values]
    low, high = min(present), max(present)
    if high - low < 1e-9:
        return [1.0 if v is not None and high > 0 else 0.0 for v in values]
    span = max(high - low, MIN_VECTOR_SPAN)
    return [0.0 if v is None else 1.0 - (high - v) / span for v in values]


def _scaled_to_best(values: Sequence[float | None]) -> list[float]:
    """Each value over the best one: any match keeps a share of the best match's score (min-max would
    put the weakest of two matches level with no match at all)."""
    high = max((v for v in values if v is not None), default=0.0)
    return [0.0 if v is None or high <= 0 else v / high for v in values]


def keyword_matches(
    candidates: Sequence[Candidate], query: QueryKeywords, weights: RankingWeights
) -> dict[str, tuple[float, list[str]]]:
    """keyword_match for every candidate, by memory key: computed once, shared by several rankings."""
    return _keyword_scores([c.memory for c in candidates], query, weights)


def rank(
    candidates: Sequence[Candidate],
    *,
    query: QueryKeywords,
    mode: SearchMode,
    weights: RankingWeights,
    now: datetime,
    lexical_share: float | None = None,
    keyword_scores: dict[str, tuple[float, list[str]]] | None = None,
    time_cue: TimeCue | None = None,
    query_terms: Collection[str] = (),
    query_topics: frozenset[str] = frozenset(),
) -> list[ScoredMemory]:
    """Score and order candidates. Superseded memories never come back as current. With a `time_cue` the
    time part of relevance is closeness to the period the query names, not recency."""
    return Ranking(candidates, mode=mode, weights=weights, now=now, time_cue=time_cue,
                   query_terms=query_terms, query_topics=query_topics).rank(
        query, lexical_share=lexical_share, keyword_scores=keyword_scores)


class Ranking:
    """One search's candidates with the signals no recall round changes (BM25 and vector similarity
    normalised over the candidates, time, interaction, type priority), computed once: a search ranks the
    same candidates up to four times, with another BM25 share or keyword scores each time."""

    def __init__(self, candidates: Sequence[Candidate], *, mode: SearchMode, weights: RankingWeights,
                 now: datetime, time_cue: TimeCue | None = None, query_terms: Collection[str] = (),
                 background: float | None = None,
                 term_alternatives: Mapping[str, Sequence[frozenset[str]]] | None = None,
                 query_topics: frozenset[str] = frozenset()) -> None:
        """For absolute relevance: `query_terms`, the query's analysed terms (domain/text/text.tokenize), each
        held by a memory that holds one of its `term_alternatives` (its synonyms, analysed), `background`,
        the query's best cosine among the background sentences (None: no vector evidence), and
        `query_topics`, the everyday topics the query names (domain/text/topics.py), which rank and count too."""
        if weights.time_cue <= 0:
            time_cue = None  # a period in the query changes nothing: recency as usual
        current = [c for c in candidates if c.memory.is_current]
        self._mode = mode
        self._weights = weights
        self._memories = [c.memory for c in current]
        self._lexical = _scaled_to_best([c.lexical if c.lexical else None for c in current])
        self._vector = _normalised([c.vector for c in current])
        self._margin = [None if c.vector is None or background is None else c.vector - background for c in current]
        terms = frozenset(query_terms)
        self._coverage = [term_coverage(terms, memory_terms(m.content, tuple(k.term for k in m.keywords), m.category),
                                        term_alternatives) for m in self._memories]
        self._topical = 1.0 if query_topics else 0.0
        self._topic = [topic_match(query_topics, memory_topics(m)) if query_topics else 0.0 for m in self._memories]
        self._decay = [time_decay(m.created_at, now, weights.half_life_days) if time_cue is None
                       else time_cue.closeness(m.created_at, weights.time_cue_half_life_days) for m in self._memories]
        # The part of the final score relevance does not decide: interaction and type priority.
        self._interaction = [interaction_score(m, now, weights.half_life_days) for m in self._memories]
        self._priority = [TYPE_PRIORITY.get(m.memory_type, 0.5) for m in self._memories]
        self._time_weight = weights.time if time_cue is None else weights.time_cue

    def rank(self, query: QueryKeywords, *, lexical_share: float | None = None,
             keyword_scores: dict[str, tuple[float, list[str]]] | None = None) -> list[ScoredMemory]:
        weights, mode = self._weights, self._mode
        share = weights.lexical_share if lexical_share is None else lexical_share
        if mode == "keyword":
            share = 1.0
        elif mode == "semantic":
            share = 0.0
        keyword_weight = 0.0 if mode == "semantic" else weights.keyword
        topic_weight = weights.topic if self._topical else 0.0
        relevance_total = keyword_weight + weights.text + self._time_weight + topic_weight or 1.0
        if keyword_scores is None:
            keyword_scores = _keyword_scores(self._memories, query, weights)
        scored = []
        calibration = weights.calibration
        for memory, lex, vec, margin, coverage, topic, decay, interaction, priority in zip(
                self._memories, self._lexical, self._vector, self._margin, self._coverage, self._topic, self._decay,
                self._interaction, self._priority, strict=True):
            keyword, matched = keyword_scores[memory.memory_key]
            text = share * lex + (1 - share) * vec
            relevance = (keyword_weight * keyword + weights.text * text + self._time_weight * decay
                         + topic_weight * topic) / relevance_total
            absolute = calibration.score(margin if mode != "keyword" else None, coverage, topic, self._topical)
            relevance = (1 - weights.absolute) * relevance + weights.absolute * absolute
            final = weights.relevance * relevance + weights.interaction * interaction + weights.type_priority * priority
            scored.append(ScoredMemory(memory, final, (keyword, text, lex, vec, decay, relevance, interaction,
                                                       priority), matched, absolute_relevance=absolute,
                                       term_coverage=coverage, topic=topic))
        # Equal scores: the more used memory first (with no interaction weight, usage does no more than this).
        scored.sort(key=lambda s: (s.score, s.parts[6], s.memory.created_at, s.memory.memory_key), reverse=True)
        return scored


def diversified(scores: Sequence[float], vectors: Sequence[np.ndarray | None], count: int, diversity: float
                ) -> list[tuple[int, float]]:
    """Maximal marginal relevance over a ranking (domain/search/mmr.py; `diversity` is the weight of similarity, the
    setting's convention, so the relevance weight is 1 - diversity): `count` picks, each the one with the best
    `(1 - diversity) * score - diversity * (its highest cosine similarity to a pick before it)`, as (index,
    that similarity) in pick order. Vectors are L2-normalised; a memory without one is similar to nothing.
    Several results telling the same episode give way to one that adds something (a question's answer is
    often a turn unlike the others the query resembles)."""
    import numpy as np

    if not 0.0 <= diversity <= 1.0:
        raise ValueError("diversity must be within [0, 1]")
    n = len(scores)
    if len(vectors) != n:
        raise ValueError("one vector (or None) per score")
    cosines = _Cosines(vectors)
    order = mmr_order(np.asarray(scores, dtype=np.float64), 1 - diversity, cosines)
    return [(index, float(cosines.nearest[index])) for index in islice(order, max(0, min(count, n)))]


class _Cosines:
    """Redundancy (domain/search/mmr.py) by the cosine of L2-normalised vectors; an item without one, or with one of
    another dimension than the first, is similar to nothing."""

    def __init__(self, vectors: Sequence[np.ndarray | None]) -> None:
        import numpy as np

        dimension = next((v.shape[0] for v in vectors if v is not None), 0)
        present = [(i, v) for i, v in enumerate(vectors) if v is not None and v.shape == (dimension,)]
        self._rows = [i for i, _ in present]
        self._matrix = np.stack([v for _, v in present]).astype(np.float32) if present else None
        self._row_of = {index: row for row, index in enumerate(self._rows)}
        self.nearest = np.zeros(len(vectors))
        self.alive = np.ones(len(vectors), dtype=bool)

    def picked(self, index: int) -> None:
        import numpy as np

        if self._matrix is not None and index in self._row_of:
            self.nearest[self._rows] = np.maximum(self.nearest[self._rows],
                                                  self._matrix @ self._matrix[self._row_of[index]])
