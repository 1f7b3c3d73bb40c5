"""The queue workers' own graphs, for the workers that need less than the API's services: the access-statistics
worker (the store and the erased scopes' tombstones) and the rollup worker (the layers, the rollup queue, the
report writer and hot-memory refresher, the embedder on first use). Neither builds a search index, inject's pools
or the memory-tool store, so neither opens an OpenSearch client."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING

from agent_memory.bootstrap.erasure import erased_scopes
from agent_memory.bootstrap.scheduler import rollup_queue
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

if TYPE_CHECKING:  # names for the types only: the ports module imports numpy
    from agent_memory.domain.models import ScopeRef
    from agent_memory.ports import Embedder, HotMemoryRefresher, LayerStore, MemoryStore, WeeklyReportWriter
    from agent_memory.services.erasure import ErasureService
    from agent_memory.services.rollup import RollupService


@dataclass(frozen=True)
class AccessStatsGraph:
    """What the access-statistics worker uses: the store it counts reads in, and the erased scopes it skips."""

    store: MemoryStore
    erasure: ErasureService


def build_access_stats(settings: Settings, *, dynamodb_client: DynamoDBClient | None = None) -> AccessStatsGraph:
    from agent_memory.adapters.dynamodb.store import DynamoMemoryStore

    client = _table_client(settings) if dynamodb_client is None else dynamodb_client
    return AccessStatsGraph(
        store=DynamoMemoryStore(table_name=settings.memory_table_name, client=client,
                                max_attempts=settings.store_max_attempts, retention=settings.retention),
        erasure=erased_scopes(settings, client))


def build_rollup_worker(settings: Settings, *, dynamodb_client: DynamoDBClient | None = None) -> RollupService:
    """The rollup over the table's layers; the embedder (for the log's search) loads on first use."""
    from agent_memory.adapters.embeddings import build_embedder

    client = _table_client(settings) if dynamodb_client is None else dynamodb_client
    return rollup_service(settings, layer_store(settings, client), cache(lambda: build_embedder(settings)),
                          dropped=erased_scopes(settings, client).dropped)


def rollup_service(settings: Settings, layers: LayerStore, embedder: Callable[[], Embedder | None], *,
                   dropped: Callable[[ScopeRef, datetime | None], bool], writer: WeeklyReportWriter | None = None,
                   refresher: Callable[[], HotMemoryRefresher | None] | None = None) -> RollupService:
    """The rollup, its SQS queue, report writer and hot-memory refresher each built on first use only (`writer`
    and `refresher`: the ones tests hand in; else the configured LLM's)."""
    from agent_memory.services.rollup import RollupService

    @cache
    def report_writer() -> WeeklyReportWriter:
        if writer is not None:
            return writer
        from agent_memory.adapters.llm import build_report_writer

        return build_report_writer(settings)

    @cache
    def hot_memory_refresher() -> HotMemoryRefresher | None:
        if refresher is not None:
            return refresher()
        from agent_memory.adapters.llm import build_hot_memory_refresher

        return build_hot_memory_refresher(settings)

    return RollupService(layers=layers, queue=rollup_queue(settings), writer=report_writer,
                         refresher=hot_memory_refresher, embedder=embedder, timezone=settings.rollup_timezone,
                         refresh_messages=settings.hot_memory_refresh_messages,
                         page_size=settings.rollup_page_size, dropped=dropped)


def layer_store(settings: Settings, dynamodb_client: DynamoDBClient) -> LayerStore:
    from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore

    return DynamoLayerStore(table_name=settings.memory_table_name, client=dynamodb_client,
                            shards=settings.rollup_shards)


def _table_client(settings: Settings) -> DynamoDBClient:
    from agent_memory.adapters.dynamodb.items import report_unavailable_store, table_client

    client = table_client(connect_seconds=settings.store_connect_timeout_seconds,
                          read_seconds=settings.store_read_timeout_seconds, attempts=settings.store_call_attempts)
    report_unavailable_store(client)  # the table unreachable or failing: StoreUnavailable
    return client
