"""The retriever a context block asks: a knowledge service's URL when one is set, else a local folder of
documents when one is set, else none. Each is imported only when chosen."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_memory.ports import Embedder, Retriever

if TYPE_CHECKING:
    from agent_memory.settings import Settings


def build_retriever(settings: Settings, *, url: str, directory: str = "",
                    embedder: Callable[[], Embedder | None] | None = None) -> Retriever | None:
    if url:
        from agent_memory.adapters.retriever_http import HttpRetriever

        return HttpRetriever(url=url, timeout_seconds=settings.context_retriever_timeout_seconds)
    if directory:
        from agent_memory.adapters.knowledge_folder import FolderRetriever

        return FolderRetriever(directory, max_bytes=settings.context_knowledge_dir_max_bytes, embedder=embedder)
    return None
