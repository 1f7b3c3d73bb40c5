"""Inject's wiring: the retrievers, the block sources and the block cache."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.ports import ContextCache, Embedder, MemoryStore, Retriever
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

    from agent_memory.services.blocks.base import BlockSource
    from agent_memory.services.memory_layers import MemoryLayersService
    from agent_memory.services.search import SearchService


@dataclass(frozen=True)
class Retrievers:
    """The configured retrievers (an HTTP service, else a local folder, else none), built once: the
    memory layers ask the SOP and protocol ones for an intent, inject's blocks all four."""

    knowledge: Retriever | None
    experiences: Retriever | None
    sop: Retriever | None
    protocol: Retriever | None


def intent_retrievers(settings: Settings, embedder: Callable[[], Embedder | None]) -> Retrievers:
    from agent_memory.adapters.retrievers import build_retriever

    def retriever(url: str, directory: str = "") -> Retriever | None:
        return build_retriever(settings, url=url, directory=directory, embedder=embedder)

    return Retrievers(knowledge=retriever(settings.context_knowledge_url),
                       experiences=retriever(settings.context_experience_url),
                       sop=retriever(settings.context_sop_url, settings.context_sop_dir),
                       protocol=retriever(settings.context_protocol_url, settings.context_protocol_dir))


def context_sources(settings: Settings, store: MemoryStore, search: SearchService,
                     memories: Callable[[ScopeRef], list[Memory]] | None,
                     memory_layers: MemoryLayersService, retrievers: Retrievers) -> list[BlockSource]:
    from agent_memory.services.blocks.registry import default_sources

    triggers = settings.knowledge_triggers
    return default_sources(
        store=store, search=search, current_memories=memories,
        knowledge=retrievers.knowledge, protocol=retrievers.protocol, experiences=retrievers.experiences,
        knowledge_triggers=(lambda tenant: settings.pack_for(tenant).knowledge_triggers) if triggers is None
        else triggers,
        assessment=lambda tenant: settings.pack_for(tenant).assessment,
        top_memories=settings.context_top_memories, relevant_memories=settings.context_relevant_memories,
        relevant_search_mode=settings.context_relevant_search_mode or None,
        importance_margin=settings.context_importance_margin, memory_layers=memory_layers,
        user_memory_max_share=settings.context_user_memory_max_share,
        user_memory_max_tokens=settings.context_user_memory_max_tokens,
        duplicates=settings.duplicate_rule,
        always_relevant=lambda tenant: settings.pack_for(tenant).always_relevant_fields,
    )


def context_cache(settings: Settings, dynamodb_client: DynamoDBClient | None) -> ContextCache:
    from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache

    shared = None
    if settings.context_cache_shared and dynamodb_client is not None:
        from agent_memory.adapters.dynamodb.context_cache import DynamoContextCache

        shared = DynamoContextCache(table_name=settings.memory_table_name, client=dynamodb_client)
    return LayeredContextCache(local=LocalContextCache(max_entries=settings.context_cache_local_entries),
                               shared=shared,
                               writer=ThreadPoolExecutor(max_workers=1, thread_name_prefix="context-cache-write")
                               if shared is not None else None)
