"""Export and import of large scopes on DynamoDB Local (moto's transactions are too slow for hundreds of saves):
every page within its budget, every memory exported once, a chain longer than a page split and imported whole."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.adapters.dynamodb.archive import DynamoScopeArchive
from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore
from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.dynamodb.synonyms import DynamoSynonymStore
from agent_memory.domain.lifecycle.portable import PAGE_MAX_WRITES, ExportPage, ImportPage, page_bytes, page_writes
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.tiers.memory_layers import LogMessage
from agent_memory.services.portability import PortabilityService
from tests.conftest import TABLE
from tests.fakes.embedders import HashingEmbedder
from tests.fakes.export_pages import export_all

NOW = datetime.now(UTC)


class Stores:
    def __init__(self, client: Any) -> None:
        self.memories = DynamoMemoryStore(table_name=TABLE, client=client)
        self.layers = DynamoLayerStore(table_name=TABLE, client=client)
        self.service = PortabilityService(archive=lambda: DynamoScopeArchive(table_name=TABLE, client=client),
                                          synonyms=DynamoSynonymStore(table_name=TABLE, client=client),
                                          embedder=HashingEmbedder)

    def export_all(self, scope: ScopeRef) -> list[ExportPage]:
        return export_all(self.service, scope, NOW)


@pytest.fixture
def stores(dynamodb_local_client: Any) -> Stores:
    return Stores(dynamodb_local_client)


@pytest.fixture
def source() -> ScopeRef:
    return ScopeRef(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u-1")


def sent(page: ExportPage) -> ImportPage:
    return ImportPage.model_validate(json.loads(page.model_dump_json()))


def test_given_a_large_user_then_each_page_fits_the_budget_and_the_pages_hold_everything_once(stores, source):
    stores.memories.save_many(source, [NewMemory(memory_type=MemoryType.FACT, content=f"Fact number {i} " + "x" * 200)
                                       for i in range(120)])
    stores.memories.save_many(source, [NewMemory(memory_type=MemoryType.FACT, content=f"Job {i}", field="job")
                                       for i in range(45)])  # a field with a long history
    stores.layers.append_messages(source, [
        LogMessage(message_id=f"m{i}", conversation_id="c", role="user", content=f"message {i}",
                   created_at=NOW - timedelta(seconds=i), expires_at=NOW + timedelta(days=1)) for i in range(80)],
        set())

    pages = stores.export_all(source)

    assert len(pages) > 3
    assert all(page_writes(p) <= PAGE_MAX_WRITES and page_bytes(p) < 1_000_000 for p in pages)
    keys = [v.memory_key for p in pages for m in p.memories for v in m.versions]
    assert len(keys) == len(set(keys)) == 165
    assert len([m for p in pages for m in p.log]) == 80
    jobs = next(m for p in pages for m in p.memories if m.versions[0].field == "job")
    assert len(jobs.versions) == 45  # a chain is never split while it fits a page


def test_given_a_chain_longer_than_a_page_then_it_is_split_over_pages_and_imports_whole(stores, source):
    stores.memories.save_many(source, [NewMemory(memory_type=MemoryType.FACT, content=f"Job {i}", field="job")
                                       for i in range(PAGE_MAX_WRITES + 30)])
    target = ScopeRef(tenant_id=f"{source.tenant_id}-to", user_id="u")

    pages = stores.export_all(source)
    for page in pages:
        stores.service.import_page(target, sent(page), now=NOW)

    assert len(pages) == 2
    current = stores.memories.all_current(target)
    assert [m.content for m in current] == [f"Job {PAGE_MAX_WRITES + 29}"]
    assert len(stores.memories.history(target, current[0])) == PAGE_MAX_WRITES + 30
