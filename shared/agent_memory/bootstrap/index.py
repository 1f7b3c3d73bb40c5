"""The search tier's graph: the index (in-process over the table, or OpenSearch), its snapshots, and the current
memories the serverless tier's cache serves to load_context, the profile and inject."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from agent_memory.domain.lifecycle.retention import TenantRetention
from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.ports import Embedder, IndexSnapshotStore, MemoryStore, SearchIndex
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

    from agent_memory.adapters.retained_index import RetainedIndex, RetainedPastIndex


def cached_memories(index: SearchIndex) -> Callable[[ScopeRef], list[Memory]] | None:
    """A tier that holds the users' current memories in the process (the serverless tier's version-keyed cache)
    also serves load_context, the profile and inject from them; None for a tier that holds none: those read the
    store."""
    cache = index.memory_cache()
    return None if cache is None else cache.current_memories


def retained(index: SearchIndex, retention: TenantRetention) -> RetainedIndex:
    """The tier with its tenants' retention applied to all it proposes and serves (adapters/retained_index.py)."""
    from agent_memory.adapters.retained_index import RetainedIndex

    return RetainedIndex(index, retention)


def build_index(settings: Settings, store: MemoryStore, embedder: Callable[[], Embedder | None],
                snapshots: IndexSnapshotStore | None = None) -> SearchIndex:
    if settings.search_tier == "opensearch":
        from agent_memory.adapters.fresh_writes import FreshWritesIndex
        from agent_memory.adapters.opensearch import make_index

        return FreshWritesIndex(make_index(settings), store=store, embedder=embedder,
                                window_seconds=settings.opensearch_fresh_writes_seconds)
    from agent_memory.adapters.in_process_index import InProcessIndex

    return InProcessIndex(store=store, embedder=embedder, max_users=settings.search_cache_users,
                          access_refresh_seconds=settings.search_access_refresh_seconds, snapshots=snapshots,
                          snapshot_min_memories=settings.search_snapshot_min_memories,
                          background=_snapshot_writer(snapshots, "index-snapshot"))


def index_snapshots(settings: Settings, dynamodb_client: DynamoDBClient | None, *, as_of: bool = False
                    ) -> IndexSnapshotStore | None:
    """Where a container's search indexes are saved: the serverless tier's index of the current memories, or
    (`as_of`) the as-of index of every version, which both tiers search, in a namespace of its own."""
    if not settings.search_snapshots or dynamodb_client is None or (settings.search_tier != "serverless"
                                                                    and not as_of):
        return None
    from agent_memory.adapters.dynamodb.index_snapshots import DynamoIndexSnapshotStore

    return DynamoIndexSnapshotStore(table_name=settings.memory_table_name, client=dynamodb_client,
                                    min_interval_seconds=settings.search_snapshot_min_interval_seconds,
                                    namespace="all#" if as_of else "")


def build_as_of_index(settings: Settings, store: MemoryStore, embedder: Callable[[], Embedder | None],
                      snapshots: IndexSnapshotStore | None) -> RetainedPastIndex:
    """Both tiers read the past from every version in the table (the OpenSearch index holds current ones only),
    with the tenants' retention applied: an expired version is read by nothing, not even as of then."""
    from agent_memory.adapters.as_of_index import AsOfIndex
    from agent_memory.adapters.retained_index import RetainedPastIndex

    return RetainedPastIndex(AsOfIndex(store=store, embedder=embedder, snapshots=snapshots,
                                       snapshot_min_memories=settings.search_snapshot_min_memories,
                                       background=_snapshot_writer(snapshots, "as-of-snapshot")),
                             settings.retention)


def _snapshot_writer(snapshots: IndexSnapshotStore | None, name: str) -> ThreadPoolExecutor | None:
    """One thread that saves an index's snapshots off the request's path (none without a snapshot store)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=name) if snapshots is not None else None
