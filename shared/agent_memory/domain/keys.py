"""Identifiers: validated user/tenant ids and time-ordered memory keys."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from typing import Annotated, Protocol

from pydantic import StringConstraints

# No '#': it separates parts of DynamoDB keys, so ids can never forge another tenant's key.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
# A request model's id field (tenant, conversation, message, author): the same alphabet as the path's ids.
Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
# A scope is a user, or a project under this prefix ('/' is outside the id alphabet, so the two never meet).
PROJECT_PREFIX = "project/"
SCOPE_ID_PATTERN = rf"^(?:{re.escape(PROJECT_PREFIX)})?{ID_PATTERN[1:]}"
ScopeId = Annotated[str, StringConstraints(pattern=SCOPE_ID_PATTERN)]
MEMORY_KEY_PATTERN = r"^mem_[0-9a-z]{26}$"
FIELD_PATTERN = r"^[A-Za-z][A-Za-z0-9_.+-]{0,63}$"

_ID_RE = re.compile(ID_PATTERN)
_MEMORY_KEY_RE = re.compile(MEMORY_KEY_PATTERN)

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


class Scoped(Protocol):
    """Anything that names a tenant's user or project (a scope reference, a stored memory)."""

    @property
    def tenant_id(self) -> str: ...

    @property
    def user_id(self) -> str: ...


def partition_key(scope: Scoped) -> str:
    """The one partition of a tenant's scope: everything it owns lives here and nowhere else. Ids hold no
    '#', so two different scopes never share a partition."""
    return f"T#{scope.tenant_id}#U#{scope.user_id}"


def cache_partition_key(scope: Scoped) -> str:
    """The scope's partition of assembled-context cache entries, apart from its memories."""
    return "CTX#" + partition_key(scope)


def snapshot_partition_key(scope: Scoped) -> str:
    """The scope's partition of saved search indexes, apart from its memories (as the context cache's)."""
    return "SNAP#" + partition_key(scope)


def active_shard(scope: Scoped, shards: int) -> int:
    """Which of `shards` shards records the scope's activity: stable, and spread evenly by a hash."""
    digest = hashlib.sha256(partition_key(scope).encode()).digest()
    return int.from_bytes(digest[:4], "big") % shards


def is_valid_id(value: str) -> bool:
    return bool(_ID_RE.fullmatch(value))


def is_valid_memory_key(value: str) -> bool:
    return bool(_MEMORY_KEY_RE.fullmatch(value))


class _MonotonicUlid:
    """ULID-shaped values (48-bit ms time + 80 random bits) that strictly increase within a process,
    so keys minted in the same millisecond still sort in creation order."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def next(self, now_ms: int | None = None) -> int:
        timestamp = int(time.time() * 1000) if now_ms is None else now_ms
        candidate = (timestamp << 80) | secrets.randbits(80)
        with self._lock:
            if candidate <= self._last:
                candidate = self._last + 1
            self._last = candidate
        return candidate


_ulids = _MonotonicUlid()


def new_memory_key(now_ms: int | None = None) -> str:
    """A time-ordered key: memories sort by creation time in DynamoDB."""
    value = _ulids.next(now_ms)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "mem_" + "".join(reversed(chars))
