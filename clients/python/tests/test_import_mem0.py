"""The mem0 importer's conversion: each shape of mem0's get_all output read, every mem0 memory one current memory of
its user, keys stable across runs, and pages the server's import takes (its own model and budget check them)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from agent_memory.domain.keys import is_valid_memory_key
from agent_memory.domain.lifecycle.portable import PAGE_MAX_WRITES, ImportPage, page_writes
from agent_memory_client.import_mem0 import Mem0FormatError, main, mem0_memories, memory_key, pages_by_user

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)
OSS = {"results": [
    {"id": "3c90c3cc-0d44-4b50-8888-8dd25736052a", "memory": "Likes green tea", "hash": "a1",
     "metadata": {"source": "chat"}, "created_at": "2026-07-26T10:05:42.128475-07:00", "updated_at": None,
     "user_id": "alice", "agent_id": "helper"},
    {"id": "5d2f0b8e-1111-4b50-8888-8dd25736052b", "memory": "喜欢喝绿茶", "hash": "a2", "metadata": None,
     "created_at": "2026-07-27T09:00:00+08:00", "updated_at": "2026-07-28T09:00:00+08:00", "user_id": "bob"},
], "relations": []}
PLATFORM = [{"id": "7e0c", "memory": "Plans to move to Lisbon", "user_id": "alice", "categories": ["goals"],
             "created_at": "2026-08-01T00:00:00Z", "updated_at": "2026-08-01T00:00:00Z"},
            {"id": "7e0d", "memory": "Prefers email", "user_id": "alice", "categories": ["user_preferences"],
             "created_at": "2026-08-02T00:00:00", "updated_at": "2026-08-02T00:00:00"}]


def test_every_shape_of_get_all_output_is_read():
    assert [m["id"] for m in mem0_memories(OSS)] == [m["id"] for m in OSS["results"]]
    assert len(mem0_memories(PLATFORM)) == 2
    assert len(mem0_memories({"count": 2, "next": None, "previous": None, "results": PLATFORM})) == 2
    with pytest.raises(Mem0FormatError, match="item 0"):
        mem0_memories([{"text": "no memory field"}])
    with pytest.raises(Mem0FormatError):
        mem0_memories({"memories": []})


def test_each_mem0_user_becomes_a_user_and_each_memory_a_current_version_the_server_takes():
    users = pages_by_user(mem0_memories(OSS) + mem0_memories(PLATFORM), now=NOW)

    assert sorted(users) == ["alice", "bob"]
    alice = [m["versions"][0] for p in users["alice"] for m in p["memories"]]
    assert [(v["content"], v["memory_type"]) for v in alice] == [
        ("Likes green tea", "FACT"), ("Plans to move to Lisbon", "INTENT"), ("Prefers email", "PREFERENCE")]
    assert alice[0]["created_at"] == "2026-07-26T17:05:42.128475Z"  # the mem0 time, in UTC
    assert alice[0]["metadata"] == {"mem0": {"id": "3c90c3cc-0d44-4b50-8888-8dd25736052a", "hash": "a1",
                                             "metadata": {"source": "chat"}, "agent_id": "helper"}}
    assert alice[2]["created_at"] == "2026-08-02T00:00:00Z"  # no timezone: read as UTC
    for pages in users.values():
        for page in pages:
            ImportPage.model_validate(json.loads(json.dumps(page)))


def test_keys_are_the_servers_form_and_the_same_on_every_run():
    first = pages_by_user(mem0_memories(OSS), now=NOW)
    again = pages_by_user(mem0_memories(OSS), now=NOW)

    key = first["alice"][0]["memories"][0]["versions"][0]["memory_key"]
    assert is_valid_memory_key(key) and first == again
    assert memory_key("a", NOW) != memory_key("b", NOW)
    assert memory_key("a", NOW) < memory_key("a", NOW.replace(year=2027))  # time-ordered


def test_the_same_text_twice_is_kept_once_and_a_memory_without_a_user_needs_one_named():
    twice = [{"id": "1", "memory": "Likes tea", "user_id": "u"}, {"id": "2", "memory": "likes tea!", "user_id": "u"}]

    assert sum(len(p["memories"]) for p in pages_by_user(twice, now=NOW)["u"]) == 1
    with pytest.raises(Mem0FormatError, match="--user"):
        pages_by_user([{"id": "1", "memory": "Agent note", "agent_id": "a"}], now=NOW)
    assert list(pages_by_user([{"id": "1", "memory": "Agent note"}], user="me", now=NOW)) == ["me"]


def test_many_memories_are_split_into_pages_each_one_transaction():
    many = [{"id": str(i), "memory": f"fact number {i} " + "详细" * (i % 50), "user_id": "u"} for i in range(500)]

    pages = pages_by_user(many, now=NOW)["u"]

    assert sum(len(p["memories"]) for p in pages) == 500
    assert all(page_writes(ImportPage.model_validate(p)) <= PAGE_MAX_WRITES for p in pages)


def test_the_command_writes_the_export_document_with_out(tmp_path, capsys):
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(OSS), encoding="utf-8")
    out = tmp_path / "bob.json"

    assert main([str(source), "--user", "bob", "--out", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["format"] == "agent-memory-export-file"
    assert len(document["pages"][0]["memories"]) == 2
    assert main([str(source), "--out", str(out)]) == 2  # two mem0 users, one document
    assert "2 users" in capsys.readouterr().err
