"""The composition root: builds the services with their adapters, once per container."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from agent_memory.ports import MemoryExtractor, MemoryStore
from agent_memory.services.load import LoadService
from agent_memory.services.save import SaveService
from agent_memory.settings import Settings, get_settings


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: MemoryStore
    save: SaveService
    load: LoadService


def build_services(
    settings: Settings,
    *,
    store: MemoryStore | None = None,
    extractor: MemoryExtractor | None = None,
    dynamodb_client: Any = None,
) -> Services:
    """Wire the services. Tests pass fakes or moto-backed clients; production passes nothing."""
    if store is None:
        from agent_memory.adapters.dynamodb.store import DynamoMemoryStore

        if dynamodb_client is None:
            import boto3

            dynamodb_client = boto3.client("dynamodb")
        store = DynamoMemoryStore(
            table_name=settings.memory_table_name, client=dynamodb_client, max_attempts=settings.store_max_attempts
        )

    @cache
    def extractor_provider() -> MemoryExtractor:
        if extractor is not None:
            return extractor
        from agent_memory.adapters.llm import build_extractor

        return build_extractor(settings)

    return Services(
        settings=settings,
        store=store,
        save=SaveService(store=store, extractor=extractor_provider),
        load=LoadService(store=store),
    )


@lru_cache(maxsize=1)
def get_services() -> Services:
    """The container's services, built on first use (never at import)."""
    return build_services(get_settings())
