"""Everyday topics: what a question and a memory are about, in either language, and what search does with it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from agent_memory.bootstrap.services import ranking_weights
from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.models import Memory, MemoryType
from agent_memory.domain.search.ranking import QueryKeywords, rank
from agent_memory.domain.search.relevance import RelevanceCalibration, fit_calibration
from agent_memory.domain.text.topics import TOPICS, topic_match, topics_of
from agent_memory.ports import Candidate
from agent_memory.settings import Settings

NOW = datetime(2026, 11, 22, tzinfo=UTC)
WEIGHTS = ranking_weights(Settings())


def memory(content: str) -> Memory:
    return Memory(memory_key=new_memory_key(), tenant_id="t", user_id="u", memory_type=MemoryType.FACT,
                  content=content, importance=70, content_hash="h", created_at=NOW, updated_at=NOW, valid_from=NOW)


@pytest.mark.parametrize(("text", "topic"), [
    ("where does the user live", "residence"),
    ("他住在哪里", "residence"),
    ("Currently based in Shanghai", "residence"),
    ("我搬到了上海", "residence"),
    ("any pets?", "pets"),
    ("Has a dog named Mochi", "pets"),
    ("家里养了一只猫", "pets"),
    ("what does Alex drink", "drink"),
    ("Likes black coffee in the morning", "drink"),
    ("就职于一家金融科技公司", "work"),
    ("is she allergic to anything?", "allergy"),
    ("对花生过敏", "allergy"),
])
def test_a_question_and_a_memory_name_the_topic_they_are_about_in_either_language(text, topic):
    assert topic in topics_of(text)


@pytest.mark.parametrize("text", ["Goes by Alex", "quantum chromodynamics lecture notes", "python train.py", ""])
def test_a_text_about_none_of_the_everyday_topics_names_none_of_them(text):
    assert not topics_of(text) - {"name"}


def test_a_chinese_cue_inside_another_word_is_not_taken_for_it():
    assert "diet" not in topics_of("看手机屏幕吃力")  # 吃力 is strain, not eating
    assert not topics_of("酒店在机场旁边") & {"drink", "alcohol"}  # a hotel, not a drink
    assert "sibling" not in topics_of("去哥伦比亚出差")  # Colombia, not a brother


def test_an_idiom_names_the_topic_it_means_not_the_topics_of_its_words():
    assert topics_of("what does she do for a living?") == {"work"}
    assert "work" not in topics_of("Lives in Manchester, UK")


@pytest.mark.parametrize(("question", "answer", "near_miss"), [
    ("which city was she in before?", "Moved from Leeds to Manchester in 2021", "Lives in Manchester, UK"),
    ("should I offer him a beer?", "Quit alcohol in 2023", "Drinks cold brew every morning, no sugar"),
    ("what does her mum do?", "User's mother runs a bakery in Ipoh", "Going to Seoul in December with her cousin"),
    ("他女儿在读什么？", "Daughter Chioma is studying medicine at Edinburgh", "Son Tobi, 15, plays academy football"),
    ("她老家是哪里？", "Born in Kuala Lumpur; moved to Singapore for university", "Lives in Tiong Bahru, Singapore"),
])
def test_a_finer_topic_tells_the_answer_from_a_memory_of_the_same_broad_topic(question, answer, near_miss):
    asked = topics_of(question)
    assert topic_match(asked, topics_of(answer)) > topic_match(asked, topics_of(near_miss)) > 0


def test_every_topic_has_cues_in_both_languages():
    for name, (english, chinese) in TOPICS.items():
        assert english.strip() and chinese.strip(), name


def test_topic_match_is_the_share_of_the_query_topics_the_memory_names():
    assert topic_match(frozenset({"pets"}), frozenset({"pets", "name"})) == 1.0
    assert topic_match(frozenset({"pets", "name", "diet", "health"}), frozenset({"pets"})) == 0.25
    assert topic_match(frozenset({"pets"}), frozenset({"diet"})) == 0.0
    assert topic_match(frozenset(), frozenset({"diet"})) == 0.0


def test_with_a_topic_weight_the_memory_about_what_is_asked_ranks_first_across_languages():
    # Given cosines that favour the wrong memory by a little, as the bundled embedder does on short facts
    diet = memory("Diet: vegetarian")
    dog = memory("养了一只柯基，叫豆豆")
    candidates = [Candidate(memory=diet, vector=0.84), Candidate(memory=dog, vector=0.83)]
    query = QueryKeywords(("pet",))

    def first(weights):
        ranked = rank(candidates, query=query, mode="semantic", weights=weights, now=NOW,
                      query_topics=topics_of("does she have any pets?"))
        return ranked[0]

    assert first(replace(WEIGHTS, topic=0.0)).memory is diet
    best = first(replace(WEIGHTS, topic=0.3))
    assert best.memory is dog and best.breakdown.topic == 1.0


def test_a_query_naming_no_topic_ranks_as_without_the_weight():
    a, b = memory("alpha"), memory("beta")
    candidates = [Candidate(memory=a, vector=0.9), Candidate(memory=b, vector=0.8)]
    scores = [[s.score for s in rank(candidates, query=QueryKeywords(()), mode="semantic",
                                     weights=replace(WEIGHTS, topic=weight), now=NOW)] for weight in (0.0, 0.3)]
    assert scores[0] == scores[1]


def test_calibration_counts_a_topic_match_and_a_topical_query():
    calibration = RelevanceCalibration(cosine_weight=4.0, keyword_weight=6.0, bias=-2.0, topic_weight=3.0,
                                       topical_weight=-1.0)
    matched = calibration.score(0.02, 0.0, topic=1.0, topical=1.0)
    unmatched = calibration.score(0.02, 0.0, topic=0.0, topical=1.0)
    untopical = calibration.score(0.02, 0.0)
    assert matched > untopical > unmatched


def test_fitting_on_four_features_learns_that_a_topic_match_counts():
    rows, labels = [], []
    for i in range(40):
        rows += [(0.02 + i / 4000, 0.0, 1.0, 1.0), (0.02 + i / 4000, 0.0, 0.0, 1.0), (0.01, 0.0, 0.0, 0.0)]
        labels += [i % 4 != 0, i % 9 == 0, False]
    fitted = fit_calibration(rows, labels)
    assert fitted.topic_weight > 1.0
    assert fitted.score(0.03, 0.0, 1.0, 1.0) > fitted.score(0.03, 0.0, 0.0, 1.0)


def test_fitting_refuses_rows_of_another_width():
    with pytest.raises(ValueError, match="feature row"):
        fit_calibration([(0.1, 0.2, 0.3)] * 2, [True, False])


def test_with_an_absolute_weight_the_memory_likelier_to_answer_ranks_above_a_closer_cosine():
    # Given cosines a hundredth apart, which normalised over two candidates are 1 and 0
    coffee, name = memory("Likes black coffee in the morning"), memory("Goes by Alex")
    candidates = [Candidate(memory=name, vector=0.84), Candidate(memory=coffee, vector=0.83)]

    def ranked(absolute):
        return rank(candidates, query=QueryKeywords(()), mode="semantic", now=NOW, query_terms=("coffe",),
                    weights=replace(WEIGHTS, topic=0.0, absolute=absolute))

    assert ranked(0.0)[0].memory is name
    best = ranked(0.5)[0]
    assert best.memory is coffee and best.absolute_relevance == 1.0  # no background: the term coverage alone
