"""The table's eraser in memory: tombstones and receipts kept, nothing to sweep (the fakes' stores are apart)."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime

from agent_memory.domain.lifecycle.erasure import ErasureReceipt, Tombstone
from agent_memory.domain.models import ScopeRef


class FakeTableEraser:
    def __init__(self) -> None:
        self.tombstones: dict[ScopeRef, Tombstone] = {}
        self.receipts: dict[tuple[str, str], ErasureReceipt] = {}
        self.swept: list[ScopeRef] = []

    def sweep(self, scope: ScopeRef, *, deadline: float, now: datetime, weeks: set[date]) -> Counter[str]:
        self.swept.append(scope)
        return Counter()

    def remaining(self, scope: ScopeRef, *, now: datetime, weeks: set[date]) -> Counter[str]:
        return Counter()

    def put_tombstone(self, tombstone: Tombstone) -> None:
        self.tombstones[ScopeRef(tenant_id=tombstone.tenant_id, user_id=tombstone.user_id)] = tombstone

    def tombstone(self, scope: ScopeRef) -> Tombstone | None:
        return self.tombstones.get(scope)

    def put_receipt(self, receipt: ErasureReceipt, expires_at: datetime) -> None:
        self.receipts[(receipt.tenant_id, receipt.erasure_id)] = receipt

    def receipt(self, tenant_id: str, erasure_id: str) -> ErasureReceipt | None:
        return self.receipts.get((tenant_id, erasure_id))
