"""The indexed form of a memory: one document per current memory, keyed by tenant, user and memory key."""

from __future__ import annotations

from typing import Any

from agent_memory.domain.models import Memory
from agent_memory.domain.search.neighbours import turn_link
from agent_memory.domain.search.vectors import decode_vector, encode_vector
from agent_memory.domain.text.text import searchable_text
from agent_memory.ports import Embedder


def document_id(tenant_id: str, user_id: str, memory_key: str) -> str:
    return f"{tenant_id}|{user_id}|{memory_key}"


def to_document(memory: Memory) -> dict[str, Any]:
    """The indexed form: filter keywords, analysed text, the vector, and the Memory to rebuild."""
    doc: dict[str, Any] = {
        "doc_id": document_id(memory.tenant_id, memory.user_id, memory.memory_key),
        "tenant_id": memory.tenant_id,
        "user_id": memory.user_id,
        "memory_key": memory.memory_key,
        "memory_type": memory.memory_type.value,
        "category": memory.category,
        "field": memory.field,
        "created_at": memory.created_at.isoformat(),
        # Content, keywords, category and the conversation context, as the serverless tier indexes them.
        "text": searchable_text(memory),
        "content": memory.content,
        "extras": " ".join([*(k.term for k in memory.keywords), memory.category or "", memory.context or ""]).strip(),
        # `embedding` is excluded from model_dump: the vector lives in its own field.
        "memory": memory.model_dump(mode="json"),
    }
    if memory.conversation_id:
        doc["turn_id"] = turn_link(memory.conversation_id, memory.content)
        if memory.context:
            doc["previous_turn_id"] = turn_link(memory.conversation_id, memory.context)
    if memory.embedding:
        doc["embedding"] = decode_vector(memory.embedding).tolist()
        doc["embedding_model"] = memory.embedding_model
    return {k: v for k, v in doc.items() if v is not None}


def with_current_embeddings(memories: list[Memory], embedder: Embedder | None) -> list[Memory]:
    """The memories with vectors of the configured model: missing or other-model ones re-embedded.

    Vectors from different models are not comparable, so a stale one is replaced, never indexed.
    """
    if embedder is None:
        return [m.model_copy(update={"embedding": None, "embedding_model": None}) for m in memories]
    stale = [i for i, m in enumerate(memories) if not m.embedding or m.embedding_model != embedder.model_id]
    if not stale:
        return memories
    vectors = embedder.embed_documents([memories[i].content for i in stale])
    updated = list(memories)
    for row, i in enumerate(stale):
        updated[i] = memories[i].model_copy(
            update={"embedding": encode_vector(vectors[row]), "embedding_model": embedder.model_id}
        )
    return updated
