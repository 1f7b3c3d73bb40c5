"""The search index's write side in memory."""

from __future__ import annotations

from agent_memory.domain.models import Memory


class FakeIndex:
    """In-memory stand-in for OpenSearchIndex's write side; `fail_on` makes one memory's writes fail."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.docs: dict[str, Memory] = {}
        self.fail_on = fail_on

    def upsert(self, memory: Memory) -> None:
        if memory.memory_key == self.fail_on:
            raise ConnectionError("index unreachable")
        self.docs[f"{memory.tenant_id}|{memory.user_id}|{memory.memory_key}"] = memory

    def delete(self, tenant_id: str, user_id: str, memory_key: str) -> None:
        if memory_key == self.fail_on:
            raise ConnectionError("index unreachable")
        self.docs.pop(f"{tenant_id}|{user_id}|{memory_key}", None)
