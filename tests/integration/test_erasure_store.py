"""The erasure's table side on moto and on DynamoDB Local: every kind of item the adapters write for a scope is
swept, the final check reads nothing, another scope is untouched, a large scope continues across requests, and
the scope's caches never take its new start for what was erased."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.adapters.dynamodb.context_cache import DynamoContextCache
from agent_memory.adapters.dynamodb.erasure import DynamoScopeEraser
from agent_memory.adapters.dynamodb.index_snapshots import DynamoIndexSnapshotStore
from agent_memory.adapters.dynamodb.memory_files import DynamoMemoryFileStore
from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore
from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.in_process_index import InProcessIndex
from agent_memory.domain.keys import (
    active_partition_key,
    active_shard,
    cache_partition_key,
    partition_key,
    snapshot_partition_key,
)
from agent_memory.domain.memory_tool.memory_files import MemoryFile
from agent_memory.domain.models import Keyword, MemoryType, NewMemory, ScopeRef
from agent_memory.domain.text.text import tokenize
from agent_memory.domain.tiers.memory_layers import (
    HotMemoryEntry,
    HotMemoryType,
    LogMessage,
    WeeklyReport,
    week_start_of,
)
from agent_memory.ports import CachedContext, CandidateQuery
from agent_memory.services.erasure import ErasureService
from tests.conftest import TABLE

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(params=["moto", "dynamodb-local"])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    yield request.getfixturevalue("dynamodb_client" if request.param == "moto" else "dynamodb_local_client")


def scope() -> ScopeRef:
    return ScopeRef(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id=f"u-{uuid.uuid4().hex[:8]}")


def fill(client: Any, user: ScopeRef, memories: int = 3) -> None:
    """Every kind of item the adapters write for a scope."""
    store = DynamoMemoryStore(table_name=TABLE, client=client)
    store.save_many(user, [NewMemory(memory_type=MemoryType.FACT, content=f"Fact number {i} about the garden",
                                     field="garden" if i == 0 else None,
                                     keywords=[Keyword(term="garden"), Keyword(term=f"k{i}")])
                           for i in range(memories)])
    store.save(user, NewMemory(memory_type=MemoryType.FACT, content="A newer garden fact", field="garden"))
    store.record_access(user, [store.all_current(user)[0].memory_key], NOW)
    layers = DynamoLayerStore(table_name=TABLE, client=client)
    logged = [LogMessage(message_id=f"m-{i}", conversation_id="c1", role="user", content=f"message {i}",
                         created_at=NOW - timedelta(days=i), expires_at=NOW + timedelta(days=30 - i)) for i in (1, 9)]
    layers.append_messages(user, logged, {week_start_of(m.created_at) for m in logged})
    assert layers.claim_extraction(user, "m-1")
    layers.put_hot(user, HotMemoryEntry(type=HotMemoryType.STATUS, key="visa", value="half done", created_at=NOW,
                                        updated_at=NOW))
    week = week_start_of(NOW - timedelta(days=7))
    assert layers.put_report_if_absent(user, WeeklyReport(
        week_start=week, week_end=week + timedelta(days=6), summary="A quiet week", created_at=NOW,
        generated_by="extractive"))
    DynamoMemoryFileStore(table_name=TABLE, client=client).create(user, MemoryFile(
        path="/memories/a/notes.md", text="notes", created_at=NOW, updated_at=NOW, version=1))
    DynamoContextCache(table_name=TABLE, client=client).put(user, "user_memory#v1", CachedContext(
        content="- [FACT] garden", created_at=NOW.timestamp(), expires_at=NOW.timestamp() + 300))
    assert DynamoIndexSnapshotStore(table_name=TABLE, client=client).put(user, 4, lambda: b"snapshot" * 10)
    assert DynamoIndexSnapshotStore(table_name=TABLE, client=client, namespace="all#").put(
        user, 4, lambda: b"every version" * 10)


def items_of(client: Any, user: ScopeRef) -> list[str]:
    found = []
    for pk in (partition_key(user), cache_partition_key(user), snapshot_partition_key(user)):
        found += [f"{pk} {i['sk']['S']}" for i in client.query(
            TableName=TABLE, KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": pk}},
            ConsistentRead=True)["Items"]]
    for days in range(-70, 8):
        week = week_start_of(NOW + timedelta(days=days))
        key = {"pk": {"S": active_partition_key(week, active_shard(user, 16))}, "sk": {"S": partition_key(user)}}
        if client.get_item(TableName=TABLE, Key=key).get("Item"):
            found.append(f"marker {week}")
    return sorted(set(found))


def service(client: Any, **options: Any) -> ErasureService:
    return ErasureService(table=DynamoScopeEraser(table_name=TABLE, client=client, shards=16), **options)


def test_given_every_kind_of_item_when_erased_then_the_final_check_finds_nothing_and_others_are_kept(client):
    erased, kept = scope(), scope()
    fill(client, erased)
    fill(client, kept)
    before = items_of(client, erased)
    assert any("marker" in i for i in before) and any(" FILE#" in i for i in before)

    receipt = service(client).erase(erased, requested_by="ops")

    assert receipt.status == "complete" and receipt.verified and receipt.passes == 1
    totals = receipt.totals()
    assert totals["memories"].found == 4 and totals["memories"].removed == 4
    assert totals["conversation_log"].found == 2 and totals["rollup_markers"].found == 2
    assert sum(s.found for s in receipt.stores) == len(before)
    assert all(s.remaining == 0 for s in receipt.stores)
    assert items_of(client, erased) == []
    assert items_of(client, kept) != [] and len(items_of(client, kept)) == len(before)
    assert service(client).receipt(erased.tenant_id, receipt.erasure_id) == receipt
    assert service(client).receipt(kept.tenant_id, receipt.erasure_id) is None  # another tenant's


def test_given_a_scope_larger_than_one_request_then_the_erasure_continues_where_it_stopped(client):
    user = scope()
    fill(client, user, memories=60)
    total = len(items_of(client, user))

    first = service(client, budget_seconds=1e-9).erase(user)
    again = service(client).erase(user)

    assert first.status == "in_progress" and not first.verified
    assert again.erasure_id == first.erasure_id and again.status == "complete" and again.verified
    assert sum(s.removed for s in again.stores) == total
    assert items_of(client, user) == []


def test_given_statistics_of_reads_that_arrive_after_an_erasure_then_no_counter_comes_back(client):
    user = scope()
    store = DynamoMemoryStore(table_name=TABLE, client=client)
    key = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="Plays the cello")).memory.memory_key
    service(client).erase(user)

    store.record_access(user, [key], NOW)

    assert items_of(client, user) == []


def test_given_a_cached_index_when_the_user_is_erased_and_starts_again_then_only_the_new_memories_are_found(client):
    """Another container's index of the erased user (nothing told it): the new start's version counter counts
    from 0 again, in a new generation, so the cached index of the same count is not taken for it."""
    user = scope()
    store = DynamoMemoryStore(table_name=TABLE, client=client)
    index = InProcessIndex(store=store, embedder=lambda: None, max_users=10)
    store.save(user, NewMemory(memory_type=MemoryType.FACT, content="Plays the cello every Sunday"))
    def found(text: str) -> list[str]:
        return [c.memory.content for c in index.candidates(user, CandidateQuery(text=text, terms=tokenize(text)))]

    assert found("cello") == ["Plays the cello every Sunday"]

    service(client).erase(user)  # in another container: this index is not told
    store.save(user, NewMemory(memory_type=MemoryType.FACT, content="Plays the violin"))

    assert store.user_version(user) == 1
    assert found("cello violin") == ["Plays the violin"]


def test_an_erasure_reads_the_rollup_markers_of_every_week_in_one_batch(dynamodb_client):
    """A marker per active week: probing them one GetItem at a time made a user of two turns cost dozens of calls."""
    user = scope()
    layers = DynamoLayerStore(table_name=TABLE, client=dynamodb_client)
    logged = [LogMessage(message_id=f"m-{i}", conversation_id="c1", role="user", content=f"message {i}",
                         created_at=NOW - timedelta(days=i), expires_at=NOW + timedelta(days=30)) for i in (1, 2)]
    layers.append_messages(user, logged, {week_start_of(m.created_at) for m in logged})
    calls: list[str] = []
    dynamodb_client.meta.events.register("before-call.dynamodb.*",
                                         lambda model, **_: calls.append(model.name), unique_id="count-erasure")
    try:
        receipt = service(dynamodb_client).erase(user)
    finally:
        dynamodb_client.meta.events.unregister("before-call.dynamodb.*", unique_id="count-erasure")

    assert receipt.status == "complete" and receipt.verified
    assert items_of(dynamodb_client, user) == []
    # The tombstone read; the markers once in the sweep and once in the final check.
    assert calls.count("GetItem") == 1 and calls.count("BatchGetItem") == 2
    assert len(calls) <= 16, sorted(calls)
