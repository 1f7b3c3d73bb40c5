"""The analyser's stemmer (PyStemmer, C) stems exactly as the pure-Python snowballstemmer it replaced,
so lexical documents indexed before the switch still match queries analysed after it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.domain.text.text import _stem, _stemmer, tokenize

# snowballstemmer hands its work to PyStemmer when that is installed: its pure-Python class is the reference.
reference = pytest.importorskip("snowballstemmer.english_stemmer").EnglishStemmer()

BASES = ("connect", "generate", "relate", "hope", "run", "happy", "nation", "condition", "organize", "analyse",
         "decide", "travel", "study", "cook", "visit", "prefer", "immigrate", "apply", "move", "live",
         "educate", "employ", "invest", "manage", "create", "sense", "agree", "argue", "fly", "try")
SUFFIXES = ("", "s", "es", "ed", "ing", "er", "ers", "ly", "ness", "ful", "less", "able", "ible", "ation",
            "ational", "ization", "ive", "iveness", "ment", "ments", "ous", "ously", "al", "ally", "ism")
# The algorithm's exceptions and corner cases: invariants, special plurals, -ly forms, Step 1a's ss/ies/us.
SPECIAL = ("skis", "skies", "dying", "lying", "tying", "idly", "gently", "ugly", "early", "only", "singly",
           "news", "howe", "atlas", "cosmos", "bias", "andes", "inning", "innings", "outing", "outings",
           "canning", "cannings", "herring", "herrings", "earring", "earrings", "proceed", "proceeding",
           "exceed", "exceeding", "succeed", "succeeding", "generous", "generously", "communism", "communist",
           "arsenal", "caresses", "ponies", "ties", "caress", "cats", "gas", "this", "kiwis", "consign",
           "consigned", "consignment", "knightly", "knights", "fluently", "abilities", "y", "a", "ys",
           "yes", "says", "youth", "yellow", "beyond", "don't", "user's", "o'neill", "hk", "b2b", "2024",
           "visa", "visas", "taxes", "taxation", "children", "kids", "salaries", "salary")
WORDS = sorted({base + suffix for base in BASES for suffix in SUFFIXES} | set(SPECIAL))


def test_given_a_few_hundred_english_words_when_stemmed_then_the_stems_are_snowballstemmers():
    assert len(WORDS) >= 500
    differing = {word: (_stemmer()(word), reference.stemWord(word)) for word in WORDS
                 if _stemmer()(word) != reference.stemWord(word)}
    assert differing == {}


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"[a-z0-9]{1,14}(?:'[a-z]{1,3})?", fullmatch=True))
def test_given_any_word_the_analyser_keeps_when_stemmed_then_the_stem_is_snowballstemmers(word):
    assert _stem(word) == reference.stemWord(word)


def test_given_an_english_sentence_when_tokenized_then_its_words_are_snowball_stemmed():
    assert tokenize("The traveller's children are studying generously") == [
        reference.stemWord(word) for word in ("traveller", "children", "studying", "generously")]


def test_given_threads_stemming_at_once_when_they_share_the_stemmer_then_every_stem_is_right():
    expected = [reference.stemWord(word) for word in WORDS]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: [_stemmer()(word) for word in WORDS], range(16)))
    assert all(found == expected for found in results)
