"""Services over each search tier for contract tests: serverless (in the function), osmem-server (no kNN, an
index made before the `text` field) and a real OpenSearch node with the k-NN plugin."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.adapters.opensearch.admin import ensure_index
from agent_memory.adapters.opensearch.index import OpenSearchIndex
from agent_memory.bootstrap.services import build_services
from agent_memory.settings import Settings
from tests.conftest import TABLE
from tests.fakes.embedders import HashingEmbedder
from tests.fakes.opensearch import legacy_index

TIERS = ["serverless", "osmem", "opensearch"]
ALL_MODES = ("keyword", "semantic", "hybrid")


def services_on_tier(request: pytest.FixtureRequest, dynamodb_client: Any, alias_prefix: str
                     ) -> Iterator[tuple[Any, OpenSearchIndex | None, tuple[str, ...]]]:
    """The services on `request.param`'s tier, its index (None for serverless) and the search modes it runs; a
    real node's index is deleted afterwards."""
    settings = Settings(memory_table_name=TABLE, embedding_provider="none")
    index = None
    embedder: HashingEmbedder | None = HashingEmbedder()
    if request.param != "serverless":
        from opensearchpy import OpenSearch

        if request.param == "osmem":
            client = OpenSearch(hosts=[request.getfixturevalue("osmem_clone").url])
            embedder = None  # osmem-server cannot run kNN
        else:
            client = OpenSearch(hosts=[request.getfixturevalue("opensearch_url")])
        alias = f"{alias_prefix}-{uuid.uuid4().hex[:8]}"
        if request.param == "osmem":
            legacy_index(client, alias, None)
        else:
            ensure_index(client, alias, embedder.dimension if embedder else None)
        index = OpenSearchIndex(client=client, alias=alias)
    built = build_services(settings, dynamodb_client=dynamodb_client, embedder=embedder, index=index)
    yield built, index, ALL_MODES if embedder is not None else ("keyword",)
    if index is not None and request.param == "opensearch":
        index._client.indices.delete(index=f"{index._alias}-v*")
