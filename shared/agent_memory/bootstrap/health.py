"""The health check's wiring (GET /health), and the once-built embedder it reads the state of."""

from __future__ import annotations

from collections.abc import Callable
from threading import Lock
from typing import TYPE_CHECKING

from agent_memory.domain.health import EmbedderHealth
from agent_memory.ports import Embedder, TableProbe
from agent_memory.services.health import HealthService
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient


class BuiltOnce[T]:
    """`build` run by the first call only, one caller at a time (inject's query prefetch and its sources may ask
    first at once: `cache` alone would let each build an embedder, each with its own query cache and, locally,
    its own model). `peek` tells what was built without building it (the health check)."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._built: tuple[T] | None = None
        self._lock = Lock()

    def __call__(self) -> T:
        with self._lock:
            if self._built is None:
                self._built = (self._build(),)
            return self._built[0]

    def peek(self) -> tuple[bool, T | None]:
        """(built, what was built): (False, None) until the first call has built it."""
        built = self._built
        return (False, None) if built is None else (True, built[0])


def health_service(settings: Settings, dynamodb_client: DynamoDBClient | None, embedder: BuiltOnce[Embedder | None],
                   probe: TableProbe | None) -> HealthService:
    """The table's probe (given, else a read through the table client; none in a test without a table) and the
    embedder's state, read without building or loading it."""
    from agent_memory.adapters.embeddings import embedder_health

    if probe is None and dynamodb_client is not None:
        from agent_memory.adapters.dynamodb.table_probe import DynamoTableProbe

        probe = DynamoTableProbe(table_name=settings.memory_table_name, client=dynamodb_client)

    def embedder_state() -> EmbedderHealth:
        built, current = embedder.peek()
        return embedder_health(settings, current, built=built)

    search = None
    if settings.search_tier == "opensearch":
        from agent_memory.adapters.opensearch.index import make_client
        from agent_memory.adapters.opensearch.probe import OpenSearchProbe

        search = OpenSearchProbe(BuiltOnce(lambda: make_client(settings)), settings.opensearch_index)
    return HealthService(tables={"MemoryTable": probe} if probe is not None else {}, embedder=embedder_state,
                         search=search, pack=settings.memory_pack)
