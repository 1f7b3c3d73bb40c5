"""The memory tool's files: the model's own working notes under /memories, and their limits.

A file is text at a canonical path (see memory_paths). Directories are entries of their own, as on a
filesystem: creating ``/memories/a/b.md`` creates ``/memories/a``, and deleting the file leaves the
directory. ``/memories`` itself always exists and is never stored.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, computed_field

# A DynamoDB item holds 400 KB; a file stays well under it, and 40 of them under a transaction's 4 MB.
MAX_FILE_BYTES = 64 * 1024
MAX_FILES = 500
# Emptied directories stay (as on a disk), so their number is bounded apart from the files'.
MAX_DIRECTORIES = 500
# One TransactWriteItems holds 100 actions: moving an entry is a delete and a put, and the new path's
# parents (at most 7) take two each, plus one check. 40 leaves room; a larger directory is moved in parts.
MAX_RENAME_ENTRIES = 40


class MemoryFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    text: str
    created_at: datetime
    updated_at: datetime
    version: int = 1  # bumped by every edit: a write names the version it read (optimistic concurrency)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def size(self) -> int:
        """Bytes in UTF-8, what a directory listing shows."""
        return len(self.text.encode("utf-8"))


class MemoryDirectory(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    created_at: datetime


class MemoryEntry(BaseModel):
    """One row of a listing: a file or a directory, without the file's text."""

    model_config = ConfigDict(frozen=True)

    path: str
    is_directory: bool
    size: int = 0


class MemoryUsage(BaseModel):
    """What a user's memory directory holds, for the limits."""

    files: int = 0
    directories: int = 0
    bytes: int = 0


def text_size(text: str) -> int | None:
    """UTF-8 bytes of `text`; None when it cannot be stored (a lone surrogate is not Unicode text)."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None
