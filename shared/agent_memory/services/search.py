"""search_memories and get_memory_detail, with multi-round recall."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from agent_memory.domain.models import Memory, ScopeRef, utcnow
from agent_memory.domain.packs import DomainPack, default_pack
from agent_memory.domain.search.ranking import (
    Candidate,
    QueryKeywords,
    Ranking,
    RankingWeights,
    ScoredMemory,
    diversified,
    keyword_match,
    keyword_matches,
)
from agent_memory.domain.search.relevance import BACKGROUND
from agent_memory.domain.search.search import SearchHit, SearchMode, SearchOutcome, SearchQuery
from agent_memory.domain.search.temporal import time_cue
from agent_memory.domain.text.keywords import extract_keywords, normalize_keyword
from agent_memory.domain.text.synonyms import builtin_synonyms, synonym_phrases
from agent_memory.domain.text.text import tokenize
from agent_memory.domain.text.topics import topics_of
from agent_memory.errors import InvalidInput, NotFound
from agent_memory.ports import CandidateQuery, Embedder, MemoryStore, SearchIndex, SynonymSource

if TYPE_CHECKING:
    import numpy as np

MAX_RESULTS = 20  # the most results a search answers (its `limit`), across all rounds
CANDIDATES_PER_RETRIEVER = 100
# A diversified ranking picks its results from this many of the best (2-fold cross-validation on the
# retrieval benchmarks found 20, 30 and 50 alike).
DIVERSITY_POOL = 20


def last_lines(text: str, count: int) -> str:
    """The last `count` non-blank lines of a query (0 = all of it). A dialogue pasted as the query is
    about its latest turns, and the embedder reads only the first 512 tokens of what it is given."""
    if count <= 0:
        return text
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-count:]) if len(lines) > count else text


@dataclass(frozen=True)
class RecallRound:
    """One recall round: `keyword_weight` is BM25's share of text similarity in this round; `max_results` the
    most it recalls for a search of up to ten results, and its share of a longer one's."""

    name: str
    keyword_weight: float
    min_score: float
    max_results: int
    expand_synonyms: bool


RECALL_ROUNDS = (
    RecallRound("precise", keyword_weight=0.8, min_score=0.7, max_results=5, expand_synonyms=False),
    RecallRound("expanded", keyword_weight=0.5, min_score=0.6, max_results=8, expand_synonyms=True),
    RecallRound("semantic", keyword_weight=0.2, min_score=0.5, max_results=10, expand_synonyms=True),
)
ROUNDS_BY_MODE: dict[str, tuple[RecallRound, ...]] = {
    "hybrid": RECALL_ROUNDS,
    "keyword": RECALL_ROUNDS[:2],
    "semantic": RECALL_ROUNDS[2:],
}
EARLY_STOP_SCORE = 0.85


class SearchService:
    def __init__(
        self,
        *,
        store: MemoryStore,
        index: SearchIndex,
        embedder: Callable[[], Embedder | None],
        synonyms: SynonymSource | None,
        weights: RankingWeights,
        expand_synonyms: bool = True,
        default_mode: SearchMode = "hybrid",
        on_access: Callable[[ScopeRef, list[str]], None] | None = None,
        query_vector_lines: int = 0,
        neighbour_share: float = 0.0,
        diversity: float = 0.0,
        packs: Callable[[str], DomainPack] = lambda _: default_pack(),
        as_of_index: SearchIndex | None = None,
    ) -> None:
        """`diversity`: the weight of a result's similarity to the results above it against its score
        (maximal marginal relevance over the best DIVERSITY_POOL; 0 orders by score alone); `packs`: a tenant's
        pack, whose built-in synonyms it starts with; `as_of_index`: the tier that answers searches with `as_of`
        (every version of the user's memories; None: such searches are refused)."""
        self._as_of_index = as_of_index
        if not 0.0 <= diversity <= 1.0:
            raise ValueError("diversity must be within [0, 1]")
        self._diversity = diversity
        self._packs = packs
        self._store = store
        self._neighbour_share = neighbour_share
        self._query_vector_lines = query_vector_lines
        self._index = index
        self._embedder = embedder
        self._synonyms = synonyms
        self._weights = weights
        self._expand = expand_synonyms
        self._default_mode: SearchMode = default_mode
        self._on_access = on_access
        self._background_vectors: dict[str, np.ndarray] = {}  # embedding model -> BACKGROUND's vectors

    def warm_up(self) -> None:
        """Load the embedding model (and numpy's kernels) ahead of the first request, e.g. before a
        SnapStart snapshot."""
        embedder = self._embedder()
        if embedder is not None:
            self._background(embedder, embedder.embed_query("warm up"))

    def prefetch(self, request: SearchQuery) -> None:
        """Start embedding the text this request's search will embed, on the embedder's prefetch thread (the
        query cache's; another embedder has none, and nothing starts). The search then finds the vector done
        or under way. Keyword-only searches embed nothing."""
        embedder = self._embedder()
        if embedder is not None and (request.search_mode or self._default_mode) != "keyword":
            self._query_vector(embedder, request)

    def _query_vector(self, embedder: Embedder, request: SearchQuery) -> Callable[[], np.ndarray]:
        """The query's embedding as a call the index makes last: started now on the embedder's prefetch
        thread when it has one, so that the index's reads and keyword scoring run meanwhile."""
        text = last_lines(request.query, self._query_vector_lines)
        start = getattr(embedder, "prefetch", None)
        if start is not None:
            start(text)
        return lambda: embedder.embed_query(text)

    def search(self, user: ScopeRef, request: SearchQuery, *, max_rounds: int = len(RECALL_ROUNDS),
               max_results: int | None = None, diversified: bool = True) -> SearchOutcome:
        """Ranked memories for the request. At most `max_rounds` recall rounds run; a thin recall is topped
        up from the final ranking (results marked `recall_round: "fill"`). `max_results` replaces the
        request's limit and MAX_RESULTS, for a caller inside the service that picks from a longer ranking
        (the user_memory block fills a token budget). `diversified=False` keeps the score order for a
        caller that diversifies the ranking itself, so maximal marginal relevance runs once."""
        requested: SearchMode = request.search_mode or self._default_mode
        index = self._tier(request)
        terms = self._query_keywords(request)
        if self._expand:  # a synonym may be a phrase ("top talent pass scheme"), not one keyword
            pack = self._packs(user.tenant_id).name
            terms = tuple(dict.fromkeys([*terms, *synonym_phrases(request.query, pack=pack)]))
        synonyms = self.synonyms_for(user.tenant_id, terms) if self._expand else {}
        embedder = self._embedder() if requested != "keyword" else None
        query_terms = tokenize(" ".join([request.query, *(request.keywords or [])]))
        # Embedded once, whether the index asks for it or absolute relevance does.
        query_vector = cache(self._query_vector(embedder, request)) if embedder else None
        candidates = index.candidates(user, CandidateQuery(
            text=request.query,
            # Synonyms widen candidate generation; ranking still tells exact from synonym matches.
            terms=[*query_terms, *tokenize(" ".join(syn for pairs in synonyms.values() for syn, _ in pairs))],
            vector=query_vector,
            memory_types=request.memory_types,
            created_from=request.time_range[0] if request.time_range else None,
            created_to=request.time_range[1] if request.time_range else None,
            k=CANDIDATES_PER_RETRIEVER,
            neighbour_share=self._neighbour_share,
            as_of=request.as_of,
        ))
        if request.keywords:
            required = QueryKeywords(tuple(normalize_keyword(k) for k in request.keywords), synonyms)
            candidates = [c for c in candidates if _mentions_any(c.memory, required, self._weights)]
        mode: SearchMode = requested if embedder else "keyword"
        limit = min(request.limit, MAX_RESULTS) if max_results is None else max(1, max_results)
        diversify = diversified and self._diversity > 0 and mode != "keyword"
        # Diversified, the rounds recall a deeper pool; the results are then picked from it.
        pool = max(limit, DIVERSITY_POOL) if diversify else limit
        # As of an instant, recency and a period the query names count from that instant.
        now = request.as_of or utcnow()
        cue = time_cue(request.query, now) if self._weights.time_cue > 0 else None
        expanded_query, precise_query = QueryKeywords(terms, synonyms), QueryKeywords(terms)
        keyword_scores = {
            True: keyword_matches(candidates, expanded_query, self._weights),
            False: keyword_matches(candidates, precise_query, self._weights) if synonyms else None,
        }
        keyword_scores[False] = keyword_scores[False] or keyword_scores[True]
        # The final ranking (relevance, interaction, type priority) orders whatever the recall rounds bring in.
        background = self._background(embedder, query_vector()) if embedder and query_vector and mode != "keyword" \
            else None
        ranking = Ranking(candidates, mode=mode, weights=self._weights, now=now, time_cue=cue, query_terms=query_terms,
                          background=background, term_alternatives=_analysed_synonyms(synonyms),
                          query_topics=topics_of(request.query))
        final = ranking.rank(expanded_query, keyword_scores=keyword_scores[True])
        by_key = {s.memory.memory_key: s for s in final}

        def relevant(memory_key: str) -> bool:
            return by_key[memory_key].absolute_relevance >= request.min_relevance_score

        # A round takes candidates in its own ranking's order (its BM25 share, with or without synonyms); its floor
        # and the early stop bound their relevance as the result shows it (score_breakdown.relevance), not the
        # final score, which usage and type priority move.
        recalled: dict[str, str] = {}  # memory_key -> the round that recalled it
        rounds_run, without_new = 0, 0
        for recall_round in ROUNDS_BY_MODE[mode][:max_rounds]:
            rounds_run += 1
            expand = recall_round.expand_synonyms
            ranked = ranking.rank(expanded_query if expand else precise_query, keyword_scores=keyword_scores[expand],
                                  lexical_share=recall_round.keyword_weight if mode == "hybrid" else None)
            new = [by_key[s.memory.memory_key] for s in ranked if s.memory.memory_key not in recalled
                   and by_key[s.memory.memory_key].relevance >= recall_round.min_score
                   and relevant(s.memory.memory_key)]
            new = new[: max(0, min(_round_cap(recall_round, pool), pool - len(recalled)))]
            for scored in new:
                recalled[scored.memory.memory_key] = recall_round.name
            without_new = 0 if new else without_new + 1
            strong = sum(1 for s in new if s.relevance >= EARLY_STOP_SCORE)
            if len(recalled) >= pool or strong >= 2 or without_new >= 2:
                break
        # Rounds decide what is recalled and when to stop; the caller's min_relevance_score, on relevance,
        # is the only hard floor, so a thin recall is topped up from the final ranking instead of
        # returning too little.
        for scored in final:
            if len(recalled) >= pool:
                break
            if scored.memory.memory_key not in recalled and relevant(scored.memory.memory_key):
                recalled[scored.memory.memory_key] = "fill"
        ordered = [(by_key[key], round_name) for key, round_name in
                   sorted(recalled.items(), key=lambda kv: by_key[kv[0]].score, reverse=True)]
        if diversify:
            # Diversity decides which results make the page; the page is shown by its scores, best first.
            ordered = sorted(self._diversified(user, index, ordered, candidates, limit),
                             key=lambda pick: pick[0].score, reverse=True)
        hits = [SearchHit(memory=scored.memory, relevance_score=round(scored.score, 4),
                          score_breakdown=scored.breakdown, recall_round=round_name)
                for scored, round_name in ordered[:limit]]
        if self._on_access and hits and request.as_of is None:  # reading the past is no use of a memory
            self._on_access(user, [h.memory.memory_key for h in hits])
        used = [name for name in dict.fromkeys(h.recall_round for h in hits)]
        expanded = sorted({syn for term in terms for syn, _ in synonyms.get(term, ())})
        # What matched counts every memory above the floor, not only the page answered.
        matched = sum(1 for scored in final if scored.absolute_relevance >= request.min_relevance_score)
        return SearchOutcome(hits=hits, total_found=max(matched, len(hits)),
                             strategy=f"{mode}:" + ("+".join(used) if used else "none"),
                             expanded_keywords=expanded or None, rounds_executed=rounds_run, time_cue=cue)

    def _background(self, embedder: Embedder, query_vector: np.ndarray) -> float:
        """The query's best cosine among the background sentences (domain/search/relevance.py), embedded once per
        model."""
        import numpy as np

        matrix = self._background_vectors.get(embedder.model_id)
        if matrix is None:
            matrix = np.asarray(embedder.embed_documents(list(BACKGROUND)), dtype=np.float32)
            self._background_vectors[embedder.model_id] = matrix
        return float((matrix @ np.asarray(query_vector, dtype=np.float32)).max())

    def _tier(self, request: SearchQuery) -> SearchIndex:
        """The tier that answers the request: the as-of one for a search of the past, else the current one."""
        if request.as_of is None:
            return self._index
        if self._as_of_index is None:
            raise InvalidInput("as_of: this deployment answers no as-of searches",
                               details=[{"field": "as_of", "type": "unavailable"}])
        return self._as_of_index

    def _diversified(self, user: ScopeRef, index: SearchIndex, ordered: list[tuple[ScoredMemory, str]],
                     candidates: list[Candidate], count: int) -> list[tuple[ScoredMemory, str]]:
        """`count` of the ranked results in maximal-marginal-relevance order, each with its redundancy."""
        if len(ordered) < 2:
            return ordered
        given = {c.memory.memory_key: c.embedding for c in candidates if c.embedding is not None}
        keys = [scored.memory.memory_key for scored, _ in ordered]
        missing = [key for key in keys if key not in given]
        if missing:
            given.update(index.vectors(user, missing))
        picks = diversified([scored.score for scored, _ in ordered], [given.get(key) for key in keys], count,
                            self._diversity)
        return [(replace(ordered[i][0], redundancy=redundancy), ordered[i][1]) for i, redundancy in picks]

    def memory_detail(self, user: ScopeRef, memory_key: str) -> tuple[Memory, list[Memory]]:
        """The memory and its version history."""
        memory = self._store.get(user, memory_key)
        if memory is None:
            raise NotFound(f"memory {memory_key} not found", details=[{"field": "memory_key"}])
        return memory, self._store.history(user, memory)

    def _query_keywords(self, request: SearchQuery) -> tuple[str, ...]:
        if request.keywords:
            return tuple(dict.fromkeys(normalize_keyword(k) for k in request.keywords))
        extracted = extract_keywords(request.query, max_keywords=8, min_weight=0.0)
        return tuple(dict.fromkeys(normalize_keyword(k.term) for k in extracted))

    def synonyms_for(self, tenant_id: str, terms: tuple[str, ...]) -> dict[str, tuple[tuple[str, float], ...]]:
        """Each term's synonyms, best first: the built-in ones and the tenant's own (which win on a tie)."""
        table = builtin_synonyms(self._packs(tenant_id).name)
        found: dict[str, dict[str, float]] = {t: dict(table.get(normalize_keyword(t), {})) for t in terms}
        if self._synonyms is not None and terms:
            for term, pairs in self._synonyms.synonyms_for(tenant_id, list(terms)).items():
                found.setdefault(term, {}).update(dict(pairs))
        return {t: tuple(sorted(s.items(), key=lambda kv: -kv[1])) for t, s in found.items() if s}


def _round_cap(recall_round: RecallRound, pool: int) -> int:
    """How many results a round recalls into a pool: its own cap up to ten results, the same share of more."""
    return recall_round.max_results if pool <= 10 else -(-recall_round.max_results * pool // 10)


def _analysed_synonyms(synonyms: dict[str, tuple[tuple[str, float], ...]]) -> dict[str, list[frozenset[str]]]:
    """For each analysed query term (domain/text/text.tokenize) of a keyword with synonyms, the synonyms' analysed
    terms: a memory that holds all of one synonym's holds the term, for absolute relevance."""
    found: dict[str, list[frozenset[str]]] = {}
    for keyword, pairs in synonyms.items():
        analysed = [frozenset(tokenize(synonym)) for synonym, _ in pairs]
        for term in tokenize(keyword):
            found.setdefault(term, []).extend(analysed)
    return found


def _mentions_any(memory: Memory, keywords: QueryKeywords, weights: RankingWeights) -> bool:
    content = normalize_keyword(memory.content)
    if any(term in content for term in keywords.terms):
        return True
    return keyword_match(memory, keywords, weights)[0] > 0
