"""The composition root: one builder per graph, each built once per container on first use (never at import).

- `services.build_services`: every service with its adapters, for the API functions and the queue workers;
- `scheduler.build_rollup_scheduler`: the weekly schedule's fan-out, which needs only the rollup queue;
- `get_indexer`: the stream indexer's OpenSearch index and embedder;
- `workers.build_access_stats`, `workers.build_rollup_worker`: the access-statistics and rollup workers' graphs,
  with no search index, inject pools or OpenSearch client.

Importing this package imports none of them: a getter imports its graph's module on its first call, so the
schedule's function never loads the search, inject or model modules.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from agent_memory.settings import get_settings

if TYPE_CHECKING:
    from agent_memory.adapters.opensearch.sync import Indexer
    from agent_memory.bootstrap.services import Services
    from agent_memory.bootstrap.workers import AccessStatsGraph
    from agent_memory.services.rollup import RollupService
    from agent_memory.services.rollup_schedule import RollupScheduler


@lru_cache(maxsize=1)
def get_services() -> Services:
    """The container's services."""
    from agent_memory.bootstrap.services import build_services

    return build_services(get_settings())


@lru_cache(maxsize=1)
def get_rollup_scheduler() -> RollupScheduler:
    """The weekly schedule's planner."""
    from agent_memory.bootstrap.scheduler import build_rollup_scheduler

    return build_rollup_scheduler(get_settings())


@lru_cache(maxsize=1)
def get_access_stats() -> AccessStatsGraph:
    """The access-statistics worker's store and erased scopes."""
    from agent_memory.bootstrap.workers import build_access_stats

    return build_access_stats(get_settings())


@lru_cache(maxsize=1)
def get_rollup_worker() -> RollupService:
    """The rollup worker's rollup."""
    from agent_memory.bootstrap.workers import build_rollup_worker

    return build_rollup_worker(get_settings())


@lru_cache(maxsize=1)
def get_indexer() -> Indexer:
    """The stream indexer's adapters (the OpenSearch index and the embedder), and the erased scopes' tombstones
    (a change written before its scope was erased is not indexed)."""
    from agent_memory.adapters.dynamodb.items import table_client
    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.adapters.opensearch.index import make_index
    from agent_memory.adapters.opensearch.sync import Indexer
    from agent_memory.bootstrap.erasure import erased_scopes

    settings = get_settings()
    client = table_client(connect_seconds=settings.store_connect_timeout_seconds,
                          read_seconds=settings.store_read_timeout_seconds, attempts=settings.store_call_attempts)
    return Indexer(index=make_index(settings), embedder=build_embedder(settings),
                   dropped=erased_scopes(settings, client).dropped)
