"""Faults of the services we depend on, each with its defined outcome: a domain error the API answers
with a status and Retry-After, and nothing half-written."""

from __future__ import annotations

from typing import Any

import opensearchpy
import pytest
from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.adapters.opensearch.index import OpenSearchIndex
from agent_memory.api.http import RETRY_AFTER_SECONDS, STATUS_BY_ERROR
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.errors import Conflict, LlmUnavailable, SearchUnavailable, Throttled
from agent_memory.ports import CandidateQuery
from tests.conftest import TABLE

USER = ScopeRef(tenant_id="t", user_id="u")


class FailingSearch:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def search(self, **_: Any) -> dict[str, Any]:
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


class ThrottlingDynamo:
    """A DynamoDB client whose writes are throttled; reads pass through to the real (moto) client."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def transact_write_items(self, **_: Any) -> None:
        raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
                          "TransactWriteItems")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_given_dynamodb_throttling_then_a_save_is_throttled_and_nothing_is_written(dynamodb_client):
    store = DynamoMemoryStore(table_name=TABLE, client=ThrottlingDynamo(dynamodb_client))

    with pytest.raises(Throttled):
        store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户32岁", field="age"))

    assert DynamoMemoryStore(table_name=TABLE, client=dynamodb_client).all_current(USER) == []


@pytest.mark.parametrize(("error", "status", "retry_after"), [
    (Throttled, 429, "1"), (Conflict, 409, "1"), (LlmUnavailable, 503, "5"), (SearchUnavailable, 503, "5"),
])
def test_each_fault_maps_to_its_status_and_retry_after(error, status, retry_after):
    assert (STATUS_BY_ERROR[error], RETRY_AFTER_SECONDS[error]) == (status, retry_after)
