"""Which of the user's sentences an extraction read nothing from (the extract answer's `skipped_sentences`), and
the sentence splitter it shares with the offline summary."""

from __future__ import annotations

import pytest

from agent_memory.domain.text.skipped_sentences import skipped_sentences
from agent_memory.domain.text.text import sentences
from tests.fakes.services import extracted


@pytest.mark.parametrize(("text", "expected"), [
    ("你好！我今年34岁，在杭州上班。我对花生过敏？好的；谢谢", ["你好！", "我今年34岁，在杭州上班。", "我对花生过敏？",
                                                                "好的；", "谢谢"]),
    ("Hi there. I'm 34! Am I? It costs 3.5 euros.\nThanks", ["Hi there.", "I'm 34!", "Am I?", "It costs 3.5 euros.",
                                                              "Thanks"]),
    ("- first point\n\n* second point", ["first point", "second point"]),
    ("  \n ", []),
])
def test_given_chinese_or_english_text_then_it_is_cut_at_sentence_ends_and_line_breaks(text, expected):
    assert sentences(text) == expected


def test_given_memories_from_some_sentences_then_the_others_are_skipped_in_order():
    message = "Hi there! I'm 34 and I live in Berlin. What's the weather like? I hate cilantro."
    memories = [extracted("age", "User is 34 years old", 34), extracted("currentLocation", "Lives in Berlin", "Berlin"),
                extracted("dislike", "Dislikes cilantro", "cilantro", "PREFERENCE")]

    assert skipped_sentences(message, memories) == ["Hi there!", "What's the weather like?"]


def test_given_a_value_written_in_one_sentence_then_a_sentence_sharing_only_words_with_its_content_is_skipped():
    message = "My friend is allergic to cats. I'm allergic to peanuts."

    assert skipped_sentences(message, [extracted("allergy", "Allergic to peanuts", "peanuts")]) == [
        "My friend is allergic to cats."]


def test_given_chinese_values_then_case_width_and_numbers_are_matched_in_the_sentences():
    message = "你好！我今年34岁。我养了一只狗。我用ＰＹＴＨＯＮ。今天天气不错。"
    memories = [extracted("age", "用户34岁", 34.0), extracted("pet", "养狗", "狗"),
                extracted("preference", "喜欢Python", "python", "PREFERENCE")]

    assert skipped_sentences(message, memories) == ["你好！", "今天天气不错。"]


@pytest.mark.parametrize(("message", "memory", "skipped"), [
    # a yes/no has no words: its content's words find the sentence
    ("I'm in Rome. We have no children.", extracted("hasChildren", "Has no children", False), ["I'm in Rome."]),
    # a value the extractor rewrote: the content's words, not the subject 用户 every content shares
    ("我叫小李。用户说我今年七十了。", extracted("age", "今年七十岁", 70), ["我叫小李。"]),
    ("我叫小李。今年七十了。", extracted("age", "用户70岁", 70), ["我叫小李。", "今年七十了。"]),
    # a memory without a value (an LLM's free-form memory)
    ("Hello. I really enjoy long walks on the beach.", extracted(None, "Enjoys long beach walks", None,
                                                                  "PREFERENCE"), ["Hello."]),
])
def test_given_a_memory_whose_value_is_in_no_sentence_then_it_came_from_those_its_content_shares_a_word_with(
        message, memory, skipped):
    assert skipped_sentences(message, [memory]) == skipped


def test_given_nothing_extracted_then_every_sentence_but_the_wordless_fragments_is_skipped():
    assert skipped_sentences("... 🙂\nThanks! 好的。", []) == ["Thanks!", "好的。"]
