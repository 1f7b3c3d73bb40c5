"""Identifiers: validated user/tenant ids and time-ordered memory keys; and the table's keys, each item's
partition and sort key built here and only here (docs/design.md, "DynamoDB items", describes every item)."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from datetime import date
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


# The sort keys of a scope's partition, by kind of item.
META = "META"  # the scope's version counters
MEMORY_PREFIX = "MEM#"  # MEM#<memory_key>: a memory version
FIELD_PREFIX = "FIELD#"  # FIELD#<field>: which memory holds the field now
CONTENT_PREFIX = "HASH#"  # HASH#<digest>: which memory holds this content now
KEYWORD_PREFIX = "KW#"  # KW#<keyword>#<memory_key>: a memory's keyword
CHANGE_PREFIX = "CHG#"  # CHG#<version>: the change log
LOG_PREFIX = "LOG#"  # LOG#<created_at>#<conversation>#<message>: L1, a logged message
EXTRACTION_PREFIX = "LOGX#"  # LOGX#<message_id>: a logged message's extraction lease, then its done marker
HOT_PREFIX = "HOT#"  # HOT#<type>#<key>: L2, a hot-memory entry
REPORT_PREFIX = "REPORT#"  # REPORT#<week_start>: L3, a weekly report
FILE_PREFIX = "FILE#"  # FILE#<path>: the memory tool's files and directories


def memory_sort_key(memory_key: str) -> str:
    return MEMORY_PREFIX + memory_key


def field_sort_key(field: str) -> str:
    return FIELD_PREFIX + field


def content_sort_key(digest: str) -> str:
    return CONTENT_PREFIX + digest


def keyword_sort_key(normalized_term: str, memory_key: str) -> str:
    return f"{KEYWORD_PREFIX}{normalized_term}#{memory_key}"


def change_sort_key(version: int) -> str:
    """Zero-padded: the change log reads in version order."""
    return f"{CHANGE_PREFIX}{version:012d}"


def extraction_sort_key(message_id: str) -> str:
    return EXTRACTION_PREFIX + message_id


def hot_sort_key(entry_type: str, key: str) -> str:
    return f"{HOT_PREFIX}{entry_type}#{key}"


def report_sort_key(week_start: date) -> str:
    return f"{REPORT_PREFIX}{week_start.isoformat()}"


def cache_partition_key(scope: Scoped) -> str:
    """The scope's partition of assembled-context cache entries, apart from its memories."""
    return "CTX#" + partition_key(scope)


def snapshot_partition_key(scope: Scoped) -> str:
    """The scope's partition of saved search indexes, apart from its memories (as the context cache's)."""
    return "SNAP#" + partition_key(scope)


def active_partition_key(week_start: date, shard: int) -> str:
    """One shard of the week's list of scopes that logged messages (the rollup's work list): its items' sort
    keys are the scopes' partition keys."""
    return f"ACTIVE#{week_start.isoformat()}#{shard:02d}"


def synonyms_partition_key(tenant_id: str) -> str:
    """The tenant's synonym pairs."""
    return f"T#{tenant_id}#SYN"


def tenant_section_key(tenant_id: str, section: str) -> str:
    """A tenant-wide list apart from its scopes (erasure tombstones, erasure receipts)."""
    return f"T#{tenant_id}#{section}"


def scope_sort_key(user_id: str) -> str:
    """A scope's item in a tenant-wide list (its tombstone)."""
    return f"U#{user_id}"


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
