"""The composition root: one builder per graph, each built once per container on first use (never at import).

- `services.build_services`: every service with its adapters, for the API functions and the queue workers;
- `scheduler.build_rollup_scheduler`: the weekly schedule's fan-out, which needs only the rollup queue;
- `get_indexer`: the stream indexer's OpenSearch index and embedder.

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
def get_indexer() -> Indexer:
    """The stream indexer's adapters (the OpenSearch index and the embedder), and the erased scopes' tombstones
    (a change written before its scope was erased is not indexed)."""
    from agent_memory.adapters.dynamodb.erasure import DynamoScopeEraser
    from agent_memory.adapters.dynamodb.items import table_client
    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.adapters.opensearch.index import make_index
    from agent_memory.adapters.opensearch.sync import Indexer
    from agent_memory.services.erasure import ErasureService

    settings = get_settings()
    client = table_client(connect_seconds=settings.store_connect_timeout_seconds,
                          read_seconds=settings.store_read_timeout_seconds, attempts=settings.store_call_attempts)
    tombstones = ErasureService(table=DynamoScopeEraser(table_name=settings.memory_table_name, client=client,
                                                        shards=settings.rollup_shards))
    return Indexer(index=make_index(settings), embedder=build_embedder(settings), dropped=tombstones.dropped)
