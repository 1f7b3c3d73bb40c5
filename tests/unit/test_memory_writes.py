"""The items a decided save writes: a keyword item says who chose the keywords, as text, whatever the memory's
free-form metadata holds (a number there once made the write fail)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.adapters.dynamodb.memory_writes import save_writes
from agent_memory.domain.models import Keyword, Memory, MemoryType, SaveOutcome, SaveResult

NOW = datetime(2026, 1, 5, tzinfo=UTC)


def keyword_items(metadata: dict[str, object]) -> list[dict[str, object]]:
    memory = Memory(memory_key="mem_01kd0000000000000000000001", tenant_id="t", user_id="u",
                    memory_type=MemoryType.FACT, content="tea", importance=50, keywords=[Keyword(term="tea")],
                    metadata=metadata, content_hash="h", created_at=NOW, updated_at=NOW, valid_from=NOW)
    actions = save_writes("table", SaveResult(outcome=SaveOutcome.CREATED, memory=memory))
    return [a["Put"]["Item"] for a in actions if a["Put"]["Item"]["kind"] == {"S": "keyword"}]


@pytest.mark.parametrize(("metadata", "expected"), [
    ({}, "system"), ({"keyword_source": "llm"}, "llm"), ({"keyword_source": 1.5}, "system"),
    ({"keyword_source": {"by": "x"}}, "system"), ({"keyword_source": ""}, "system")])
def test_a_keyword_item_names_who_chose_the_keywords_as_text(metadata, expected):
    (item,) = keyword_items(metadata)

    assert item["extraction_source"] == {"S": expected}
