"""Memory placeholders in text: resolved to a memory's summary, content or metadata field, or saying what is
missing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.domain.models import Memory, MemoryType
from agent_memory.domain.search.search import summary_of
from agent_memory.domain.text.placeholders import find_placeholders, resolve

T = datetime(2026, 2, 5, tzinfo=UTC)
CMD = Memory(memory_key="mem_01kf0000000000000000000001", tenant_id="t", user_id="u", memory_type=MemoryType.FACT,
             content="python train.py --epochs 100", importance=70, content_hash="h", created_at=T, updated_at=T,
             valid_from=T, metadata={"summary": "训练命令", "epochs": 100, "host": "gpu-1"})


def lookup(keys):
    return {k: CMD for k in keys if k == CMD.memory_key}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"run [memory:{CMD.memory_key}]", "run 训练命令"),
        (f"run [memory:{CMD.memory_key}:summary]", "run 训练命令"),
        (f"[memory:{CMD.memory_key}:full] now", "python train.py --epochs 100 now"),
        (f"host=[memory:{CMD.memory_key}:meta:host] epochs=[memory:{CMD.memory_key}:meta:epochs]",
         "host=gpu-1 epochs=100"),
        (f"[memory:{CMD.memory_key}:meta:nope]", "[ERROR: Metadata field nope not found]"),
        ("[memory:mem_missing]", "[ERROR: Memory mem_missing not found]"),
        ("no placeholders [memory:] here", "no placeholders [memory:] here"),
    ],
)
def test_placeholders_resolve_or_say_what_is_missing(text, expected):
    resolved, _, _ = resolve(text, lookup, summary_of)
    assert resolved == expected


def test_missing_keys_are_reported():
    _, found, missing = resolve("[memory:a-1] [memory:b-2:full]", lookup, summary_of)
    assert [p.key for p in found] == ["a-1", "b-2"] and missing == ["a-1", "b-2"]
    assert find_placeholders("[memory:k:meta:f]")[0].metafield == "f"
