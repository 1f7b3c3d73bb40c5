"""Verified erasure of a scope (DELETE /v1/users/{id}, /v1/projects/{id}) and the tombstone check of the workers.

An erasure:
1. writes the scope's tombstone (from then on, work queued before the erasure completes is dropped by the workers)
   and a receipt saying it is in progress;
2. sweeps the table (every item of the scope's partitions and its rollup markers) and the search index (the
   OpenSearch tier's documents; this container's cached index of the scope);
3. looks again in every store (the final check); what a write racing the erasure put back is swept by another
   pass, up to `max_passes`;
4. marks the tombstone complete (work queued from then on is the scope's new life) and records the receipt: per
   store what was found, removed and still found, and whether the check found nothing.

A scope too large to sweep within `budget_seconds` answers an in-progress receipt: sending the erasure again
continues it (same receipt). An erasure asked for again once complete erases what was written since.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date, datetime, timedelta

from agent_memory.domain.lifecycle.erasure import (
    SEARCH_INDEX,
    ErasureReceipt,
    OutOfTime,
    StoreErasure,
    Tombstone,
    merge,
    new_erasure_id,
    tombstone_expiry,
)
from agent_memory.domain.models import ScopeRef, utcnow
from agent_memory.observability import logger
from agent_memory.ports import IndexEraser, TableEraser


class ErasureService:
    def __init__(self, *, table: TableEraser, index: IndexEraser | None = None,
                 forget: Callable[[ScopeRef], None] = lambda _: None, tombstone_days: int = 30,
                 receipt_days: int = 365, budget_seconds: float = 20.0, max_passes: int = 3,
                 clock: Callable[[], datetime] = utcnow) -> None:
        """`forget`: drop what this container caches of a scope (its in-process index)."""
        self._table = table
        self._index = index
        self._forget = forget
        self._tombstone_days = tombstone_days
        self._receipt_days = receipt_days
        self._budget = budget_seconds
        self._max_passes = max_passes
        self._clock = clock

    # ---- the API ---------------------------------------------------------------------------------

    def erase(self, scope: ScopeRef, *, requested_by: str | None = None) -> ErasureReceipt:
        deadline = time.monotonic() + self._budget
        receipt = self._unfinished(scope) or self._begin(scope, requested_by)
        weeks: set[date] = set()
        stores = receipt.stores
        for _ in range(self._max_passes):
            try:
                removed = self._table.sweep(scope, deadline=deadline, now=receipt.erased_at, weeks=weeks)
            except OutOfTime as stop:
                stores = merge(stores, {store: (n, n) for store, n in stop.removed.items()})
                return self._record(receipt.model_copy(update={"stores": stores, "passes": receipt.passes + 1}))
            stores = merge(stores, {store: (n, n) for store, n in removed.items()})
            self._forget(scope)
            if self._index is not None:
                stores = merge(stores, {SEARCH_INDEX: self._index.erase(scope)})
            receipt = receipt.model_copy(update={"passes": receipt.passes + 1})
            left = self._table.remaining(scope, now=receipt.erased_at, weeks=weeks)
            if self._index is not None:
                left[SEARCH_INDEX] = self._index.remaining(scope)
            if not +left:
                break
            logger.warning("erasure found items again after a pass: sweeping again", passes=receipt.passes)
        checked = [s.model_copy(update={"remaining": left.get(s.store, 0)}) for s in merge(stores, {
            store: (0, 0) for store in left})]
        done = receipt.model_copy(update={"stores": checked, "status": "complete", "completed_at": self._clock(),
                                          "verified": not +left})
        logger.info("scope erased", erasure_id=done.erasure_id, verified=done.verified, passes=done.passes,
                    removed=sum(s.removed for s in checked))
        # Work queued until now was acknowledged before or during the erasure: the workers drop it.
        self._table.put_tombstone(Tombstone(
            tenant_id=scope.tenant_id, user_id=scope.user_id, erased_at=receipt.requested_at,
            erasure_id=receipt.erasure_id, expires_at=receipt.tombstone_expires_at, completed_at=done.completed_at))
        return self._record(done)

    def receipt(self, tenant_id: str, erasure_id: str) -> ErasureReceipt | None:
        return self._table.receipt(tenant_id, erasure_id)

    # ---- the workers ---------------------------------------------------------------------------

    def dropped(self, scope: ScopeRef, queued_at: datetime | None) -> bool:
        """Whether work for the scope queued at `queued_at` was queued before the scope was erased (a worker
        then drops it: it would bring back what the erasure removed)."""
        return self.dropper(scope)(queued_at)

    def dropper(self, scope: ScopeRef) -> Callable[[datetime | None], bool]:
        """`dropped` for many pieces of work of one scope (a worker's batch), the tombstone read once."""
        tombstone = self._table.tombstone(scope)

        def dropped(queued_at: datetime | None) -> bool:
            if tombstone is None or not tombstone.drops(queued_at):
                return False
            logger.info("queued work dropped: its scope was erased after it was queued",
                        erasure_id=tombstone.erasure_id)
            return True

        return dropped

    # ---- internals -----------------------------------------------------------------------------

    def _unfinished(self, scope: ScopeRef) -> ErasureReceipt | None:
        """The scope's erasure still in progress (stopped at its deadline), to continue."""
        tombstone = self._table.tombstone(scope)
        if tombstone is None:
            return None
        receipt = self._table.receipt(scope.tenant_id, tombstone.erasure_id)
        return receipt if receipt is not None and receipt.status == "in_progress" else None

    def _begin(self, scope: ScopeRef, requested_by: str | None) -> ErasureReceipt:
        now = self._clock()
        project = scope.is_project
        receipt = ErasureReceipt(
            erasure_id=new_erasure_id(), tenant_id=scope.tenant_id, scope_type="projects" if project else "users",
            scope_id=scope.scope_id, status="in_progress", requested_at=now,
            requested_by=requested_by, tombstone_expires_at=tombstone_expiry(now, self._tombstone_days),
            stores=[StoreErasure(store=SEARCH_INDEX)] if self._index is not None else [])
        # The tombstone first: from this moment, work queued before it is dropped wherever it arrives.
        self._table.put_tombstone(Tombstone(tenant_id=scope.tenant_id, user_id=scope.user_id, erased_at=now,
                                            erasure_id=receipt.erasure_id, expires_at=receipt.tombstone_expires_at))
        return self._record(receipt)

    def _record(self, receipt: ErasureReceipt) -> ErasureReceipt:
        self._table.put_receipt(receipt, receipt.requested_at + timedelta(days=self._receipt_days))
        return receipt
