"""LLM adapters. `build_extractor` imports only the chosen provider's SDK (cold starts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory.ports import MemoryExtractor
    from agent_memory.settings import Settings


def build_extractor(settings: Settings, *, http_client: Any = None, secrets_client: Any = None) -> MemoryExtractor:
    provider = settings.effective_llm_provider
    if provider == "offline":
        from agent_memory.adapters.llm.offline import OfflineExtractor

        return OfflineExtractor()
    from agent_memory.adapters.llm.claude import ClaudeExtractor, make_client

    client = make_client(settings, http_client=http_client, secrets_client=secrets_client)
    return ClaudeExtractor(
        client=client,
        model=settings.effective_llm_model,
        max_tokens=settings.llm_max_tokens,
        temperature=settings.llm_temperature,
    )


def build_narrator(settings: Settings, *, http_client: Any = None, secrets_client: Any = None) -> Any:
    """The summarize narrative writer: Claude when a provider is configured, else the offline template."""
    if settings.effective_llm_provider == "offline":
        from agent_memory.domain.profile import template_narrative

        return template_narrative
    from agent_memory.adapters.llm.claude import ClaudeNarrator, make_client

    client = make_client(settings, http_client=http_client, secrets_client=secrets_client)
    return ClaudeNarrator(client=client, model=settings.effective_llm_model)
