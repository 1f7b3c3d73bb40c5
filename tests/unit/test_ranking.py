"""The ranking layer on hand-made cases: decay, weights, keyword matches, supersession, Chinese."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.bootstrap.services import ranking_weights
from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.models import Keyword, Memory, MemoryType
from agent_memory.domain.search.ranking import (
    QueryKeywords,
    _shares_prefix,
    diversified,
    interaction_score,
    keyword_match,
    keyword_matches,
    rank,
    time_decay,
)
from agent_memory.ports import Candidate
from agent_memory.settings import Settings

NOW = datetime(2026, 11, 22, tzinfo=UTC)
WEIGHTS = ranking_weights(Settings())  # the deployed weights


def memory(content: str, *, days_old: float = 0, keywords: tuple[str, ...] = (), memory_type: str = "FACT",
           superseded: bool = False, access_count: int = 0, category: str | None = None) -> Memory:
    created = NOW - timedelta(days=days_old)
    return Memory(
        memory_key=new_memory_key(), tenant_id="t", user_id="u", memory_type=MemoryType(memory_type),
        content=content, importance=70, keywords=[Keyword(term=k) for k in keywords], content_hash="h",
        created_at=created, updated_at=created, valid_from=created, category=category,
        superseded_at=NOW if superseded else None, access_count=access_count,
        last_accessed_at=NOW if access_count else None,
    )


def test_time_decay_halves_the_recency_bonus_every_half_life_and_never_drops_below_half():
    assert time_decay(NOW, NOW, 30) == 1.0
    assert time_decay(NOW - timedelta(days=30), NOW, 30) == pytest.approx(0.75)
    assert time_decay(NOW - timedelta(days=60), NOW, 30) == pytest.approx(0.625)
    assert time_decay(NOW - timedelta(days=3650), NOW, 30) == pytest.approx(0.5)
    assert time_decay(NOW + timedelta(days=1), NOW, 30) == 1.0  # clocks skew; the future is "now"


@pytest.mark.parametrize(
    ("query", "memory_keywords", "expected"),
    [
        (("高才通b类",), ("高才通b类",), 1.0),  # exact
        (("高才通",), ("高才通b类",), 0.8),  # prefix: 高才通 finds 高才通B类
        (("python",), ("java",), 0.0),
        (("ttps", "python"), ("ttps",), 0.5),  # averaged over query keywords
    ],
)
def test_keyword_match_scores_exact_prefix_and_none(query, memory_keywords, expected):
    score, _ = keyword_match(memory("x", keywords=memory_keywords), QueryKeywords(query), WEIGHTS)
    assert score == pytest.approx(expected)


def test_keyword_match_through_a_synonym_scores_0_7():
    query = QueryKeywords(("ttps",), {"ttps": (("高才通", 0.9),)})
    score, matched = keyword_match(memory("对高才通感兴趣", keywords=("高才通",)), query, WEIGHTS)
    assert score == pytest.approx(0.7) and matched == ["ttps"]


def test_category_counts_as_a_keyword():
    score, _ = keyword_match(memory("x", category="TTPS"), QueryKeywords(("ttps",)), WEIGHTS)
    assert score == 1.0


def test_final_score_weighs_relevance_interaction_and_type_priority():
    weights = replace(WEIGHTS, keyword=0.4, text=0.4, time=0.2, interaction=0.2)
    only = memory("用户32岁", keywords=("32岁",))
    (scored,) = rank([Candidate(memory=only, lexical=2.0, vector=0.9)], query=QueryKeywords(("32岁",)),
                     mode="hybrid", weights=weights, now=NOW)
    b = scored.breakdown
    assert (b.keyword, b.text, b.time_decay) == (1.0, 1.0, 1.0)
    assert b.relevance == pytest.approx(0.4 * 1 + 0.4 * 1 + 0.2 * 1)
    assert scored.score == pytest.approx(0.7 * 1.0 + 0.2 * 0.0 + 0.1 * 0.5)


def test_superseded_memories_never_come_back():
    old = memory("用户32岁", superseded=True)
    new = memory("用户33岁")
    ranked = rank([Candidate(memory=old, lexical=9.0), Candidate(memory=new, lexical=1.0)],
                  query=QueryKeywords(()), mode="keyword", weights=WEIGHTS, now=NOW)
    assert [s.memory.content for s in ranked] == ["用户33岁"]


def test_modes_choose_the_text_signal():
    lexical_hit = memory("lexical")
    vector_hit = memory("vector")
    candidates = [Candidate(memory=lexical_hit, lexical=5.0, vector=0.1),
                  Candidate(memory=vector_hit, lexical=None, vector=0.9)]
    for mode, winner in (("keyword", "lexical"), ("semantic", "vector")):
        ranked = rank(candidates, query=QueryKeywords(()), mode=mode, weights=WEIGHTS, now=NOW)
        assert ranked[0].memory.content == winner, mode


def test_recency_breaks_a_tie_in_relevance():
    fresh, stale = memory("same", days_old=1), memory("same", days_old=90)
    ranked = rank([Candidate(memory=stale, lexical=1.0), Candidate(memory=fresh, lexical=1.0)],
                  query=QueryKeywords(()), mode="keyword", weights=WEIGHTS, now=NOW)
    assert ranked[0].memory is fresh and ranked[0].breakdown.time_decay > ranked[1].breakdown.time_decay


def test_interaction_and_type_priority_lift_used_preferences():
    plain = memory("a", memory_type="FACT")
    used = memory("a", memory_type="PREFERENCE", access_count=10)
    assert interaction_score(used, NOW, 30) > 0.5 and interaction_score(plain, NOW, 30) == 0
    ranked = rank([Candidate(memory=plain, lexical=1.0), Candidate(memory=used, lexical=1.0)],
                  query=QueryKeywords(()), mode="keyword", weights=WEIGHTS, now=NOW)
    assert ranked[0].memory is used


def test_weights_are_settings():
    text_only = replace(WEIGHTS, keyword=0.0, text=1.0, time=0.0)
    (scored,) = rank([Candidate(memory=memory("x"), lexical=1.0)], query=QueryKeywords(("nothing",)),
                     mode="keyword", weights=text_only, now=NOW)
    assert scored.breakdown.relevance == 1.0


def test_the_weaker_of_two_keyword_matches_keeps_its_share_of_the_best_bm25():
    strong, weak, none = memory("strong"), memory("weak"), memory("none")
    candidates = [Candidate(memory=strong, lexical=6.0, vector=None), Candidate(memory=weak, lexical=2.0, vector=None),
                  Candidate(memory=none, lexical=None, vector=None)]

    ranked = {s.memory.content: s for s in rank(candidates, query=QueryKeywords(()), mode="keyword",
                                                weights=WEIGHTS, now=NOW)}

    assert ranked["weak"].parts[2] == pytest.approx(1 / 3)  # BM25 2 of the best 6, not min-max's 0
    assert ranked["none"].parts[2] == 0.0 and ranked["strong"].parts[2] == 1.0


def _one_by_one(memory_terms: set[str], query: QueryKeywords) -> tuple[float, list[str]]:
    """The definition, pair by pair: each query term's best match among the memory's keywords."""
    def match(term: str) -> float:
        if term in memory_terms:
            return WEIGHTS.exact_match
        return WEIGHTS.prefix_match if any(_shares_prefix(term, t) for t in memory_terms) else 0.0

    total, matched = 0.0, []
    for term in query.terms:
        best = match(term)
        for synonym, similarity in query.synonyms.get(term, ()):
            best = max(best, min(WEIGHTS.synonym_match, similarity) if match(synonym) else 0.0)
        total += best
        matched += [term] if best > 0 else []
    return total / len(query.terms), matched


WORDS = st.sampled_from(["高才通", "高才通b类", "高才", "ttps", "tt", "python", "py", "深圳", "深圳南山", "visa"])


@given(memories=st.lists(st.lists(WORDS, max_size=4), min_size=1, max_size=6),
       terms=st.lists(WORDS, min_size=1, max_size=4, unique=True), synonym=WORDS, similarity=st.floats(0.1, 1.0))
def test_matching_many_memories_at_once_scores_each_as_matching_it_alone(memories, terms, synonym, similarity):
    query = QueryKeywords(tuple(terms), {terms[0]: ((synonym, similarity),)})
    stored = [memory("x", keywords=tuple(words)) for words in memories]

    together = keyword_matches([Candidate(memory=m) for m in stored], query, WEIGHTS)

    for m, words in zip(stored, memories, strict=True):
        score, matched = together[m.memory_key]
        expected_score, expected_matched = _one_by_one(set(words), query)
        assert (score, matched) == (pytest.approx(expected_score), expected_matched)


def test_all_but_equal_similarities_are_not_spread_to_zero_and_one():
    from agent_memory.domain.search.ranking import MIN_VECTOR_SPAN, _normalised

    assert _normalised([0.900, 0.895, None]) == pytest.approx([1.0, 1.0 - 0.005 / MIN_VECTOR_SPAN, 0.0])
    assert _normalised([0.9, 0.5, 0.7]) == pytest.approx([1.0, 0.0, 0.5])  # a wide range: plain min-max


def _unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_diversified_lets_a_near_repeat_of_the_first_result_give_way_to_one_that_adds_something():
    scores = [0.9, 0.88, 0.8]
    vectors = [_unit(1, 0), _unit(1, 0.05), _unit(0, 1)]  # the second all but repeats the first
    picks = diversified(scores, vectors, 3, 0.4)
    assert [i for i, _ in picks] == [0, 2, 1]
    assert picks[0][1] == 0.0 and picks[1][1] == pytest.approx(0.0, abs=1e-6)
    assert picks[2][1] == pytest.approx(float(vectors[1] @ vectors[0]))


def test_diversity_zero_keeps_the_score_order_and_count_bounds_the_picks():
    scores = [0.9, 0.88, 0.8, 0.1]
    vectors = [_unit(1, 0), _unit(1, 0.05), _unit(0, 1), _unit(1, 1)]
    assert [i for i, _ in diversified(scores, vectors, 10, 0.0)] == [0, 1, 2, 3]
    assert [i for i, _ in diversified(scores, vectors, 2, 0.0)] == [0, 1]
    assert diversified([], [], 5, 0.4) == []


def test_a_memory_without_a_vector_is_similar_to_nothing():
    picks = diversified([0.9, 0.85, 0.8], [_unit(1, 0), None, _unit(1, 0.01)], 3, 0.4)
    assert [i for i, _ in picks] == [0, 1, 2] and picks[1][1] == 0.0


def test_diversified_refuses_a_weight_outside_zero_to_one_and_mismatched_inputs():
    with pytest.raises(ValueError, match="diversity"):
        diversified([0.5], [None], 1, 1.5)
    with pytest.raises(ValueError, match="one vector"):
        diversified([0.5, 0.4], [None], 1, 0.4)
