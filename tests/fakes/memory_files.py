"""The MemoryFileStore port in memory, with the DynamoDB store's semantics (the contract in
tests/integration/test_memory_files_store.py runs on both)."""

from __future__ import annotations

import threading
from datetime import datetime

from agent_memory.domain.memory_tool.memory_files import (
    MAX_RENAME_ENTRIES,
    MemoryDirectory,
    MemoryEntry,
    MemoryFile,
    MemoryUsage,
)
from agent_memory.domain.memory_tool.memory_paths import ancestors, is_within
from agent_memory.domain.models import ScopeRef
from agent_memory.errors import Conflict, InvalidInput, NotFound

Entry = MemoryFile | MemoryDirectory


class FakeMemoryFileStore:
    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail  # raised by every call, to test what a failing store does to the service
        self.entries: dict[tuple[ScopeRef, str], Entry] = {}
        self._lock = threading.Lock()

    def _check(self) -> None:
        if self.fail is not None:
            raise self.fail

    def _below(self, user: ScopeRef, directory: str) -> list[Entry]:
        return [e for (owner, path), e in self.entries.items() if owner == user and is_within(path, directory)]

    def get(self, user: ScopeRef, path: str) -> MemoryFile | MemoryDirectory | None:
        self._check()
        return self.entries.get((user, path))

    def list_under(self, user: ScopeRef, directory: str) -> list[MemoryEntry]:
        self._check()
        return sorted((MemoryEntry(path=e.path, is_directory=isinstance(e, MemoryDirectory),
                                   size=e.size if isinstance(e, MemoryFile) else 0)
                       for e in self._below(user, directory)), key=lambda e: e.path)

    def usage(self, user: ScopeRef) -> MemoryUsage:
        self._check()
        usage = MemoryUsage()
        for entry in self._below(user, "/memories"):
            if isinstance(entry, MemoryFile):
                usage.files += 1
                usage.bytes += entry.size
            else:
                usage.directories += 1
        return usage

    def _make_parents(self, user: ScopeRef, path: str, now: datetime) -> None:
        if any(isinstance(self.entries.get((user, parent)), MemoryFile) for parent in ancestors(path)):
            raise Conflict(f"a parent of {path} is a file")
        for parent in ancestors(path):
            self.entries.setdefault((user, parent), MemoryDirectory(path=parent, created_at=now))

    def create(self, user: ScopeRef, file: MemoryFile) -> None:
        self._check()
        with self._lock:
            if (user, file.path) in self.entries:
                raise Conflict(f"{file.path} exists already")
            self._make_parents(user, file.path, file.created_at)
            self.entries[(user, file.path)] = file

    def update(self, user: ScopeRef, path: str, text: str, *, expected_version: int, now: datetime) -> None:
        self._check()
        with self._lock:
            found = self.entries.get((user, path))
            if not isinstance(found, MemoryFile) or found.version != expected_version:
                raise Conflict(f"{path} was edited or removed meanwhile")
            self.entries[(user, path)] = found.model_copy(
                update={"text": text, "updated_at": now, "version": expected_version + 1})

    def delete(self, user: ScopeRef, path: str) -> int:
        self._check()
        with self._lock:
            if (user, path) not in self.entries:
                return 0
            doomed = [path, *(e.path for e in self._below(user, path))]
            for gone in doomed:
                del self.entries[(user, gone)]
            return len(doomed)

    def rename(self, user: ScopeRef, old_path: str, new_path: str, *, now: datetime) -> None:
        self._check()
        with self._lock:
            source = self.entries.get((user, old_path))
            if source is None:
                raise NotFound(f"{old_path} does not exist")
            if new_path == old_path or is_within(new_path, old_path):
                raise Conflict(f"{new_path} is {old_path} or inside it")
            moving = [source, *self._below(user, old_path)]
            if len(moving) > MAX_RENAME_ENTRIES:
                raise InvalidInput(f"{old_path} holds {len(moving)} entries; at most {MAX_RENAME_ENTRIES} move "
                                   "at once")
            if (user, new_path) in self.entries:
                raise Conflict(f"{new_path} exists already")
            self._make_parents(user, new_path, now)
            for entry in moving:
                del self.entries[(user, entry.path)]
                moved = new_path + entry.path[len(old_path):]
                self.entries[(user, moved)] = entry.model_copy(update={"path": moved})
