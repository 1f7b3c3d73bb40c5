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
from local.opensearch_node import OpenSearchNode
from local.opensearch_node import available as opensearch_node_available
from local.template import create_tables

TABLE = "agent-memory-test"


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


@pytest.fixture(scope="session")
def dynamodb_local() -> Iterator[DynamoDBLocal]:
    """AWS's DynamoDB Local (faithful transactions and concurrency, unlike in-process moto)."""
    if not dynamodb_local_available():
        skip_or_fail("DynamoDB Local not installed (make dynamodb-local) or no java")
    with DynamoDBLocal() as running:
        create_tables(running.client(), {"MemoryTable": TABLE})
        yield running


def skip_or_fail(reason: str) -> None:
    """Skip a test that needs a real engine which is not here, except under `make test` (REQUIRE_REAL_ENGINES),
    which installs them all: there a missing engine is a failure, never a quiet skip."""
    if os.environ.get("REQUIRE_REAL_ENGINES"):
        pytest.fail(f"{reason} (make test installs it: a real-engine test may not skip there)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def opensearch_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real OpenSearch 2.19 with the k-NN plugin: OPENSEARCH_URL if set, else one local node for the whole
    test run (local/opensearch_node.py; ~15 s to start)."""
    if os.environ.get("OPENSEARCH_URL"):
        yield os.environ["OPENSEARCH_URL"]
        return
    if not opensearch_node_available():
        skip_or_fail("the local OpenSearch node is not built (make opensearch-node) or no java")
    with OpenSearchNode(tmp_path_factory.mktemp("opensearch"), heap_mb=768) as node:
        yield node.url


@pytest.fixture
def dynamodb_local_client(dynamodb_local: DynamoDBLocal) -> object:
    return dynamodb_local.client()


@pytest.fixture
def dynamodb_local_store(dynamodb_local_client: object) -> DynamoMemoryStore:
    return DynamoMemoryStore(table_name=TABLE, client=dynamodb_local_client)
