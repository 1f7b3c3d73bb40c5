"""The small interfaces the services depend on. Adapters implement them; tests use fakes."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from agent_memory.domain.models import (
    ExtractedMemory,
    Memory,
    MemoryPage,
    MemoryType,
    NewMemory,
    SaveResult,
    UserRef,
)


class ConversationTurn(BaseModel):
    """One user/assistant exchange handed to the extractor (the seed's save_info input)."""

    user_message: str
    assistant_message: str = ""
    existing_info: dict[str, Any] = Field(default_factory=dict)


class MemoryExtractor(Protocol):
    """Finds memories worth keeping in a conversation turn (LLM or offline rules)."""

    def extract(self, turn: ConversationTurn) -> list[ExtractedMemory]: ...


class MemoryStore(Protocol):
    """Source of truth for memories. Every write bumps the user's version counter."""

    def save(self, user: UserRef, memory: NewMemory) -> SaveResult: ...

    def get(self, user: UserRef, memory_key: str) -> Memory | None: ...

    def history(self, user: UserRef, memory: Memory) -> list[Memory]: ...

    def list_current(
        self,
        user: UserRef,
        *,
        memory_type: MemoryType | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> MemoryPage: ...

    def all_current(self, user: UserRef) -> list[Memory]: ...

    def delete(self, user: UserRef, memory_key: str) -> Memory: ...

    def user_version(self, user: UserRef) -> int: ...
