"""The export format on its own: what a page holds, what an import refuses (naming the item), what a record costs,
and the cursor."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic import ValidationError

from agent_memory.domain.lifecycle.portable import (
    EXPORT_FORMAT,
    ExportCursor,
    ExportedMemory,
    ImportPage,
    memory_writes,
    page_writes,
)
from agent_memory.errors import InvalidInput

OLD, NEW = "mem_01kd0000000000000000000001", "mem_01kg0000000000000000000002"


def version(key: str, content: str, **fields: Any) -> dict[str, Any]:
    return {"memory_key": key, "memory_type": "FACT", "content": content, "importance": 70,
            "created_at": "2026-01-05T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z",
            "valid_from": "2026-01-05T10:00:00Z", **fields}


def chain() -> list[dict[str, Any]]:
    return [version(OLD, "Lives in Leeds", field="residence", superseded_at="2026-03-01T09:00:00Z",
                    superseded_by=NEW),
            version(NEW, "Lives in York", field="residence", supersedes=OLD, version=2,
                    keywords=[{"term": "York"}, {"term": "york "}, {"term": "city"}])]


def page(**sections: Any) -> dict[str, Any]:
    return {"format": EXPORT_FORMAT, "version": 1, **sections}


def errors_of(body: dict[str, Any]) -> list[str]:
    with pytest.raises(ValidationError) as raised:
        ImportPage.model_validate(body)
    return [".".join(str(p) for p in e["loc"]) for e in raised.value.errors()]


def test_given_a_chain_then_it_reads_as_one_memory_with_its_versions_oldest_first():
    imported = ImportPage.model_validate(page(memories=[{"versions": chain()}]))

    assert [v.memory_key for v in imported.memories[0].versions] == [OLD, NEW]
    assert [v.is_current for v in imported.memories[0].versions] == [False, True]


def test_given_a_version_without_a_timezone_then_the_error_names_that_version_s_field():
    versions = chain()
    versions[1]["created_at"] = "2026-03-01T09:00:00"

    assert errors_of(page(memories=[{"versions": versions}])) == ["memories.0.versions.1.created_at"]


def test_given_a_version_from_the_future_then_it_is_refused():
    versions = chain()
    versions[0]["valid_from"] = "2999-01-01T00:00:00Z"

    assert errors_of(page(memories=[{"versions": versions}])) == ["memories.0.versions.0.valid_from"]


def test_given_versions_that_do_not_follow_each_other_then_the_memory_is_refused():
    versions = chain()
    versions[1]["supersedes"] = None

    assert errors_of(page(memories=[{"versions": versions}])) == ["memories.0"]


def test_given_a_retired_version_without_its_successor_key_then_it_is_refused():
    versions = [version(OLD, "Lives in Leeds", superseded_at="2026-03-01T09:00:00Z")]

    assert errors_of(page(memories=[{"versions": versions}])) == ["memories.0.versions.0"]


def test_given_a_memory_key_twice_in_a_page_then_the_page_is_refused():
    one = {"versions": [version(OLD, "a")]}

    assert errors_of(page(memories=[one, one])) == [""]


def test_given_another_format_or_version_then_it_is_refused():
    assert errors_of({"format": "mem0", "version": 1}) == ["format"]
    assert errors_of({"format": EXPORT_FORMAT, "version": 2}) == ["version"]


def test_given_a_memory_tool_path_outside_memories_or_not_canonical_then_it_is_refused():
    file = {"path": "/etc/passwd", "text": "x", "created_at": "2026-01-05T10:00:00Z"}
    assert errors_of(page(files=[file])) == ["files.0.path"]
    assert errors_of(page(files=[{**file, "path": "/memories/a//b.md"}])) == ["files.0.path"]
    assert errors_of(page(files=[{**file, "path": "/memories/a", "is_directory": True}])) == ["files.0"]


def test_given_unknown_fields_then_they_are_refused_rather_than_dropped():
    versions = chain()
    versions[0]["embedding"] = "AAAA"

    assert errors_of(page(memories=[{"versions": versions}])) == ["memories.0.versions.0.embedding"]


def test_a_current_version_costs_its_item_content_marker_field_pointer_and_each_distinct_keyword():
    record = ExportedMemory.model_validate({"versions": chain()})

    # the retired version: 1; the current one: 1 + marker + pointer + keywords york, city
    assert memory_writes(record) == 1 + 1 + 1 + 1 + 2


def test_a_page_costs_one_write_per_entry_besides_its_memories():
    body = page(memories=[{"versions": chain()}], synonyms=[{"keyword": "york", "synonym": "约克",
                                                             "similarity_score": 0.9}],
                hot_memory=[{"type": "status", "key": "签证", "value": 1, "created_at": "2026-01-05T10:00:00Z",
                             "updated_at": "2026-01-05T10:00:00Z"}])

    assert page_writes(ImportPage.model_validate(body)) == 6 + 1 + 1


def test_a_cursor_reads_back_as_it_was_written():
    cursor = ExportCursor(section="log", after="LOG#2026-01-05T10:00:00.000Z#c#m", skip=0)

    assert ExportCursor.decode(cursor.encode()) == cursor
    assert ExportCursor.decode(None) == ExportCursor(section="memories")


def encoded(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


@pytest.mark.parametrize("forged", [
    encoded("not json"), "!!",
    encoded('{"s":"log","a":"MEM#mem_01","n":0}'),  # another section's key
    encoded('{"s":"other","a":null,"n":0}'),
    encoded('{"s":"memories","a":null,"n":-1}'),
    encoded('{"s":"memories","a":null,"n":true}'),
])
def test_given_a_cursor_this_api_did_not_write_then_it_is_refused_naming_the_cursor(forged: str):
    with pytest.raises(InvalidInput) as raised:
        ExportCursor.decode(forged)

    assert raised.value.details == [{"field": "cursor"}]


def test_given_two_log_messages_that_the_log_would_store_as_one_then_the_page_is_refused():
    message = {"message_id": "m-1", "conversation_id": "c-1", "role": "user", "content": "hi",
               "created_at": "2026-01-05T10:00:00.000100Z", "expires_at": "2026-02-05T10:00:00Z"}

    assert errors_of(page(log=[message, {**message, "created_at": "2026-01-05T10:00:00.000900Z"}])) == [""]


def test_given_a_synonym_pair_twice_in_two_spellings_then_the_page_is_refused():
    pair = {"keyword": "TTPS", "synonym": "高才通", "similarity_score": 0.9}

    assert errors_of(page(synonyms=[pair, {**pair, "keyword": " ttps"}])) == [""]


@pytest.mark.parametrize("messages", ["many", 2.5, True, -1, {"n": 1}])
def test_given_a_report_whose_message_count_is_no_count_then_it_is_refused(messages):
    report = {"week_start": "2026-01-05", "week_end": "2026-01-11", "summary": "s", "metrics": {"messages": messages},
              "created_at": "2026-01-12T00:00:00Z"}

    assert errors_of(page(reports=[report])) == ["reports.0.metrics"]
