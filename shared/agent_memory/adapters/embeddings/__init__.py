"""Embedding adapters. `build_embedder` imports only the chosen provider (cold starts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory.ports import Embedder
    from agent_memory.settings import Settings


def build_embedder(settings: Settings, *, bedrock_client: Any = None) -> Embedder | None:
    """The configured embedder, or None when embeddings are switched off (keyword search only)."""
    if settings.embedding_provider == "none":
        return None
    from agent_memory.adapters.embeddings.query_cache import QueryCachingEmbedder

    if settings.embedding_provider == "bedrock":
        from agent_memory.adapters.embeddings.bedrock import TitanEmbedder

        return QueryCachingEmbedder(TitanEmbedder(
            client=bedrock_client,
            model_id=settings.embedding_model or "amazon.titan-embed-text-v2:0",
            dimension=settings.embedding_dimensions,
            region=settings.aws_region,
        ), max_queries=settings.query_embedding_cache_entries)
    from agent_memory.adapters.embeddings.local import LocalE5Embedder

    return QueryCachingEmbedder(LocalE5Embedder(), max_queries=settings.query_embedding_cache_entries)
