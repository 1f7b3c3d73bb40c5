"""Faults of the services we depend on, each with its defined outcome: a domain error the API answers
with a status and Retry-After, and nothing half-written."""

from __future__ import annotations

import json
from typing import Any

import opensearchpy
import pytest

from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.opensearch.index import OpenSearchIndex
from agent_memory.api.http import RETRY_AFTER_SECONDS, STATUS_BY_ERROR, new_resolver
from agent_memory.domain.models import MemoryType, NewMemory, SaveOutcome, ScopeRef
from agent_memory.errors import BatchInterrupted, Conflict, LlmUnavailable, SearchUnavailable, Throttled
from agent_memory.ports import CandidateQuery
from agent_memory.services.save import SaveService
from tests.conftest import TABLE
from tests.fakes.dynamodb_faults import ONE_TRANSACTION_EACH, ThrottlingAfter, ThrottlingDynamo

USER = ScopeRef(tenant_id="t", user_id="u")


class FailingSearch:
    """An OpenSearch client whose every call (a search, the mapping check before it) fails with `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.indices = self

    def search(self, **_: Any) -> dict[str, Any]:
        raise self.error

    def get_mapping(self, **_: Any) -> dict[str, Any]:
        raise self.error


@pytest.mark.parametrize(("error", "expected"), [
    (opensearchpy.ConnectionError("N/A", "connection refused", Exception("refused")), SearchUnavailable),
    (opensearchpy.ConnectionTimeout("TIMEOUT", "timed out", Exception("slow")), SearchUnavailable),
    (opensearchpy.TransportError(503, "unavailable", {}), SearchUnavailable),
    (opensearchpy.TransportError(429, "too many requests", {}), Throttled),
])
def test_given_opensearch_down_or_throttling_then_search_is_a_clear_domain_error(error, expected):
    index = OpenSearchIndex(client=FailingSearch(error), alias="agent-memory")

    with pytest.raises(expected):
        index.candidates(USER, CandidateQuery(text="高才通", terms=["高才"], vector=None))


def test_given_dynamodb_throttling_then_a_save_is_throttled_and_nothing_is_written(dynamodb_client):
    store = DynamoMemoryStore(table_name=TABLE, client=ThrottlingDynamo(dynamodb_client))

    with pytest.raises(Throttled):
        store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户32岁", field="age"))

    assert DynamoMemoryStore(table_name=TABLE, client=dynamodb_client).all_current(USER) == []


def test_given_throttling_mid_batch_then_the_error_names_the_items_written_and_a_resend_stores_nothing_twice(
        dynamodb_client):
    batch = [NewMemory(memory_type=MemoryType.FACT, content=f"事实{i}", field=f"slot_{i}",
                       keywords=ONE_TRANSACTION_EACH) for i in range(4)]
    interrupted = SaveService(store=DynamoMemoryStore(table_name=TABLE, client=ThrottlingAfter(dynamodb_client, 2)),
                              extractor=lambda: None)  # type: ignore[arg-type]

    with pytest.raises(BatchInterrupted) as raised:
        interrupted.save_batch(USER, batch)

    details = raised.value.details
    assert isinstance(raised.value.cause, Throttled)
    assert [w["index"] for w in details["written"]] == [0, 1]
    assert details["not_written"] == [2, 3]
    store = DynamoMemoryStore(table_name=TABLE, client=dynamodb_client)
    assert sorted(m.memory_key for m in store.all_current(USER)) == sorted(w["memory_key"] for w in details["written"])

    resent = SaveService(store=store, extractor=lambda: None).save_batch(USER, batch)  # type: ignore[arg-type]

    assert [r.outcome for r in resent] == [SaveOutcome.DUPLICATE] * 2 + [SaveOutcome.CREATED] * 2
    assert len(store.all_current(USER)) == 4


def test_an_interrupted_batch_answers_with_its_causes_status_and_says_what_was_written():
    app = new_resolver()

    @app.post("/batch")
    def _batch() -> None:
        raise BatchInterrupted("slow down after 1 of 2 items were written", cause=Throttled("slow down"),
                               details={"cause": "throttled", "written": [{"index": 0}], "not_written": [1]})

    response = app.resolve({"version": "2.0", "routeKey": "POST /batch", "rawPath": "/batch", "headers": {},
                            "requestContext": {"stage": "$default", "http": {"method": "POST", "path": "/batch"}}},
                           None)

    assert response["statusCode"] == 429
    assert response["headers"]["Retry-After"] == "1"
    body = json.loads(response["body"])
    assert body["error"]["code"] == "batch_interrupted"
    assert body["error"]["details"]["not_written"] == [1]


@pytest.mark.parametrize(("error", "status", "retry_after"), [
    (Throttled, 429, "1"), (Conflict, 409, "1"), (LlmUnavailable, 503, "5"), (SearchUnavailable, 503, "5"),
])
def test_each_fault_maps_to_its_status_and_retry_after(error, status, retry_after):
    assert (STATUS_BY_ERROR[error], RETRY_AFTER_SECONDS[error]) == (status, retry_after)
