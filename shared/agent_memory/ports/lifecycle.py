"""The ports of a scope's whole life in the table: its erasure (the table's items, a separate search index) and
its export and import."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any, Protocol

from agent_memory.domain.lifecycle.erasure import ErasureReceipt, Tombstone
from agent_memory.domain.lifecycle.portable import ImportBatch
from agent_memory.domain.memory_tool.memory_files import MemoryDirectory, MemoryFile
from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, LogMessage, WeeklyReport


class TableEraser(Protocol):
    """A scope's items in the table: swept, looked for again; the scope's tombstone and the tenant's receipts."""

    def sweep(self, scope: ScopeRef, *, deadline: float, now: datetime, weeks: set[date]) -> Counter[str]:
        """Every item of the scope deleted; how many, by store. OutOfTime past `deadline` (time.monotonic)."""
        ...

    def remaining(self, scope: ScopeRef, *, now: datetime, weeks: set[date]) -> Counter[str]: ...

    def put_tombstone(self, tombstone: Tombstone) -> None: ...

    def tombstone(self, scope: ScopeRef) -> Tombstone | None: ...

    def put_receipt(self, receipt: ErasureReceipt, expires_at: datetime) -> None: ...

    def receipt(self, tenant_id: str, erasure_id: str) -> ErasureReceipt | None: ...


class IndexEraser(Protocol):
    """A scope's documents in a search index kept apart from the table (the OpenSearch tier)."""

    def erase(self, scope: ScopeRef) -> tuple[int, int]:
        """(documents found, documents removed)."""
        ...

    def remaining(self, scope: ScopeRef) -> int: ...


class ScopeArchive(Protocol):
    """A scope's partition for export and import: its items read by section, an import's items written whole."""

    def memories_after(self, scope: ScopeRef, after: str | None) -> Iterator[tuple[str, Memory]]:
        """The scope's memories, current and history, oldest key first, after the sort key `after`."""
        ...

    def memories(self, scope: ScopeRef, memory_keys: list[str]) -> dict[str, Memory]: ...

    def entries_after(self, scope: ScopeRef, prefix: str, after: str | None) -> Iterator[tuple[str, Any]]:
        """A section's items after the sort key `after` (prefix LOG#, HOT#, REPORT# or FILE#) as domain objects."""
        ...

    def slot_holders(self, scope: ScopeRef, memories: list[Memory]) -> dict[str, dict[str, str]]:
        """For each current memory (by key): the key of the memory holding its "content" or "field" now, if any."""
        ...

    def held(self, scope: ScopeRef, entries: list[LogMessage | HotMemoryEntry | WeeklyReport | MemoryFile
                                                  | MemoryDirectory]) -> list[str | None]:
        """For each entry, what the scope holds at its place: None, "present", or for a memory-tool path "file" or
        "directory"."""
        ...

    def present_synonyms(self, tenant_id: str, pairs: list[tuple[str, str]]) -> set[tuple[str, str]]: ...

    def write(self, scope: ScopeRef, batch: ImportBatch) -> None:
        """All of the batch (none of its items present before) and a version bump, or nothing (Conflict)."""
        ...
