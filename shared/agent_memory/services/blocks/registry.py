"""The block sources inject fetches, in the order blocks keep within a priority."""

from __future__ import annotations

from collections.abc import Callable

from agent_memory.domain.inject.memory_selection import DEFAULT_IMPORTANCE_MARGIN, DEFAULT_MAX_SHARE, DEFAULT_MAX_TOKENS
from agent_memory.domain.lifecycle.duplicates import DuplicateRule
from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.domain.search.search import SearchMode
from agent_memory.ports import MemoryStore, Retriever
from agent_memory.services.blocks.base import BlockSource
from agent_memory.services.blocks.memory_layers import HotMemorySource, IntentContextSource
from agent_memory.services.blocks.request import (
    ActiveAgentsHistorySource,
    AssessmentResultSource,
    CollectedInfoSource,
    ConversationStatsSource,
    DeviceContextSource,
    Wording,
)
from agent_memory.services.blocks.retrieved import (
    DEFAULT_KNOWLEDGE_TRIGGERS,
    RelevantKnowledgeSource,
    SimilarExperiencesSource,
    Triggers,
)
from agent_memory.services.blocks.user_memory import UserMemorySource
from agent_memory.services.memory_layers import MemoryLayersService
from agent_memory.services.search import SearchService


def default_sources(
    *,
    store: MemoryStore,
    search: SearchService,
    current_memories: Callable[[ScopeRef], list[Memory]] | None,
    knowledge: Retriever | None,
    experiences: Retriever | None,
    memory_layers: MemoryLayersService,
    knowledge_triggers: Triggers = DEFAULT_KNOWLEDGE_TRIGGERS,
    top_memories: int = 5,
    relevant_memories: int = 3,
    relevant_search_mode: SearchMode | None = None,
    importance_margin: int = DEFAULT_IMPORTANCE_MARGIN,
    user_memory_max_share: float = DEFAULT_MAX_SHARE,
    user_memory_max_tokens: int = DEFAULT_MAX_TOKENS,
    assessment: Wording | None = None,
    protocol: Retriever | None = None,
    duplicates: DuplicateRule | None = None,
    always_relevant: Callable[[str], frozenset[str]] | None = None,
) -> list[BlockSource]:
    """Hot memory first, the request's eight block types, then the intent's context. Without a knowledge
    retriever of its own, relevant_knowledge searches the `protocol` one (the protocol knowledge base) for a
    message with one of the tenant's trigger words, except a protocol question, whose intent context has it."""
    return [
        HotMemorySource(layers=memory_layers, store=store),
        UserMemorySource(store=store, search=search, current_memories=current_memories, top_n=top_memories,
                         relevant_n=relevant_memories, search_mode=relevant_search_mode,
                         importance_margin=importance_margin, max_share=user_memory_max_share,
                         max_tokens=user_memory_max_tokens, duplicates=duplicates, always_relevant=always_relevant),
        CollectedInfoSource(wording=assessment),
        ConversationStatsSource(),
        AssessmentResultSource(wording=assessment),
        RelevantKnowledgeSource(retriever=knowledge, triggers=knowledge_triggers, protocol=protocol),
        SimilarExperiencesSource(retriever=experiences),
        DeviceContextSource(),
        ActiveAgentsHistorySource(),
        IntentContextSource(layers=memory_layers),
    ]
