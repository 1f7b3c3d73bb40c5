"""The erasure and retention routes' wire contract: the receipt as DELETE /v1/{users|projects}/{id} and
GET /v1/erasures/{id} answer it, and the tenant's retention policy as GET /v1/retention answers it."""

from __future__ import annotations

import re

from pydantic import BaseModel

from agent_memory.domain.lifecycle.erasure import ERASURE_ID_PATTERN, ErasureReceipt
from agent_memory.domain.lifecycle.retention import TenantRetention

_ERASURE_ID = re.compile(ERASURE_ID_PATTERN)


class ErasureReceiptView(ErasureReceipt):
    """An erasure's receipt. `status` `in_progress` (202): the scope was too large for one request, send the
    DELETE again to continue. `complete` (200): every store was swept; `verified` says the final check found
    nothing of the scope in any of them (`stores[].remaining` all 0). Work queued before `requested_at` (an
    extraction, access statistics, a rollup task) is dropped by the workers until `tombstone_expires_at`."""

    @classmethod
    def of(cls, receipt: ErasureReceipt) -> ErasureReceiptView:
        return cls.model_validate(receipt.model_dump())


def is_erasure_id(value: str) -> bool:
    return bool(_ERASURE_ID.fullmatch(value))


class RetentionView(BaseModel):
    """The caller's tenant's retention policy: days kept per memory type (null: until deleted) and for the
    conversation log (`LOG`); `tenant_specific` when the tenant has a policy of its own
    (MEMORY_TENANT_RETENTION_DAYS), else the deployment's (MEMORY_RETENTION_DAYS)."""

    tenant_id: str
    days: dict[str, int | None]
    tenant_specific: bool

    @classmethod
    def of(cls, tenant_id: str, retention: TenantRetention) -> RetentionView:
        return cls(tenant_id=tenant_id, days=retention(tenant_id).as_days(),
                   tenant_specific=tenant_id in retention.tenants)
