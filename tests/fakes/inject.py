"""Helpers for the inject service's tests: a fixed clock, users, the services over the in-memory store, requests,
the injected context's text and memory layers with nothing in them."""

from __future__ import annotations

from typing import Any

from agent_memory.api.inject import InjectionRequest
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.settings import Settings
from tests.fakes.services import services_over_fakes
from tests.fakes.store import InMemoryMemoryStore

NOW = 1_795_309_200.0  # 2026-11-22T01:00:00Z


def user(name: str) -> ScopeRef:
    """A user of the inject tests' own tenant."""
    return ScopeRef(tenant_id="t-inject", user_id=name)


def build(store: InMemoryMemoryStore | None = None, **settings: Any):
    """The services over the in-memory store, without embedder or synonyms."""
    services = services_over_fakes(Settings(**settings), store=store or InMemoryMemoryStore(), embedder=None)
    return services


def remember(store: InMemoryMemoryStore, who: ScopeRef, content: str, importance: int = 80,
             memory_type: MemoryType = MemoryType.FACT) -> None:
    store.save(who, NewMemory(memory_type=memory_type, content=content, importance=importance))


def big_state() -> dict[str, Any]:
    """A consulting state of twenty long fields: a P0 block big enough to press on a budget."""
    return {"collectedInfo": {f"field{i}": "value " * 20 for i in range(20)}, "currentStageId": "info_collection"}


def request(**fields: Any) -> InjectionRequest:
    fields.setdefault("user_id", "u")
    fields.setdefault("conversation_id", "c-1")
    return InjectionRequest.model_validate(fields)


def context_text(result: Any) -> str:
    return result.messages[0]["content"] if result.injected_contexts else ""


def empty_layers(retrievers: dict[str, Any] | None = None) -> Any:
    """The memory layers with nothing logged, no reports and no hot memory, asking `retrievers` (by name:
    `sop`, `protocol`) for an intent's retrieval."""
    from agent_memory.services.conversation_log import ConversationLogService
    from agent_memory.services.memory_layers import MemoryLayersService
    from tests.fakes.layer_store import FakeLayerStore

    store = FakeLayerStore()
    return MemoryLayersService(layers=store, log=ConversationLogService(layers=store, embedder=lambda: None),
                               embedder=lambda: None, question_intents=frozenset({"qa_query"}),
                               retrievers=retrievers)
