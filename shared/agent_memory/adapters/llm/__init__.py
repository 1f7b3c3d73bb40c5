"""LLM adapters. `build_extractor` imports only the chosen provider's SDK (cold starts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from types_boto3_secretsmanager.client import SecretsManagerClient

    from agent_memory.domain.inject.conversation import Message
    from agent_memory.domain.packs import DomainPack
    from agent_memory.domain.profile.profile import Profile
    from agent_memory.ports import Embedder, HotMemoryRefresher, MemoryExtractor, TokenCounter, WeeklyReportWriter
    from agent_memory.settings import Settings


def build_extractor(settings: Settings, *, pack: DomainPack | None = None, http_client: Any = None,
                    secrets_client: SecretsManagerClient | None = None, embedder: Embedder | None = None
                    ) -> MemoryExtractor:
    """The extractor of a domain pack (default: the deployment's pack): its offline rules, or Claude with its
    prompt. Offline, a pack with exemplars reads what its rules leave alone by them, given the embedder they were
    calibrated on."""
    pack = pack or settings.packs.default
    provider = settings.effective_llm_provider
    if provider == "offline":
        from agent_memory.extraction import OfflineExtractor
        from agent_memory.extraction.exemplars import pack_reader

        exemplars = pack.extraction.exemplars
        reader = pack_reader(exemplars, embedder) if exemplars and embedder is not None else None
        return OfflineExtractor(pack.extraction, reader=reader, list_fields=pack.list_fields)
    from agent_memory.adapters.llm.claude import ClaudeExtractor, make_client

    client = make_client(settings, http_client=http_client, secrets_client=secrets_client)
    return ClaudeExtractor(
        client=client,
        model=settings.effective_llm_model,
        max_tokens=settings.llm_max_tokens,
        temperature=settings.llm_temperature,
        pack=pack,
    )


def build_narrator(settings: Settings, *, http_client: Any = None,
                   secrets_client: SecretsManagerClient | None = None
                   ) -> Callable[[Profile], str]:
    """The summarize narrative writer: Claude when a provider is configured, else the offline template."""
    if settings.effective_llm_provider == "offline":
        from agent_memory.domain.profile.profile import template_narrative

        return template_narrative
    from agent_memory.adapters.llm.claude import ClaudeNarrator, make_client

    client = make_client(settings, http_client=http_client, secrets_client=secrets_client)
    return ClaudeNarrator(client=client, model=settings.effective_llm_model)


def build_conversation_summarizer(settings: Settings, *, http_client: Any = None,
                                  secrets_client: SecretsManagerClient | None = None
                                  ) -> Callable[[list[Message]], str]:
    """Compaction's early-turn summary: Claude when a provider is configured, else extractive (offline)."""
    from agent_memory.domain.inject.summary import extractive_summary

    if settings.effective_llm_provider == "offline":
        return extractive_summary
    from agent_memory.adapters.llm.claude import ClaudeConversationSummarizer, make_client

    client = make_client(settings, http_client=http_client, secrets_client=secrets_client)
    return ClaudeConversationSummarizer(client=client, model=settings.effective_llm_model, fallback=extractive_summary)


def build_token_counter(settings: Settings, *, http_client: Any = None,
                        secrets_client: SecretsManagerClient | None = None
                        ) -> TokenCounter | None:
    """Anthropic's count_tokens when the anthropic provider is configured (or asked for); else None."""
    mode = settings.context_token_counter
    if mode == "estimate" or (mode == "auto" and settings.effective_llm_provider != "anthropic"):
        return None
    from agent_memory.adapters.llm.claude import AnthropicTokenCounter, make_client

    client = make_client(settings, http_client=http_client, secrets_client=secrets_client)
    return AnthropicTokenCounter(client=client, model=settings.effective_llm_model)


def build_report_writer(settings: Settings, *, http_client: Any = None,
                        secrets_client: SecretsManagerClient | None = None
                        ) -> WeeklyReportWriter:
    """The weekly report's writer: Claude when a provider is configured, else extractive (offline)."""
    if settings.effective_llm_provider == "offline":
        from agent_memory.domain.tiers.reports import ExtractiveReportWriter

        return ExtractiveReportWriter()
    from agent_memory.adapters.llm.claude import make_client
    from agent_memory.adapters.llm.reports import ClaudeWeeklyReportWriter

    client = make_client(settings, http_client=http_client, secrets_client=secrets_client)
    return ClaudeWeeklyReportWriter(client=client, model=settings.effective_llm_model,
                                    max_tokens=max(settings.llm_max_tokens, 2000), temperature=settings.llm_temperature)


def build_hot_memory_refresher(settings: Settings, *, http_client: Any = None,
                               secrets_client: SecretsManagerClient | None = None
                               ) -> HotMemoryRefresher | None:
    """The hot-memory refresh needs an LLM: None offline (the refresh is then skipped)."""
    if settings.effective_llm_provider == "offline":
        return None
    from agent_memory.adapters.llm.claude import make_client
    from agent_memory.adapters.llm.reports import ClaudeHotMemoryRefresher

    client = make_client(settings, http_client=http_client, secrets_client=secrets_client)
    return ClaudeHotMemoryRefresher(client=client, model=settings.effective_llm_model,
                                    max_tokens=max(settings.llm_max_tokens, 1500), temperature=settings.llm_temperature)
