"""The erasure routes' wire contract: the receipt as DELETE /v1/{users|projects}/{id} and GET /v1/erasures/{id}
answer it."""

from __future__ import annotations

import re

from agent_memory.domain.erasure import ERASURE_ID_PATTERN, ErasureReceipt

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
