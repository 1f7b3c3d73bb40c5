"""A change of embedding model: memories embedded by the old model are re-embedded, never compared across models."""

from __future__ import annotations

import numpy as np

from agent_memory.adapters.in_process_index import InProcessIndex
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.ports import CandidateQuery
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t", user_id="u")


class CountingEmbedder:
    def __init__(self, model_id: str, dimension: int = 4) -> None:
        self.model_id, self.dimension, self.documents = model_id, dimension, []

    def embed_documents(self, texts):
        self.documents.extend(texts)
        return np.ones((len(texts), self.dimension), dtype=np.float32)

    def embed_query(self, text):
        return np.ones(self.dimension, dtype=np.float32) / 2


def test_a_model_change_is_detected_and_stale_memories_are_re_embedded_not_compared():
    store = InMemoryMemoryStore()
    old_vector = encode_vector(np.array([1, 0, 0, 0], dtype=np.float32))
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="old model", embedding=old_vector,
                               embedding_model="old-model"))
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="current model", embedding=old_vector,
                               embedding_model="new-model"))
    embedder = CountingEmbedder("new-model")
    index = InProcessIndex(store=store, embedder=lambda: embedder)

    candidates = index.candidates(USER, CandidateQuery(text="x", vector=embedder.embed_query("x")))

    assert embedder.documents == ["old model"]
    assert {c.memory.content: round(c.vector, 3) for c in candidates} == {"old model": 1.0, "current model": 0.5}
