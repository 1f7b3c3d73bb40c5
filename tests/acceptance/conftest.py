"""Acceptance suite: every example and scenario of the design, in Chinese and in English, through the
deployed HTTP handlers (API Gateway events, JWT tenancy) over moto's DynamoDB and SQS, offline LLM.

`api` is the integration suite's LambdaApi (the real Lambda handlers) in its deployed environment
(JWT tenancy, the template's variables). moto, the queues and the warm containers are set up once for
the suite; every test starts with empty tables and queues, and a tenant of its own.

Domain packs: the deployment's pack is immigration, and the tenants `general-1`, `general-2`, ... are on the
general pack (MEMORY_TENANT_PACKS). A module whose tests do not depend on the pack lists the packs in `PACKS`:
each of its tests then runs once per pack, as a tenant of that pack; a test of such a module marked
`immigration_pack` (it reads the immigration pack's profile, schemes or synonyms) runs on that pack alone.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import boto3
import numpy as np
import pytest
from moto import mock_aws

from agent_memory.adapters.embeddings.local import LocalE5Embedder, OpenMpThreads
from local.runtime import LocalFunctions, create_local_resources, table_names
from local.template import create_tables
from tests.fakes import api_calls
from tests.integration.conftest import ApiResponse, LambdaApi, deployed_environment, reset_containers


class AcceptanceApi(LambdaApi):
    """LambdaApi whose requests carry this test's own tenant (a JWT claim) unless told otherwise."""

    def __init__(self, functions: LocalFunctions, tenant: str) -> None:
        super().__init__(functions)
        self.tenant = tenant

    def call(self, method: str, path: str, body: Any = None, *, tenant: str | None = "", query: str = "",
             raw_body: bytes | None = None) -> ApiResponse:
        return super().call(method, path, body, tenant=self.tenant if tenant == "" else tenant, query=query,
                            raw_body=raw_body)


@pytest.fixture(scope="package")
def aws_stack() -> Iterator[tuple[Any, Any, dict[str, str], LocalFunctions]]:
    """moto with the template's tables and queues, and the functions' warm containers, for the suite.

    Two things about the bundled embedder, for speed only: it embeds passages on one OpenMP thread, as it
    already does queries (one thread never waits at a barrier for a thread another process has
    preempted: on a busy machine that wait made each save take a second); and a text the suite has
    embedded before as a passage gets the vector it got then (the examples repeat across tests; the
    embedder is a pure function of the text). Queries are always embedded: the latency targets count them,
    and the latency tests write passages the suite has not seen."""
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(OpenMpThreads, "use_all", OpenMpThreads.use_one)
        _remember_vectors(patch)
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        queues = create_local_resources(dynamodb, sqs)
        reset_containers()
        yield dynamodb, sqs, queues, LocalFunctions()
        reset_containers()


def _remember_vectors(patch: pytest.MonkeyPatch) -> None:
    passages: dict[str, np.ndarray] = {}
    embed_documents = LocalE5Embedder.embed_documents

    def documents(self: LocalE5Embedder, texts: list[str]) -> np.ndarray:
        new = list(dict.fromkeys(t for t in texts if t not in passages))
        if new:
            passages.update(zip(new, embed_documents(self, new), strict=True))
        return embed_documents(self, []) if not texts else np.vstack([passages[t] for t in texts])

    patch.setattr(LocalE5Embedder, "embed_documents", documents)


@pytest.fixture
def lambda_env(monkeypatch: pytest.MonkeyPatch, aws_stack: tuple[Any, Any, dict[str, str], Any]) -> Iterator[Any]:
    """The integration suite's deployed environment on the shared stack: empty tables and queues for every
    test. The services (and their caches) stay warm between tests, as in a warm Lambda container; each test
    has a tenant of its own, so no cache entry can be shared. A test that changes settings (`configure`)
    gets services built for them, and the next test the default ones again."""
    dynamodb, sqs, queues, _ = aws_stack
    for name in table_names().values():
        dynamodb.delete_table(TableName=name)
    create_tables(dynamodb, table_names())
    for url in queues.values():  # (PurgeQueue is allowed once a minute)
        while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            sqs.delete_message_batch(QueueUrl=url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(batch)])
    for name, value in deployed_environment(queues).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MEMORY_TENANT_PACKS", json.dumps({f"general-{n}": "general"
                                                          for n in range(1, GENERAL_TENANTS + 1)}))
    yield dynamodb
    if api_calls.settings_changed():
        reset_containers()


_TENANTS = itertools.count(1)
# Tenants on the general pack: one a test, as many as the suite's pack-independent tests can use.
GENERAL_TENANTS = 400
_GENERAL_TENANTS = itertools.count(1)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    packs = getattr(metafunc.module, "PACKS", None)
    if packs and "pack" in metafunc.fixturenames:
        if metafunc.definition.get_closest_marker("immigration_pack"):
            packs = ("immigration",)
        metafunc.parametrize("pack", packs, indirect=True)


@pytest.fixture
def pack(request: pytest.FixtureRequest) -> str:
    """The test's tenant's pack: the deployment's (immigration) unless the module runs its tests on each pack."""
    return str(getattr(request, "param", "immigration"))


@pytest.fixture
def api(lambda_env: Any, aws_stack: tuple[Any, Any, dict[str, str], LocalFunctions], pack: str) -> AcceptanceApi:
    if pack == "general":
        tenant = f"general-{next(_GENERAL_TENANTS)}"
        assert int(tenant.rsplit("-", 1)[1]) <= GENERAL_TENANTS, "raise GENERAL_TENANTS"
        return AcceptanceApi(aws_stack[3], tenant=tenant)
    return AcceptanceApi(aws_stack[3], tenant=f"acme-{next(_TENANTS)}")


