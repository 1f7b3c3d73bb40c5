from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.domain.models import UserRef
from local.template import create_tables

TABLE = "agent-memory-test"
ROOT = Path(__file__).resolve().parent.parent
# `make dynamodb-local` puts AWS's DynamoDB Local jar here (from the npm package amplify-dynamodb-simulator).
DYNAMODB_LOCAL_DIR = Path(
    os.environ.get("DYNAMODB_LOCAL_DIR", ROOT / ".cache/dynamodb-local/node_modules/amplify-dynamodb-simulator/emulator")
)


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
def user() -> UserRef:
    return UserRef(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id=f"u-{uuid.uuid4().hex[:8]}")


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")


@pytest.fixture(scope="session")
def dynamodb_local_endpoint() -> Iterator[str]:
    """AWS's DynamoDB Local (faithful transactions and concurrency, unlike in-process moto)."""
    jar = DYNAMODB_LOCAL_DIR / "DynamoDBLocal.jar"
    if not jar.exists() or shutil.which("java") is None:
        pytest.skip("DynamoDB Local not installed (make dynamodb-local) or no java")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        ["java", f"-Djava.library.path={DYNAMODB_LOCAL_DIR / 'DynamoDBLocal_lib'}", "-jar", str(jar),
         "-inMemory", "-port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="local", aws_secret_access_key="local")
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client.list_tables()
                break
            except Exception:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        create_tables(client, {"MemoryTable": TABLE})
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def dynamodb_local_client(dynamodb_local_endpoint: str) -> object:
    return boto3.client("dynamodb", endpoint_url=dynamodb_local_endpoint, region_name="us-east-1",
                        aws_access_key_id="local", aws_secret_access_key="local")


@pytest.fixture
def dynamodb_local_store(dynamodb_local_client: object) -> DynamoMemoryStore:
    return DynamoMemoryStore(table_name=TABLE, client=dynamodb_local_client)
