"""Reading text: language detection, tokens (CJK bigrams, English stop words), keywords, BM25 and built-in
synonyms."""

from __future__ import annotations

from agent_memory.domain.models import is_cjk_text
from agent_memory.domain.search.bm25 import Bm25Index
from agent_memory.domain.text.keywords import extract_keywords
from agent_memory.domain.text.text import tokenize


def test_language_detection():
    assert is_cjk_text("我今年32岁") and not is_cjk_text("I am 32") and not is_cjk_text("12345")


def test_cjk_tokens_are_bigrams_so_a_prefix_matches_a_longer_term():
    assert tokenize("高才通") == ["高才", "才通"]
    scores = Bm25Index(["对高才通B类非常感兴趣", "用户32岁"]).scores(tokenize("高才通"))
    assert scores[0] > 0 and scores[1] == 0.0


def test_english_tokens_drop_stop_words():
    assert tokenize("What is the user's job?") == ["job"]
    assert tokenize("Caroline's paintings, painted") == ["carolin", "paint", "paint"]


def test_given_a_long_chinese_clause_then_keywords_are_its_core_concepts_at_most_five_and_weighted():
    from agent_memory.domain.text.keywords import extract_keywords

    keywords = extract_keywords("我在上海一家外资银行担任风险管理总监")

    assert [k.term for k in keywords] == ["上海", "外资银行", "风险管理总监", "担任"]
    assert keywords[0].weight == 1.0 and keywords[-1].weight < keywords[2].weight
    assert [k.term for k in extract_keywords("浙江大学计算机硕士毕业")][:3] == ["浙江大学", "计算机", "硕士"]
    assert len(extract_keywords("从事前端开发工作8年，在杭州一家互联网公司，年薪约80万人民币，已婚有两个孩子")) <= 5


def test_built_in_abbreviations_are_symmetric_synonyms():
    from agent_memory.domain.text.synonyms import builtin_synonyms

    table = builtin_synonyms()
    assert "configuration" in table["config"] and "config" in table["configuration"]
    assert "db" in table["database"] and "database" in table["db"]


def test_keywords_are_whole_units_with_weights():
    terms = {k.term: k.weight for k in extract_keywords("对高才通B类非常感兴趣")}
    assert "高才通b类" in terms and max(terms.values()) == 1.0
    assert [k.term for k in extract_keywords("the and of")] == []


def test_bm25_prefers_rarer_terms_and_shorter_documents():
    index = Bm25Index(["caroline went to the support group", "melanie painted a lake",
                       "caroline painted", "a very long text about painting lakes and lakes and more lakes"])
    scores = index.scores(tokenize("support group"))
    assert scores.argmax() == 0 and scores[1] == 0
    assert index.scores(tokenize("painted"))[2] > index.scores(tokenize("painted"))[3]
