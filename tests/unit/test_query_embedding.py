"""The query's embedding: a dialogue embedded by its last lines when configured, started early by prefetch, and
started before the index reads and awaited last."""

from __future__ import annotations

from agent_memory.domain.models import MemoryType


def test_a_dialogue_query_is_embedded_by_its_last_lines_when_configured():
    from agent_memory.services.search import last_lines

    dialogue = "你好\n\n最近怎么样？\n我上周去了杭州\n还记得我们聊过的那家餐厅吗"

    assert last_lines(dialogue, 2) == "我上周去了杭州\n还记得我们聊过的那家餐厅吗"
    assert last_lines(dialogue, 0) == dialogue
    assert last_lines("one line", 2) == "one line"


def test_prefetch_starts_the_text_the_search_embeds_and_nothing_for_a_keyword_search():
    from agent_memory.domain.search.search import SearchQuery
    from agent_memory.settings import Settings
    from tests.fakes.services import services_over_fakes
    from tests.fakes.store import InMemoryMemoryStore

    class Embedder:
        model_id, dimension = "recording", 2

        def __init__(self) -> None:
            self.prefetched: list[str] = []

        def prefetch(self, text: str) -> None:
            self.prefetched.append(text)

    embedder = Embedder()
    search = services_over_fakes(Settings(memory_search_query_vector_lines=2), store=InMemoryMemoryStore(),
                            embedder=embedder).search

    search.prefetch(SearchQuery(query="user: hi\nassistant: hello\nuser: which visa fits me?"))
    search.prefetch(SearchQuery(query="which visa", search_mode="keyword"))

    assert embedder.prefetched == ["assistant: hello\nuser: which visa fits me?"]


def test_a_search_starts_its_query_embedding_before_the_index_reads_and_waits_for_it_last():
    import numpy as np

    from agent_memory.api.search import SearchRequest, search_memories
    from agent_memory.domain.models import NewMemory, ScopeRef
    from agent_memory.domain.search.vectors import encode_vector
    from agent_memory.settings import Settings
    from tests.fakes.services import services_over_fakes
    from tests.fakes.store import InMemoryMemoryStore

    events: list[str] = []

    class Store(InMemoryMemoryStore):
        def versions(self, user: ScopeRef):  # type: ignore[no-untyped-def]
            events.append("index reads the version")
            return super().versions(user)

    class Embedder:
        model_id, dimension = "recording", 2

        def prefetch(self, text: str) -> None:
            events.append(f"prefetch {text}")

        def embed_documents(self, texts: list[str]) -> np.ndarray:
            return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))

        def embed_query(self, text: str) -> np.ndarray:
            events.append(f"embed {text}")
            return np.array([1.0, 0.0], dtype=np.float32)

    store, user = Store(), ScopeRef(tenant_id="t", user_id="u")
    services = services_over_fakes(Settings(), store=store, embedder=Embedder())
    store.save_many(user, [NewMemory(memory_type=MemoryType.FACT, content="Caroline went hiking",
                                     embedding=encode_vector(np.array([1.0, 0.0], dtype=np.float32)),
                                     embedding_model="recording")])
    events.clear()

    found = search_memories(services.search, user,
                            SearchRequest(query="hiking", search_mode="hybrid", min_relevance_score=0))

    assert [r.content_preview for r in found.results] == ["Caroline went hiking"]
    assert events[0] == "prefetch hiking" and events[-1] == "embed hiking"
    assert "index reads the version" in events[1:-1]
