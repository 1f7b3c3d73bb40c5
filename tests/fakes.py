"""In-memory fakes of the ports. The store fake runs the same contract tests as the DynamoDB store."""

from __future__ import annotations

import threading
from datetime import datetime

from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.models import (
    ExtractedMemory,
    Memory,
    MemoryPage,
    MemoryType,
    NewMemory,
    SaveOutcome,
    SaveResult,
    UserRef,
    content_hash,
    new_memory_version,
    superseded_by,
)
from agent_memory.errors import NotFound
from agent_memory.ports import ConversationTurn


class InMemoryMemoryStore:
    def __init__(self) -> None:
        self._memories: dict[tuple[UserRef, str], Memory] = {}
        self._versions: dict[UserRef, int] = {}
        self._lock = threading.Lock()

    def _bump(self, user: UserRef) -> None:
        self._versions[user] = self._versions.get(user, 0) + 1

    def save_many(self, user: UserRef, memories: list[NewMemory]) -> list[SaveResult]:
        return [self.save(user, memory) for memory in memories]

    def save(self, user: UserRef, memory: NewMemory) -> SaveResult:
        digest = content_hash(memory.content)
        with self._lock:
            current = [m for m in self._user_memories(user) if m.is_current]
            for existing in current:
                if existing.content_hash == digest:
                    return SaveResult(outcome=SaveOutcome.DUPLICATE, memory=existing)
            previous = next((m for m in current if memory.field and m.field == memory.field), None)
            new = new_memory_version(user, memory, new_memory_key(), previous)
            self._memories[(user, new.memory_key)] = new
            superseded = None
            if previous is not None:
                superseded = superseded_by(previous, new)
                self._memories[(user, previous.memory_key)] = superseded
            self._bump(user)
        outcome = SaveOutcome.SUPERSEDED if superseded else SaveOutcome.CREATED
        return SaveResult(outcome=outcome, memory=new, superseded=superseded)

    def get(self, user: UserRef, memory_key: str) -> Memory | None:
        return self._memories.get((user, memory_key))

    def history(self, user: UserRef, memory: Memory) -> list[Memory]:
        if not memory.field:
            return [memory]
        return sorted((m for m in self._user_memories(user) if m.field == memory.field),
                      key=lambda m: (m.valid_from, m.memory_key))

    def list_current(self, user: UserRef, *, memory_type: MemoryType | None = None, limit: int = 50,
                     cursor: str | None = None) -> MemoryPage:
        from agent_memory.adapters.dynamodb.store import _decode_cursor, _encode_cursor

        start = _decode_cursor(cursor) if cursor else None
        ordered = sorted(self._user_memories(user), key=lambda m: m.memory_key, reverse=True)
        matching = [m for m in ordered if m.is_current and (memory_type is None or m.memory_type == memory_type)
                    and (start is None or m.memory_key < start)]
        items = matching[:limit]
        return MemoryPage(items=items, next_cursor=_encode_cursor(items[-1].memory_key)
                          if len(matching) > limit else None)

    def all_current(self, user: UserRef) -> list[Memory]:
        return sorted((m for m in self._user_memories(user) if m.is_current), key=lambda m: m.memory_key)

    def delete(self, user: UserRef, memory_key: str) -> Memory:
        with self._lock:
            memory = self._memories.pop((user, memory_key), None)
            if memory is None:
                raise NotFound(f"memory {memory_key} not found")
            self._bump(user)
        return memory

    def record_access(self, user: UserRef, memory_keys: list[str], accessed_at: datetime) -> None:
        with self._lock:
            for key in memory_keys:
                memory = self._memories.get((user, key))
                if memory is not None:
                    self._memories[(user, key)] = memory.model_copy(update={
                        "access_count": memory.access_count + 1, "last_accessed_at": accessed_at})

    def user_version(self, user: UserRef) -> int:
        return self._versions.get(user, 0)

    def _user_memories(self, user: UserRef) -> list[Memory]:
        return [m for (owner, _), m in self._memories.items() if owner == user]


class FakeExtractor:
    """Returns what it was told to, and records the turns it saw."""

    def __init__(self, memories: list[ExtractedMemory] | None = None) -> None:
        self.memories = memories or []
        self.turns: list[ConversationTurn] = []

    def extract(self, turn: ConversationTurn) -> list[ExtractedMemory]:
        self.turns.append(turn)
        return list(self.memories)
