"""Question clauses are found in time linear in the text (every fieldless save reads its text for them), with
the same matches as the pattern tried from every character."""

from __future__ import annotations

import ast
import random
import re
import time
from pathlib import Path

import pytest

from agent_memory.extraction import grammar
from agent_memory.extraction.grammar import without_questions

# The pattern as it was, tried from every character: quadratic on text without punctuation. The reference.
TRIED_FROM_EVERY_CHARACTER = re.compile(r"(?:[^,，;；。.!！?？\n]|(?<=\d)\.(?=\d))*(?:[?？]|吗\s*$|吗(?=[,，。.!！]))")


def spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def extractor_test_texts() -> list[str]:
    """Every string the offline extractor's tests use: the cases the clauses were written for."""
    source = (Path(__file__).parent / "test_offline_extractor.py").read_text(encoding="utf-8")
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_the_existing_cases_find_the_same_clauses():
    texts = extractor_test_texts()
    assert len(texts) > 200

    for text in texts:
        assert spans(grammar._QUESTION_CLAUSE, text) == spans(TRIED_FROM_EVERY_CHARACTER, text), text


def test_random_texts_of_the_characters_that_matter_find_the_same_clauses():
    alphabet = list("a吗?？,，.。!！;；1 \n")
    draw = random.Random(20240601)
    for _ in range(20_000):
        text = "".join(draw.choice(alphabet) for _ in range(draw.randint(0, 16)))
        assert spans(grammar._QUESTION_CLAUSE, text) == spans(TRIED_FROM_EVERY_CHARACTER, text), repr(text)


def test_the_questions_go_and_the_statements_stay():
    assert without_questions("我32岁。能申请高才通吗？") == "我32岁。"
    assert without_questions("Is IELTS 6.5 enough? I have 7.5") == "I have 7.5"


def seconds_per_call(text: str, calls: int) -> float:
    """The fastest of five rounds of `calls` calls, per call: the least disturbed by other processes."""
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            without_questions(text)
        rounds.append((time.perf_counter() - started) / calls)
    return min(rounds)


@pytest.mark.parametrize("unit", ["我", "a", "1."])
def test_unpunctuated_text_takes_time_proportional_to_its_length(unit):
    short = seconds_per_call(unit * (8_000 // len(unit)), calls=10)
    long = seconds_per_call(unit * (80_000 // len(unit)), calls=1)

    # Ten times the text: 10-50x the time when linear (the longer text leaves the CPU's caches), 100x when
    # quadratic (then 2.5 s for the 8,000 characters).
    assert long / short < 60, (short, long)
