from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.domain.models import ScopeRef
from local.dynamodb_local import DynamoDBLocal
from local.dynamodb_local import available as dynamodb_local_available
from local.template import create_tables

TABLE = "agent-memory-test"


@pytest.fixture(autouse=True)
def _offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach AWS: fake credentials, a fixed region, no endpoint from the developer's shell."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "ANTHROPIC_API_KEY", "LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")


@pytest.fixture
def dynamodb_client() -> Iterator[object]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tables(client, {"MemoryTable": TABLE})
        yield client


@pytest.fixture
def dynamo_store(dynamodb_client: object) -> DynamoMemoryStore:
    return DynamoMemoryStore(table_name=TABLE, client=dynamodb_client)


@pytest.fixture
def user() -> ScopeRef:
    return ScopeRef(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id=f"u-{uuid.uuid4().hex[:8]}")


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")


@pytest.fixture(scope="session")
def dynamodb_local() -> Iterator[DynamoDBLocal]:
    """AWS's DynamoDB Local (faithful transactions and concurrency, unlike in-process moto)."""
    if not dynamodb_local_available():
        pytest.skip("DynamoDB Local not installed (make dynamodb-local) or no java")
    with DynamoDBLocal() as running:
        create_tables(running.client(), {"MemoryTable": TABLE})
        yield running


@pytest.fixture
def dynamodb_local_client(dynamodb_local: DynamoDBLocal) -> object:
    return dynamodb_local.client()


@pytest.fixture
def dynamodb_local_store(dynamodb_local_client: object) -> DynamoMemoryStore:
    return DynamoMemoryStore(table_name=TABLE, client=dynamodb_local_client)
