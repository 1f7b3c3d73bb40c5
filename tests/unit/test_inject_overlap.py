"""Inject as the bootstrap wires it: the query's embedding started early and the version counters pinned
for the request. Same blocks as the plain wiring, one version read and one embedding per new message."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache
from agent_memory.adapters.embeddings.query_cache import QueryCachingEmbedder
from agent_memory.api.inject import InjectionRequest, InjectionResult, inject_context
from agent_memory.domain.inject.injection import ContextRequest
from agent_memory.domain.inject.summary import extractive_summary
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef, StoreVersions
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.services.blocks.registry import default_sources
from agent_memory.services.inject import InjectService
from agent_memory.settings import Settings
from tests.fakes import embedders
from tests.fakes.services import services_over_fakes
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t-overlap", user_id="u")
START = datetime(2026, 1, 1, tzinfo=UTC)
TOPICS = ["applying for the TTPS visa", "a flat in Kowloon", "schools for two children", "a job in fintech",
          "learning Cantonese", "moving the family in spring", "the QMAS points test", "a savings plan"]


class HashingEmbedder(embedders.HashingEmbedder):
    """The shared bag-of-words fake at 32 dimensions."""

    def __init__(self) -> None:
        super().__init__(dimension=32)


class CountingStore(InMemoryMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.version_reads = 0

    def versions(self, user: ScopeRef) -> StoreVersions:
        self.version_reads += 1
        return super().versions(user)

    def user_version(self, user: ScopeRef) -> int:
        self.version_reads += 1
        return super().user_version(user)


def seeded(embedder: HashingEmbedder) -> CountingStore:
    store = CountingStore()
    for i in range(40):
        content = f"The user asked about {TOPICS[i % len(TOPICS)]} (note {i})"
        store.save(USER, NewMemory(memory_type=MemoryType.FACT, content=content, importance=60 + i % 30,
                                   created_at=START + timedelta(days=i),
                                   embedding=encode_vector(embedder.embed_documents([content])[0]),
                                   embedding_model=embedder.model_id))
    store.version_reads = 0
    return store


def ask(message: str) -> InjectionRequest:
    return InjectionRequest.model_validate({"user_id": USER.user_id, "conversation_id": "c-1",
                                            "current_user_message": message})


def plain_inject(services: Any, store: InMemoryMemoryStore) -> InjectService:
    """The same search and index behind an inject service without the early embedding or the pins."""
    return InjectService(sources=default_sources(store=store, search=services.search,
                                                 current_memories=services.index.current_memories,
                                                 knowledge=None, experiences=None,
                                                 memory_layers=services.memory_layers),
                         cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                         executor=ThreadPoolExecutor(2), summarizer=lambda: extractive_summary)


def user_memory(result: InjectionResult) -> str:
    text = result.messages[0]["content"]
    return text.split("<user_memory>\n", 1)[1].split("\n</user_memory>", 1)[0]


MESSAGES = ["Which visa fits a fintech job?", "  What about schools for the children?\n",
            "Earlier we talked about the flat.\nNow: is the QMAS points test hard?\nAnd Cantonese lessons?"]


@pytest.mark.parametrize("vector_lines", [0, 2])
def test_given_new_messages_then_the_blocks_are_the_plain_wirings_with_one_version_read_and_one_embedding(
        vector_lines: int):
    inner = HashingEmbedder()
    store = seeded(inner)
    services = services_over_fakes(Settings(memory_search_query_vector_lines=vector_lines), store=store,
                              embedder=QueryCachingEmbedder(inner))
    plain_embedder = HashingEmbedder()
    plain = plain_inject(services_over_fakes(Settings(memory_search_query_vector_lines=vector_lines), store=store,
                                        embedder=plain_embedder), store)

    for message in MESSAGES:
        inner.queries.clear()
        store.version_reads = 0
        result = inject_context(services.inject, USER, ask(message))
        reads = store.version_reads
        expected = inject_context(plain, USER, ask(message))

        assert user_memory(result) == user_memory(expected)
        assert result.injected_contexts == expected.injected_contexts
        assert reads == 1  # the block's cache key and both index lookups: one read for the request
        # One embedding, of exactly the text the search embeds: the prefetch's vector is the search's.
        assert inner.queries == plain_embedder.queries[-1:] and len(plain_embedder.queries) >= 1


def test_given_a_keyword_relevant_search_then_nothing_is_embedded():
    inner = HashingEmbedder()
    store = seeded(inner)
    services = services_over_fakes(Settings(context_relevant_search_mode="keyword"), store=store,
                              embedder=QueryCachingEmbedder(inner))

    result = inject_context(services.inject, USER, ask("Which visa fits a fintech job?"))

    assert "user_memory" in result.injected_contexts and inner.queries == []


def test_given_an_embedder_without_a_query_cache_then_inject_embeds_only_for_the_search():
    inner = HashingEmbedder()
    store = seeded(inner)
    services = services_over_fakes(Settings(), store=store, embedder=inner)

    inject_context(services.inject, USER, ask("Which visa fits a fintech job?"))

    assert inner.queries == ["Which visa fits a fintech job?"]


def test_the_request_scope_is_entered_around_the_fetch_and_reaches_the_io_sources_threads():
    import contextlib
    import contextvars

    from agent_memory.domain.inject.context import Priority

    scope: contextvars.ContextVar[str] = contextvars.ContextVar("scope", default="outside")
    entered: list[str] = []

    @contextlib.contextmanager
    def request_scope() -> Any:
        token = scope.set("inside")
        entered.append("enter")
        try:
            yield
        finally:
            scope.reset(token)
            entered.append("exit")

    class ScopeSource:
        type, priority, ttl_seconds, does_io = "scope_probe", Priority.IMPORTANT, 0.0, True

        def build(self, ctx: Any, cache: Any) -> str:
            return f"saw {scope.get()}"

    service = InjectService(sources=[ScopeSource()], cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                            executor=ThreadPoolExecutor(1), summarizer=lambda: extractive_summary,
                            request_scope=request_scope)

    result = inject_context(service, USER, ask("hello"))

    assert "saw inside" in result.messages[0]["content"] and entered == ["enter", "exit"]
    assert scope.get() == "outside"


def test_the_user_memory_source_starts_the_search_querys_embedding_before_anything_is_read():
    from agent_memory.services.blocks.user_memory import UserMemorySource

    events: list[str] = []

    class Store(InMemoryMemoryStore):
        def versions(self, user: ScopeRef) -> StoreVersions:
            events.append("version read")
            return super().versions(user)

    class PrefetchingEmbedder(HashingEmbedder):
        def prefetch(self, text: str) -> None:
            events.append(f"prefetch {text!r}")

    store = Store()
    search = services_over_fakes(Settings(), store=store, embedder=PrefetchingEmbedder()).search

    def inject_with(relevant_n: int, message: str) -> None:
        source = UserMemorySource(store=store, search=search, relevant_n=relevant_n)
        service = InjectService(sources=[source], cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                                executor=ThreadPoolExecutor(1), summarizer=lambda: extractive_summary)
        inject_context(service, USER, ask(message))

    inject_with(3, "  Which visa fits me? \n")
    inject_with(0, "Which visa fits me?")  # no relevant memories: no search, nothing to embed

    assert events == ["prefetch 'Which visa fits me?'", "version read", "version read"]


def test_a_source_whose_prepare_fails_still_builds_its_block_and_the_request_succeeds():
    from agent_memory.domain.inject.context import Priority

    class Source:
        type, priority, ttl_seconds, does_io = "prepared_probe", Priority.IMPORTANT, 0.0, True

        def prepare(self, request: ContextRequest) -> None:
            raise RuntimeError("the prefetch thread is gone")

        def build(self, ctx: Any, cache: Any) -> str:
            return "built anyway"

    service = InjectService(sources=[Source()], cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                            executor=ThreadPoolExecutor(1), summarizer=lambda: extractive_summary)

    result = inject_context(service, USER, ask("hello"))

    assert "built anyway" in result.messages[0]["content"] and result.failed_contexts == []
