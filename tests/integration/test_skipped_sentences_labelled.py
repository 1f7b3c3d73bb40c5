"""`skipped_sentences` is exact both ways on every labelled turn, with each pack's offline extractor as `make run`
serves it (the general pack's with its exemplar reader and the bundled embedder): a one-sentence turn that gave a
memory never lists its sentence, one that gave nothing always does; in a turn of several sentences, a sentence
the rules read a memory from alone is never listed."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from agent_memory.adapters.embeddings.local import LocalE5Embedder
from agent_memory.adapters.llm import build_extractor
from agent_memory.domain.packs import pack_named
from agent_memory.domain.text.skipped_sentences import skipped_sentences
from agent_memory.domain.text.text import sentences
from agent_memory.ports import ConversationTurn, MemoryExtractor
from agent_memory.settings import Settings

DATA = Path(__file__).resolve().parent.parent / "data"
# Every labelled set but the exemplars the general pack's reader is made of.
SETS = sorted(path.name for path in DATA.glob("extraction_*.jsonl") if "exemplars" not in path.name)


def pack_of(name: str) -> str:
    return "general" if name.startswith("extraction_general") else "immigration"


@cache
def extractor(pack: str) -> MemoryExtractor:
    return build_extractor(Settings(llm_provider="offline"), pack=pack_named(pack),
                           embedder=LocalE5Embedder() if pack == "general" else None)


def test_every_labelled_set_is_read():
    assert len(SETS) >= 9 and {pack_of(name) for name in SETS} == {"general", "immigration"}


@pytest.mark.parametrize("name", SETS)
def test_skipped_sentences_are_exactly_the_sentences_nothing_came_from(name):
    wrong = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        message = turn["user_message"]
        said = [s for s in sentences(message) if any(ch.isalnum() for ch in s)]
        memories = extractor(pack_of(name)).extract(ConversationTurn(user_message=message))
        skipped = skipped_sentences(message, memories)
        if len(said) == 1 and (bool(memories) == (said[0] in skipped)):
            wrong.append((turn["id"], message, [m.field for m in memories], skipped))
        for memory in memories:
            if memory.said_in and any(memory.said_in in s or s in memory.said_in for s in skipped):
                wrong.append((turn["id"], message, memory.field, skipped))
    assert wrong == []
