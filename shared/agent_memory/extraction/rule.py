"""A field rule as a pack names it: the field it reads, and how (none, one or, for a list field, several
memories from one utterance)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.grammar import Utterance


@dataclass(frozen=True)
class FieldRule:
    field: str
    read: Callable[[Utterance], list[ExtractedMemory]]


def single(field: str, rule: Callable[[Utterance], ExtractedMemory | None]) -> FieldRule:
    """A rule that reads at most one memory."""

    def read(ctx: Utterance) -> list[ExtractedMemory]:
        found = rule(ctx)
        return [found] if found is not None else []

    return FieldRule(field, read)
