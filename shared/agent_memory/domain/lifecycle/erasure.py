"""Erasure of a whole scope (a tenant's user or project): what a receipt says, and the tombstone rule.

A scope's data lives in its partition of the table (memories and their versions, the keys that find them, the
version counter, the conversation log and its extraction markers, hot memory, reports, memory-tool files), in
two partitions beside it (the context cache, the saved search indexes), in the rollup's markers of active
weeks and, on the OpenSearch tier, in the index. An erasure removes all of it and then looks again: the
receipt says, per store, what it found, what it removed and what a final check still found.

Work queued before the erasure (an extraction of a logged message, access statistics of a search, a rollup
task, a stream record for the indexer) may arrive after it. The erasure leaves a tombstone beside the scope:
a worker drops a message queued at or before the tombstone's time, and processes one queued after it (a new
save after an erasure starts the scope afresh). The tombstone outlives any message a queue can still hold
(SQS keeps one at most 14 days, dead-letter queues included), then goes by the table's TTL.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from agent_memory.domain.keys import (
    CHANGE_PREFIX,
    CONTENT_PREFIX,
    EXTRACTION_PREFIX,
    FIELD_PREFIX,
    FILE_PREFIX,
    HOT_PREFIX,
    KEYWORD_PREFIX,
    LOG_PREFIX,
    MEMORY_PREFIX,
    META,
    REPORT_PREFIX,
    Id,
    new_memory_key,
)

# The stores a receipt reports on, in the order it lists them. The first nine are kinds of item in the scope's
# partition (by sort-key prefix); `other` is any item there of a kind this list does not name (erased too).
PARTITION_STORES: dict[str, str] = {
    MEMORY_PREFIX: "memories",  # every version of every memory
    FIELD_PREFIX: "memory_keys", CONTENT_PREFIX: "memory_keys", KEYWORD_PREFIX: "memory_keys",  # what finds one
    META: "version_counter",
    CHANGE_PREFIX: "change_log",  # what each write stored, for search indexes to follow
    LOG_PREFIX: "conversation_log",
    EXTRACTION_PREFIX: "extraction_markers",
    HOT_PREFIX: "hot_memory",
    REPORT_PREFIX: "reports",
    FILE_PREFIX: "memory_files",
}
OTHER_STORE = "other"
CONTEXT_CACHE = "context_cache"
INDEX_SNAPSHOTS = "index_snapshots"
ROLLUP_MARKERS = "rollup_markers"
SEARCH_INDEX = "search_index"
STORE_ORDER = tuple(dict.fromkeys([*PARTITION_STORES.values(), OTHER_STORE, CONTEXT_CACHE, INDEX_SNAPSHOTS,
                                   ROLLUP_MARKERS, SEARCH_INDEX]))
# SQS keeps a message at most 14 days: a tombstone must outlive that, whatever a dead-letter queue redrives.
MAX_QUEUED_DAYS = 14
ERASURE_ID_PATTERN = r"^era_[0-9a-z]{26}$"

ErasureStatus = Literal["complete", "in_progress"]


class OutOfTime(Exception):
    """A sweep stopped at its deadline; `removed` counts what it removed so far, by store."""

    def __init__(self, removed: Counter[str]) -> None:
        super().__init__("erasure deadline reached")
        self.removed = removed


def store_of(sort_key: str) -> str:
    """The store an item of the scope's partition belongs to, by its sort key's prefix."""
    head = sort_key.split("#", 1)[0]
    return PARTITION_STORES.get(head + "#" if head != META else META, OTHER_STORE)


def new_erasure_id() -> str:
    return "era_" + new_memory_key().removeprefix("mem_")


class StoreErasure(BaseModel):
    """One store's part of an erasure: items found, removed, and found again by the final check."""

    store: str
    found: int = 0
    removed: int = 0
    remaining: int = 0


class ErasureReceipt(BaseModel):
    """The proof of an erasure, kept apart from the scope (the tenant's receipts) for `receipt_days`."""

    erasure_id: str
    tenant_id: Id
    scope_type: Literal["users", "projects"]
    scope_id: Id
    status: ErasureStatus
    requested_at: datetime
    requested_by: str | None = None  # the token's subject, when the request carried one
    completed_at: datetime | None = None
    stores: list[StoreErasure] = Field(default_factory=list)
    # The final check: every store read again after the removal found nothing of the scope.
    verified: bool = False
    passes: int = 0  # removal passes (a write racing the erasure is removed by another pass)
    # Queued work: messages queued at or before `erased_at` are dropped by the workers until this time.
    tombstone_expires_at: datetime

    @property
    def erased_at(self) -> datetime:
        return self.requested_at

    def totals(self) -> dict[str, StoreErasure]:
        return {s.store: s for s in self.stores}


class Tombstone(BaseModel):
    """Beside an erased scope: work queued before the erasure completed (`completed_at`; while it runs, any) is
    dropped."""

    tenant_id: str
    user_id: str
    erased_at: datetime
    erasure_id: str
    expires_at: datetime
    completed_at: datetime | None = None

    def drops(self, queued_at: datetime | None) -> bool:
        """Whether work queued at `queued_at` was acknowledged before or during the erasure: what it would write
        would bring back what the erasure removes (a message that says no time was queued by code older than
        erasure itself, hence before it)."""
        return queued_at is None or self.completed_at is None or queued_at <= self.completed_at


def tombstone_expiry(erased_at: datetime, days: int) -> datetime:
    return erased_at + timedelta(days=max(days, MAX_QUEUED_DAYS + 1))


def merge(counts: list[StoreErasure], more: dict[str, tuple[int, int]]) -> list[StoreErasure]:
    """`counts` with `more` (store -> (found, removed)) added, in STORE_ORDER."""
    by_store = {c.store: c.model_copy() for c in counts}
    for store, (found, removed) in more.items():
        entry = by_store.setdefault(store, StoreErasure(store=store))
        entry.found += found
        entry.removed += removed
    return sorted(by_store.values(), key=lambda c: STORE_ORDER.index(c.store) if c.store in STORE_ORDER
                  else len(STORE_ORDER))
