"""Saving memories: direct, batch, and extraction from a conversation turn (the seed's save_info)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from agent_memory.domain.models import Memory, MemoryType, NewMemory, SaveOutcome, SaveResult, UserRef
from agent_memory.ports import ConversationTurn, MemoryExtractor, MemoryStore

# Field names an extractor uses for "no particular slot": such memories are never upserted.
NON_SLOT_FIELDS = frozenset({"", "other", "note", "misc"})


class SavedMemory(BaseModel):
    memoryType: MemoryType
    content: str
    field: str


class SaveInfoOutput(BaseModel):
    """The seed's MemoryManagerSaveOutput, field for field."""

    action: str = "save_info"
    extracted_info: dict[str, Any] = Field(default_factory=dict)
    saved_count: int = 0
    saved_memories: list[SavedMemory] = Field(default_factory=list)
    skipped_fields: list[str] = Field(default_factory=list)


def _has_value(value: Any) -> bool:
    return value not in (None, "", [], {})


class SaveService:
    def __init__(self, *, store: MemoryStore, extractor: Callable[[], MemoryExtractor]) -> None:
        self._store = store
        # A provider, not an instance: the LLM SDK is imported on the first extraction only.
        self._extractor = extractor

    def warm_up(self) -> None:
        """Build the extractor (importing its SDK) ahead of the first request, e.g. before a SnapStart snapshot."""
        self._extractor()

    def save(self, user: UserRef, memory: NewMemory) -> SaveResult:
        return self._store.save(user, memory)

    def save_batch(self, user: UserRef, memories: list[NewMemory]) -> list[SaveResult]:
        """Saves in order (a later item for the same field supersedes an earlier one).

        Every item is validated before this is called, so a bad batch writes nothing. Each save
        is idempotent by content, so retrying a batch after a mid-way failure stores nothing twice.
        """
        return [self._store.save(user, memory) for memory in memories]

    def delete(self, user: UserRef, memory_key: str) -> Memory:
        return self._store.delete(user, memory_key)

    def extract_and_save(
        self, user: UserRef, turn: ConversationTurn, *, conversation_id: str | None = None
    ) -> SaveInfoOutput:
        known = {name for name, value in turn.existing_info.items() if _has_value(value)}
        output = SaveInfoOutput()
        for found in self._extractor().extract(turn):
            field = (found.field or "").strip()
            if field and field in known:
                output.skipped_fields.append(field)
                continue
            if field and _has_value(found.value):
                output.extracted_info[field] = found.value
            metadata = dict(found.metadata)
            if found.value is not None:
                metadata.setdefault("value", found.value)
            result = self._store.save(
                user,
                NewMemory(
                    memory_type=found.memory_type,
                    content=found.content,
                    category=found.category,
                    field=None if field.lower() in NON_SLOT_FIELDS else field,
                    source="conversation",
                    conversation_id=conversation_id,
                    metadata=metadata,
                ),
            )
            if result.outcome is SaveOutcome.DUPLICATE:
                output.skipped_fields.append(field or found.content)
                continue
            output.saved_memories.append(
                SavedMemory(memoryType=found.memory_type, content=found.content, field=field)
            )
        output.saved_count = len(output.saved_memories)
        return output
