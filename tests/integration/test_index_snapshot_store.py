"""One contract for saved search indexes: the DynamoDB adapter on moto and on DynamoDB Local, and the fake the
unit tests use. Then what only the table shows: chunks, TTL, clean-up, and that snapshot items stay out of
the user's memories."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.index_snapshots import CHUNK_BYTES, DynamoIndexSnapshotStore
from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.in_process_index import InProcessIndex
from agent_memory.api.search import SearchRequest, search_memories
from agent_memory.bootstrap.services import build_services
from agent_memory.domain.keys import partition_key, snapshot_partition_key
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.ports import IndexSnapshotStore
from agent_memory.settings import Settings
from tests.conftest import TABLE
from tests.fakes.index_snapshots import InMemoryIndexSnapshotStore

BIG = os.urandom(CHUNK_BYTES * 3 + 1234)  # four chunks


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["moto", "dynamodb-local", "fake"])
def backend(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    yield request.param, (None if request.param == "fake" else request.getfixturevalue(
        "dynamodb_client" if request.param == "moto" else "dynamodb_local_client"))


def snapshots_on(backend: tuple[str, Any], *, min_interval_seconds: float = 0.0,
                 clock: Clock | None = None) -> IndexSnapshotStore:
    name, client = backend
    clock = clock or Clock()
    if name == "fake":
        return InMemoryIndexSnapshotStore(min_interval_seconds=min_interval_seconds, clock=clock)
    return DynamoIndexSnapshotStore(table_name=TABLE, client=client, min_interval_seconds=min_interval_seconds,
                                    clock=clock)


def test_given_a_saved_snapshot_then_exactly_its_version_reads_it_back_whole(backend, user):
    snapshots = snapshots_on(backend)
    assert snapshots.get(user, 7) is None

    assert snapshots.put(user, 7, lambda: BIG) is True

    assert snapshots.get(user, 7) == BIG
    assert snapshots.get(user, 6) is None and snapshots.get(user, 8) is None


def test_the_newest_snapshot_up_to_a_version_is_the_one_saved_at_or_before_it(backend, user):
    snapshots = snapshots_on(backend)
    assert snapshots.newest(user, -1) is None and snapshots.newest(user, 7) is None

    snapshots.put(user, 7, lambda: BIG)

    assert snapshots.newest(user, 7) == BIG and snapshots.newest(user, 50) == BIG
    assert snapshots.newest(user, 6) is None and snapshots.newest(user, -1) is None


def test_given_a_newer_version_saved_then_the_older_one_is_gone_and_never_comes_back(backend, user):
    snapshots = snapshots_on(backend)
    snapshots.put(user, 1, lambda: b"version one")

    assert snapshots.put(user, 2, lambda: "第二版".encode()) is True
    assert snapshots.put(user, 1, lambda: b"version one, late") is False

    assert snapshots.get(user, 1) is None
    assert snapshots.get(user, 2) == "第二版".encode()


def test_given_the_same_version_saved_again_then_the_new_bytes_replace_the_old(backend, user):
    snapshots = snapshots_on(backend)
    snapshots.put(user, 3, lambda: BIG)

    assert snapshots.put(user, 3, lambda: b"rebuilt") is True
    assert snapshots.get(user, 3) == b"rebuilt"


def test_given_a_recent_snapshot_then_a_newer_version_waits_for_the_interval(backend, user):
    clock = Clock()
    snapshots = snapshots_on(backend, min_interval_seconds=60, clock=clock)
    snapshots.put(user, 1, lambda: b"one")
    clock.now += 30

    assert snapshots.put(user, 2, lambda: b"two") is False
    assert snapshots.put(user, 1, lambda: b"one again") is True  # the same version's: replaced at once
    clock.now += 61
    assert snapshots.put(user, 2, lambda: b"two") is True and snapshots.get(user, 2) == b"two"


def test_given_a_save_that_is_skipped_then_the_snapshot_is_never_encoded(backend, user):
    snapshots = snapshots_on(backend)
    snapshots.put(user, 9, lambda: b"nine")

    def encode() -> bytes:
        raise AssertionError("encoded for nothing")

    assert snapshots.put(user, 8, encode) is False


def test_given_two_users_then_neither_reads_the_other_s_snapshot(backend, user):
    snapshots = snapshots_on(backend)
    other = ScopeRef(tenant_id=user.tenant_id, user_id=user.user_id + "-other")
    snapshots.put(user, 1, lambda: b"mine")

    assert snapshots.get(other, 1) is None


# ---- what only the table shows ----------------------------------------------------------------------------


@pytest.fixture(params=["moto", "dynamodb-local"])
def client(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue("dynamodb_client" if request.param == "moto" else "dynamodb_local_client")


def snapshot_items(client: Any, user: ScopeRef) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"TableName": TABLE, "KeyConditionExpression": "pk = :pk", "ConsistentRead": True,
                              "ExpressionAttributeValues": {":pk": {"S": snapshot_partition_key(user)}}}
    items: list[dict[str, Any]] = []
    while True:
        page = client.query(**params)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_given_two_namespaces_then_each_keeps_its_own_snapshot_and_head_in_the_user_s_partition(client, user):
    current = DynamoIndexSnapshotStore(table_name=TABLE, client=client, min_interval_seconds=3600)
    every_version = DynamoIndexSnapshotStore(table_name=TABLE, client=client, min_interval_seconds=3600,
                                             namespace="all#")

    assert current.put(user, 5, lambda: b"current memories") and every_version.put(user, 5, lambda: b"every one")
    assert every_version.put(user, 6, lambda: b"too soon") is False  # its own HEAD's interval, not the other's

    assert current.get(user, 5) == b"current memories" and every_version.get(user, 5) == b"every one"
    keys = [i["sk"]["S"] for i in client.query(
        TableName=TABLE, KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": snapshot_partition_key(user)}})["Items"]]
    assert "HEAD" in keys and "all#HEAD" in keys  # one partition: an erasure of it removes both


def test_a_snapshot_is_chunks_under_the_item_limit_with_a_ttl_and_a_replaced_one_is_deleted(client, user):
    clock = Clock()
    snapshots = DynamoIndexSnapshotStore(table_name=TABLE, client=client, ttl_seconds=3600, clock=clock)
    snapshots.put(user, 1, lambda: BIG)
    snapshots.put(user, 2, lambda: BIG[:1000])

    items = snapshot_items(client, user)

    assert sorted(i["sk"]["S"].split("#")[0] for i in items) == ["HEAD", "v000000000002"]
    assert all(int(i["expires_at"]["N"]) == int(clock.now) + 3600 for i in items)
    snapshots.put(user, 3, lambda: BIG)
    assert max(len(i["data"]["B"]) for i in snapshot_items(client, user) if "data" in i) == CHUNK_BYTES


def test_given_a_damaged_chunk_then_the_snapshot_reads_as_missing(client, user):
    snapshots = DynamoIndexSnapshotStore(table_name=TABLE, client=client)
    snapshots.put(user, 5, lambda: BIG)
    chunk = next(i for i in snapshot_items(client, user) if i["sk"]["S"].endswith("#0002"))
    client.put_item(TableName=TABLE, Item={**chunk, "data": {"B": b"\x00" * 10}})

    assert snapshots.get(user, 5) is None


def test_given_an_item_this_adapter_did_not_write_then_the_snapshot_reads_as_missing(client, user):
    client.put_item(TableName=TABLE, Item={"pk": {"S": snapshot_partition_key(user)}, "sk": {"S": f"v{6:012d}#x#0"},
                                           "data": {"B": b"?"}})

    assert DynamoIndexSnapshotStore(table_name=TABLE, client=client).get(user, 6) is None


def test_given_chunks_a_writer_left_half_written_then_the_newest_whole_snapshot_is_still_read(client, user):
    snapshots = DynamoIndexSnapshotStore(table_name=TABLE, client=client)
    snapshots.put(user, 4, lambda: BIG)
    orphan = next(i for i in snapshot_items(client, user) if i["sk"]["S"].endswith("#0000"))
    older_writer = "0000000000001dead00"
    client.put_item(TableName=TABLE, Item={**orphan, "sk": {"S": f"v{4:012d}#{older_writer}#0000"},
                                           "writer": {"S": older_writer}, "data": {"B": b"half"}})

    assert snapshots.get(user, 4) == BIG


def test_snapshot_items_never_appear_among_the_user_s_memories(client, user):
    store = DynamoMemoryStore(table_name=TABLE, client=client)
    saved = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户喜欢徒步")).memory
    DynamoIndexSnapshotStore(table_name=TABLE, client=client).put(user, store.user_version(user), lambda: BIG)

    assert [m.memory_key for m in store.all_current(user)] == [saved.memory_key]
    assert [m.memory_key for m in store.list_current(user).items] == [saved.memory_key]
    assert store.access_stats(user) == {} and store.user_version(user) == 1
    assert snapshot_partition_key(user) != partition_key(user)


class DeniedWrites:
    """A client whose role may read the table but not write it (the reading functions' IAM today)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.writes = inner, 0

    def get_item(self, **kwargs: Any) -> Any:
        return self.inner.get_item(**kwargs)

    def query(self, **kwargs: Any) -> Any:
        return self.inner.query(**kwargs)

    def _denied(self, **kwargs: Any) -> Any:
        self.writes += 1
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not authorized"}}, "Write")

    batch_write_item = put_item = _denied


def test_given_a_role_that_may_not_write_then_saving_fails_quietly_once_and_is_not_tried_again(client, user):
    denied = DeniedWrites(client)
    snapshots = DynamoIndexSnapshotStore(table_name=TABLE, client=denied)

    assert snapshots.put(user, 1, lambda: BIG) is False
    assert snapshots.put(user, 2, lambda: BIG) is False
    assert denied.writes == 1 and snapshots.get(user, 1) is None


@pytest.mark.parametrize("enabled", [True, False])
def test_the_composition_root_saves_a_snapshot_after_a_cold_build_and_a_new_container_loads_it(
        client, user, enabled):
    settings = Settings(memory_table_name=TABLE, search_snapshot_min_memories=3, search_snapshots=enabled)
    first = build_services(settings, dynamodb_client=client, embedder=None)
    first.save.save_batch(user, [NewMemory(memory_type=MemoryType.FACT, content=text) for text in (
        "用户喜欢徒步", "Caroline went hiking in May", "用户在杭州工作")])
    search_memories(first.search, user, SearchRequest(query="hiking"))
    assert isinstance(first.index.inner, InProcessIndex)
    first.index.inner.flush(timeout=30)

    second = build_services(settings, dynamodb_client=client, embedder=None)
    found = search_memories(second.search, user, SearchRequest(query="hiking", min_relevance_score=0))

    assert found.results[0].content_preview == "Caroline went hiking in May"
    assert isinstance(second.index.inner, InProcessIndex)
    assert second.index.inner.stats.get("snapshot_loads", 0) == (1 if enabled else 0)
