"""`python -m agent_memory_client.import_mem0` through the real handlers: a mem0 get_all export comes in as one user
per mem0 user, found by search at once, and running it again stores nothing twice."""

from __future__ import annotations

import json

import agent_memory_client
import httpx
from agent_memory_client.import_mem0 import main

from tests.fakes.api_transport import api_transport

MEM0_EXPORT = {"results": [
    {"id": "3c90c3cc-0d44-4b50-8888-8dd25736052a", "memory": "Is allergic to peanuts", "hash": "h1",
     "metadata": None, "created_at": "2026-07-26T10:05:42.128475-07:00", "updated_at": None, "user_id": "alice"},
    {"id": "5d2f0b8e-1111-4b50-8888-8dd25736052b", "memory": "喜欢喝绿茶，不加糖", "hash": "h2", "metadata": None,
     "created_at": "2026-07-27T09:00:00+08:00", "updated_at": None, "user_id": "alice"},
    {"id": "9a1b", "memory": "Plans to run a marathon in spring", "categories": ["goals"],
     "created_at": "2026-08-01T00:00:00Z", "updated_at": "2026-08-01T00:00:00Z", "user_id": "bob"},
], "relations": []}


def test_a_mem0_export_comes_in_one_user_per_mem0_user_and_again_stores_nothing(api, monkeypatch, tmp_path, capsys):
    real = agent_memory_client.MemoryClient
    monkeypatch.setattr(agent_memory_client, "MemoryClient", lambda url, **kw: real(
        url, **kw, http_client=httpx.Client(transport=api_transport(api))))
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps(MEM0_EXPORT), encoding="utf-8")
    command = [str(source), "--base-url", "http://api.test", "--tenant-id", "acme"]

    assert main(command) == 0
    first = capsys.readouterr().err
    assert main(command) == 0
    second = capsys.readouterr().err

    memory = real("http://api.test", tenant_id="acme", http_client=httpx.Client(transport=api_transport(api)))
    found = memory.search("alice", "peanut allergy")["results"]
    assert found[0]["content_preview"] == "Is allergic to peanuts"
    assert memory.search("alice", "绿茶")["results"][0]["content_preview"] == "喜欢喝绿茶，不加糖"
    bob = memory.list_memories("bob")["items"]
    assert [(m["content"], m["memory_type"], m["source"]) for m in bob] == [
        ("Plans to run a marathon in spring", "INTENT", "mem0")]
    assert "alice: 2 memories imported, 0 there already" in first and "bob: 1 memories imported" in first
    assert "alice: 0 memories imported, 2 there already" in second
