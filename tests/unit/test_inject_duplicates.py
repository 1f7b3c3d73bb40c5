"""The injected user_memory block never shows two near-duplicates side by side (the rule a save merges by), over
the fakes: memories stored before merging existed, or by two racing saves, are written to the store directly."""

from __future__ import annotations

import itertools
import re

from agent_memory.domain.lifecycle.duplicates import DuplicateRule, restates
from agent_memory.domain.models import MemoryType
from tests.fakes.store import InMemoryMemoryStore
from tests.fakes.user_memory_block import FILLER, Block, remember, who

RESTATED = ["Is allergic to peanuts", "Allergic to peanuts", "I'm allergic to peanuts."]
RESTATED_ZH = ["用户对花生过敏", "我对花生过敏呢"]


def texts(lines: list[str]) -> list[str]:
    return [re.sub(r"^- \[\w+\] (.*) \(\w+: \d+\)$", r"\1", line) for line in lines]


def restating_pairs(lines: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in itertools.combinations(texts(lines), 2) if restates(DuplicateRule(), a, b, None)]


def test_given_restatements_among_the_important_memories_then_the_top_slots_show_one_of_them():
    store, user = InMemoryMemoryStore(), who("dup-top")
    for text in RESTATED + RESTATED_ZH:
        remember(store, user, text, importance=90)
    for i in range(20):
        remember(store, user, f"{FILLER[i % 10]} ({i})", day=i)

    lines = Block(store, max_share=0.0).lines(user, "What should we book for dinner?")

    assert restating_pairs(lines) == []
    shown = texts(lines)
    assert sum(text in RESTATED for text in shown) == 1 and sum(text in RESTATED_ZH for text in shown) == 1


def test_given_restatements_relevant_to_the_message_then_the_block_shows_one_of_them():
    store, user = InMemoryMemoryStore(), who("dup-relevant")
    for day, text in enumerate(RESTATED):
        remember(store, user, text, day=50 + day)  # tied importance: the newest are the top slots' fallbacks
    remember(store, user, "Is allergic to shellfish", day=40)  # the same topic, another value: shown too
    for i in range(30):
        remember(store, user, f"{FILLER[i % 10]} ({i})", day=i)

    lines = Block(store).lines(user, "Is the user allergic to peanuts or shellfish?")

    assert restating_pairs(lines) == []
    shown = texts(lines)
    assert sum(text in RESTATED for text in shown) == 1 and "Is allergic to shellfish" in shown
    assert len(shown) == 5  # the top slots the restatements left are filled further down the importance order


def test_given_restatements_of_another_type_then_both_are_shown():
    store, user = InMemoryMemoryStore(), who("dup-types")
    remember(store, user, "Wants to apply for the QMAS", importance=90, memory_type=MemoryType.INTENT)
    remember(store, user, "I want to apply for the QMAS", importance=90, memory_type=MemoryType.PREFERENCE)
    for i in range(10):
        remember(store, user, f"{FILLER[i % 10]} ({i})", day=i)

    shown = texts(Block(store, max_share=0.0).lines(user, "hello"))

    assert "Wants to apply for the QMAS" in shown and "I want to apply for the QMAS" in shown
