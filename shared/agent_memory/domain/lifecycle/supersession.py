"""Which memory a new one retires: a newer value of a field supersedes the field's current memory, and
content that is current already is not stored again. Decided here; a store only writes the outcome."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent_memory.domain.models import (
    Memory,
    NewMemory,
    SaveOutcome,
    SaveResult,
    ScopeRef,
    content_hash,
    new_memory_version,
    superseded_by,
)


@dataclass(frozen=True)
class CurrentMemories:
    """The user's current memories a batch can touch: by content digest, and by field."""

    by_content: dict[str, Memory] = field(default_factory=dict)
    by_field: dict[str, Memory] = field(default_factory=dict)

    @classmethod
    def of(cls, memories: list[Memory]) -> CurrentMemories:
        current = [m for m in memories if m.is_current]
        return cls(by_content={m.content_hash: m for m in current}, by_field={m.field: m for m in current if m.field})


def plan_saves(
    user: ScopeRef, proposed: list[NewMemory], current: CurrentMemories, new_key: Callable[[], str]
) -> list[SaveResult]:
    """The result of saving each proposed memory in order, as if one by one: a duplicate of content current
    at that point (stored, or an earlier item's), a new memory, or a new memory that retires its field's
    current one (`superseded`: the retired memory as history; the new one `supersedes` it, one version on).
    Later items see earlier ones: a field set twice keeps the second, and content retired earlier in the
    batch may be stored again."""
    by_content, by_field = dict(current.by_content), dict(current.by_field)
    results: list[SaveResult] = []
    for memory in proposed:
        digest = content_hash(memory.content)
        existing = by_content.get(digest)
        if existing is not None:
            results.append(SaveResult(outcome=SaveOutcome.DUPLICATE, memory=existing))
            continue
        previous = by_field.get(memory.field) if memory.field else None
        new = new_memory_version(user, memory, new_key(), previous)
        by_content[digest] = new
        if memory.field:
            by_field[memory.field] = new
        if previous is None:
            results.append(SaveResult(outcome=SaveOutcome.CREATED, memory=new))
            continue
        held = by_content.get(previous.content_hash)
        if held is not None and held.memory_key == previous.memory_key:
            del by_content[previous.content_hash]
        results.append(SaveResult(outcome=SaveOutcome.SUPERSEDED, memory=new, superseded=superseded_by(previous, new)))
    return results
