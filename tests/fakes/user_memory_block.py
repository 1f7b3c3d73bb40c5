"""A user_memory block behind an inject service, over the store's keyword search, and the memories it is
fed."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache
from agent_memory.api.inject import InjectionRequest, InjectionResult, inject_context
from agent_memory.domain.inject.summary import extractive_summary
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.services.blocks.user_memory import UserMemorySource
from agent_memory.services.inject import InjectLimits, InjectService
from agent_memory.settings import Settings
from tests.fakes.embedders import HashingEmbedder
from tests.fakes.inject import NOW
from tests.fakes.services import services_over_fakes
from tests.fakes.store import InMemoryMemoryStore

START = datetime(2026, 1, 1, tzinfo=UTC)
FILLER = ["went hiking on the weekend", "bought a new bicycle", "likes jazz concerts", "visited the museum",
          "cooked pasta for friends", "watched a documentary about whales", "painted a lake at sunset",
          "adopted a cat named Luna", "ran a half marathon", "planted tomatoes in the garden"]


def who(name: str) -> ScopeRef:
    return ScopeRef(tenant_id="t-user-memory", user_id=name)


def remember(store: InMemoryMemoryStore, user: ScopeRef, content: str, importance: int = 70, day: int = 0,
             memory_type: MemoryType = MemoryType.FACT, embedder: HashingEmbedder | None = None) -> None:
    """`embedder`: the memory carries its embedding, as a save stores it."""
    vector = {} if embedder is None else {"embedding": encode_vector(embedder.embed_documents([content])[0]),
                                          "embedding_model": embedder.model_id}
    store.save(user, NewMemory(memory_type=memory_type, content=content, importance=importance,
                               created_at=START + timedelta(days=day), **vector))


class Block:
    """One user_memory source behind an inject service, over the store's keyword search."""

    def __init__(self, store: InMemoryMemoryStore, cache: LayeredContextCache | None = None,
                 settings: Settings | None = None, embedder: HashingEmbedder | None = None, **options: Any) -> None:
        """`settings` and `embedder` build the search (default: the default settings, keyword search only)."""
        search = services_over_fakes(settings or Settings(), store=store, embedder=embedder).search
        self.source = UserMemorySource(store=store, search=search, **options)
        self.cache = cache or LayeredContextCache(local=LocalContextCache(), shared=None)
        self.service = InjectService(sources=[self.source], cache=self.cache, executor=ThreadPoolExecutor(2),
                                     summarizer=lambda: extractive_summary, limits=InjectLimits(),
                                     clock=lambda: NOW)

    def inject(self, user: ScopeRef, message: str) -> InjectionResult:
        return inject_context(self.service, user, InjectionRequest.model_validate(
            {"user_id": user.user_id, "conversation_id": "c-1", "current_user_message": message}))

    def lines(self, user: ScopeRef, message: str) -> list[str]:
        context = self.inject(user, message).messages[0]["content"]
        body = context.split("<user_memory>\n", 1)[1].split("\n</user_memory>", 1)[0]
        return [line for line in body.splitlines() if line.startswith("- [")]
