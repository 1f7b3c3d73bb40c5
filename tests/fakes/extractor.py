"""The Extractor port, scripted."""

from __future__ import annotations

from agent_memory.domain.models import ExtractedMemory
from agent_memory.ports import ConversationTurn


class FakeExtractor:
    """Returns what it was told to, and records the turns it saw."""

    def __init__(self, memories: list[ExtractedMemory] | None = None) -> None:
        self.memories = memories or []
        self.turns: list[ConversationTurn] = []

    def extract(self, turn: ConversationTurn) -> list[ExtractedMemory]:
        self.turns.append(turn)
        return list(self.memories)
