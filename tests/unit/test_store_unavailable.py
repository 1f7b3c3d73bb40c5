"""The table unreachable or failing: every DynamoDB call raises StoreUnavailable (503 with Retry-After), never
an SDK error the API would answer 500, and a batch it stops part-way says what was written."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from agent_memory.adapters.dynamodb.items import report_unavailable_store
from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.api.http import RETRY_AFTER_SECONDS, STATUS_BY_ERROR, new_resolver
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.errors import BatchInterrupted, StoreUnavailable
from agent_memory.services.save import SaveService
from tests.conftest import TABLE
from tests.fakes.dynamodb_faults import ONE_TRANSACTION_EACH

USER = ScopeRef(tenant_id="t", user_id="u")
ENDPOINT = "http://127.0.0.1:8000"


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Any:
        yield self._data


def _server_error(code: str) -> AWSResponse:
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "try again"}).encode()
    return AWSResponse(ENDPOINT, 500 if code == "InternalServerError" else 503, {"x-amzn-requestid": "r"}, _Body(body))


FAULTS = {
    "EndpointConnectionError": lambda: EndpointConnectionError(endpoint_url=ENDPOINT),
    "ConnectionClosedError": lambda: ConnectionClosedError(endpoint_url=ENDPOINT),
    "ReadTimeoutError": lambda: ReadTimeoutError(endpoint_url=ENDPOINT),
    "ConnectTimeoutError": lambda: ConnectTimeoutError(endpoint_url=ENDPOINT),
    "InternalServerError": lambda: _server_error("InternalServerError"),
    "ServiceUnavailable": lambda: _server_error("ServiceUnavailable"),
}


def failing_client(fault: str, *, after: int = 0) -> Any:
    """A real botocore client whose requests past the first `after` transactions meet `fault` where the HTTP
    request would leave (raised, or answered by the server), after botocore's own retries; the first `after`
    go to moto's table."""
    client = boto3.client("dynamodb", region_name="us-east-1", config=Config(retries={"max_attempts": 1}))
    allowed = {"left": after}

    def send(request: Any, **_: Any) -> AWSResponse | None:
        if request.headers.get("X-Amz-Target", b"").endswith(b"TransactWriteItems") and allowed["left"] > 0:
            allowed["left"] -= 1
            return None
        if after and not request.headers.get("X-Amz-Target", b"").endswith(b"TransactWriteItems"):
            return None  # reads still work: the table goes away between two writes of the batch
        made = FAULTS[fault]()
        if isinstance(made, Exception):
            raise made
        return made

    client.meta.events.register_first("before-send.dynamodb", send)  # before moto answers it
    report_unavailable_store(client)
    return client


@pytest.mark.parametrize("fault", list(FAULTS))
def test_given_the_table_unreachable_or_failing_then_reads_and_saves_raise_store_unavailable(dynamodb_client, fault):
    store = DynamoMemoryStore(table_name=TABLE, client=failing_client(fault))

    with pytest.raises(StoreUnavailable):
        store.all_current(USER)
    with pytest.raises(StoreUnavailable):
        store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户32岁", field="age"))

    assert DynamoMemoryStore(table_name=TABLE, client=dynamodb_client).all_current(USER) == []


def test_given_a_client_that_is_not_botocores_then_registering_changes_nothing():
    report_unavailable_store(None)
    report_unavailable_store(object())


def test_given_the_table_gone_mid_batch_then_the_batch_answers_503_naming_what_was_written(dynamodb_client):
    batch = [NewMemory(memory_type=MemoryType.FACT, content=f"事实{i}", field=f"slot_{i}",
                       keywords=ONE_TRANSACTION_EACH) for i in range(4)]
    service = SaveService(
        store=DynamoMemoryStore(table_name=TABLE, client=failing_client("EndpointConnectionError", after=2)),
        extractor=lambda: None,  # type: ignore[arg-type,return-value]
    )

    with pytest.raises(BatchInterrupted) as raised:
        service.save_batch(USER, batch)

    assert isinstance(raised.value.cause, StoreUnavailable)
    assert raised.value.details["not_written"] == [2, 3]
    stored = DynamoMemoryStore(table_name=TABLE, client=dynamodb_client).all_current(USER)
    assert sorted(m.content for m in stored) == ["事实0", "事实1"]


def test_store_unavailable_answers_503_with_retry_after():
    app = new_resolver()

    @app.get("/memories")
    def _memories() -> None:
        raise StoreUnavailable("the memory store is unavailable")

    response = app.resolve(
        {
            "version": "2.0",
            "routeKey": "GET /memories",
            "rawPath": "/memories",
            "headers": {},
            "requestContext": {"stage": "$default", "http": {"method": "GET", "path": "/memories"}},
        },
        None,
    )

    assert (response["statusCode"], response["headers"]["Retry-After"]) == (503, RETRY_AFTER_SECONDS[StoreUnavailable])
    assert json.loads(response["body"])["error"]["code"] == "store_unavailable"
    assert STATUS_BY_ERROR[StoreUnavailable] == 503
