"""The stream indexer: realistic DynamoDB stream records through IndexerFunction (as template.yaml
declares it), with an in-memory index; partial batch failures reported by sequence number."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import numpy as np
import pytest

from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.opensearch.sync import Indexer, SyncAction, classify, memory_from_image
from agent_memory.domain.models import Memory, MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.vectors import decode_vector, encode_vector
from local.runtime import LocalFunctions
from tests.conftest import TABLE
from tests.fakes.embedders import HashEmbedder
from tests.fakes.index import FakeIndex

# ---- realistic stream records -------------------------------------------------------------


def _lambda_json(value: Any) -> Any:
    """boto3 hands out B as bytes; a Lambda stream event carries it as base64 text."""
    if isinstance(value, dict):
        if set(value) == {"B"}:
            return {"B": base64.b64encode(bytes(value["B"])).decode()}
        return {k: _lambda_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lambda_json(v) for v in value]
    return value


class Stream:
    """Builds DynamoDB stream records (NEW_AND_OLD_IMAGES) from the table's real items."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.sequence = 100_000_000_000_000_000_000

    def item(self, pk: str, sk: str) -> dict[str, Any] | None:
        found = self.client.get_item(TableName=TABLE, Key={"pk": {"S": pk}, "sk": {"S": sk}}).get("Item")
        return _lambda_json(found) if found else None

    def record(self, event_name: str, pk: str, sk: str, *, new: dict[str, Any] | None = None,
               old: dict[str, Any] | None = None, ttl: bool = False) -> dict[str, Any]:
        self.sequence += 1
        data: dict[str, Any] = {
            "ApproximateCreationDateTime": 1735689600,
            "Keys": {"pk": {"S": pk}, "sk": {"S": sk}},
            "SequenceNumber": str(self.sequence),
            "SizeBytes": 512,
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        }
        if new is not None:
            data["NewImage"] = new
        if old is not None:
            data["OldImage"] = old
        record: dict[str, Any] = {
            "eventID": uuid.uuid4().hex,
            "eventName": event_name,
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": "us-east-1",
            "dynamodb": data,
            "eventSourceARN": f"arn:aws:dynamodb:us-east-1:000000000000:table/{TABLE}/stream/2025-01-01T00:00:00.000",
        }
        if ttl:
            record["userIdentity"] = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
        return record


def pk(user: ScopeRef) -> str:
    return f"T#{user.tenant_id}#U#{user.user_id}"


@pytest.fixture
def stream(dynamodb_client: Any) -> Stream:
    return Stream(dynamodb_client)


@pytest.fixture
def store(dynamodb_client: Any) -> DynamoMemoryStore:
    return DynamoMemoryStore(table_name=TABLE, client=dynamodb_client)


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def invoke(monkeypatch: pytest.MonkeyPatch, embedder: HashEmbedder) -> Any:
    """Invoke IndexerFunction with a given index (the composition is replaced, the handler is real)."""
    functions = LocalFunctions()

    def call(index: FakeIndex, records: list[dict[str, Any]]) -> Any:
        module = functions.container("IndexerFunction")
        monkeypatch.setattr(module, "get_indexer", lambda: Indexer(index=index, embedder=embedder))  # type: ignore[arg-type]
        return functions.invoke("IndexerFunction", {"Records": records})

    return call


def doc_key(memory: Memory) -> str:
    return f"{memory.tenant_id}|{memory.user_id}|{memory.memory_key}"


# ---- tests --------------------------------------------------------------------------------


def test_given_insert_modify_to_superseded_and_ttl_remove_then_index_holds_only_current(
        invoke, stream, store, user, embedder):
    old = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户学历本科", field="education")).memory
    old_image_before = stream.item(pk(user), f"MEM#{old.memory_key}")
    new = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户学历硕士", field="education")).memory
    expiring = store.save(user, NewMemory(memory_type=MemoryType.INTENT, content="用户本周想预约咨询")).memory
    expiring_image = stream.item(pk(user), f"MEM#{expiring.memory_key}")
    records = [
        stream.record("INSERT", pk(user), f"MEM#{old.memory_key}", new=old_image_before),
        stream.record("INSERT", pk(user), "FIELD#education", new=stream.item(pk(user), "FIELD#education")),
        stream.record("MODIFY", pk(user), "META", new=stream.item(pk(user), "META"), old=stream.item(pk(user), "META")),
        stream.record("INSERT", pk(user), f"MEM#{new.memory_key}", new=stream.item(pk(user), f"MEM#{new.memory_key}")),
        stream.record("MODIFY", pk(user), f"MEM#{old.memory_key}",
                      new=stream.item(pk(user), f"MEM#{old.memory_key}"), old=old_image_before),
        stream.record("INSERT", pk(user), f"MEM#{expiring.memory_key}", new=expiring_image),
        stream.record("REMOVE", pk(user), f"MEM#{expiring.memory_key}", old=expiring_image, ttl=True),
    ]
    index = FakeIndex()

    result = invoke(index, records)

    assert result == {"batchItemFailures": []}
    assert set(index.docs) == {doc_key(new)}
    indexed = index.docs[doc_key(new)]
    assert indexed.content == "用户学历硕士" and indexed.supersedes == old.memory_key
    # Saved without a vector: embedded with the configured model before indexing.
    assert indexed.embedding_model == embedder.model_id
    assert np.allclose(decode_vector(indexed.embedding or b""), embedder.embed_query("用户学历硕士"), atol=1e-2)


def test_given_one_record_fails_then_only_it_is_reported_and_the_others_are_applied(invoke, stream, store, user):
    a = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户年龄三十二岁")).memory
    b = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户在香港工作")).memory
    c = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户会说粤语")).memory
    records = [stream.record("INSERT", pk(user), f"MEM#{m.memory_key}",
                             new=stream.item(pk(user), f"MEM#{m.memory_key}")) for m in (a, b, c)]
    index = FakeIndex(fail_on=b.memory_key)

    result = invoke(index, records)

    assert result == {"batchItemFailures": [{"itemIdentifier": records[1]["dynamodb"]["SequenceNumber"]}]}
    assert set(index.docs) == {doc_key(a), doc_key(c)}


def test_given_a_vector_of_the_configured_model_then_it_is_indexed_as_stored(invoke, stream, store, user, embedder):
    vector = embedder.embed_query("用户持有香港身份证")
    saved = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户持有香港身份证",
                                       embedding=encode_vector(vector), embedding_model=embedder.model_id)).memory
    record = stream.record("INSERT", pk(user), f"MEM#{saved.memory_key}",
                           new=stream.item(pk(user), f"MEM#{saved.memory_key}"))
    index = FakeIndex()

    invoke(index, [record])

    assert embedder.embedded == []  # nothing re-embedded
    assert index.docs[doc_key(saved)].embedding == encode_vector(vector)


def test_given_an_api_delete_then_the_document_is_removed(invoke, stream, store, user):
    saved = store.save(user, NewMemory(memory_type=MemoryType.FACT, content="用户住在九龙")).memory
    image = stream.item(pk(user), f"MEM#{saved.memory_key}")
    index = FakeIndex()
    invoke(index, [stream.record("INSERT", pk(user), f"MEM#{saved.memory_key}", new=image)])
    store.delete(user, saved.memory_key)

    invoke(index, [stream.record("REMOVE", pk(user), f"MEM#{saved.memory_key}", old=image)])

    assert index.docs == {}


def test_stream_images_rebuild_the_memory_the_store_reads(stream, store, user):
    saved = store.save(user, NewMemory(memory_type=MemoryType.PREFERENCE, content="用户喜欢简洁的回答",
                                       metadata={"score": 0.5}, embedding=encode_vector(np.ones(4) / 2),
                                       embedding_model="m")).memory

    rebuilt = memory_from_image(stream.item(pk(user), f"MEM#{saved.memory_key}") or {})

    assert rebuilt == store.get(user, saved.memory_key)
    assert rebuilt.embedding == encode_vector(np.ones(4) / 2)


@pytest.mark.parametrize(("event", "sk", "new", "expected"), [
    ("INSERT", "MEM#mem_x", {}, SyncAction.UPSERT),
    ("MODIFY", "MEM#mem_x", {"superseded_at": {"S": "2025-01-01T00:00:00+00:00"}}, SyncAction.DELETE),
    ("REMOVE", "MEM#mem_x", None, SyncAction.DELETE),
    ("INSERT", "HASH#abc", {}, SyncAction.IGNORE),
    ("INSERT", "KW#visa#mem_x", {}, SyncAction.IGNORE),
    ("MODIFY", "META", {}, SyncAction.IGNORE),
])
def test_records_are_classified_by_item_kind_and_event(stream, event, sk, new, expected):
    assert classify(stream.record(event, "T#t#U#u", sk, new=new)) is expected


def test_the_indexer_is_declared_with_retries_bisection_partial_failures_and_a_dead_letter_queue():
    from local.template import resources

    function = resources()["IndexerFunction"]
    event = function["Properties"]["Events"]["MemoryStream"]
    props = event["Properties"]
    assert function["Condition"] == "UseOpenSearch" and event["Type"] == "DynamoDB"
    assert props["Stream"] == {"Fn::GetAtt": ["MemoryTable", "StreamArn"]}
    assert props["StartingPosition"] == "TRIM_HORIZON" and props["BisectBatchOnFunctionError"] is True
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # Retried by age, not count: an index outage shorter than the age limit loses no record.
    assert props["MaximumRetryAttempts"] == -1 and props["MaximumRecordAgeInSeconds"] == 3600
    assert props["DestinationConfig"]["OnFailure"]["Destination"] == {"Fn::GetAtt": ["IndexerDeadLetterQueue", "Arn"]}
    assert resources()["IndexerDeadLetterQueue"]["Properties"]["SqsManagedSseEnabled"] is True
