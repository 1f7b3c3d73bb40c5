"""BatchWriteItem done right: 25 requests per call, unprocessed items retried with backoff."""

from __future__ import annotations

import time
from typing import Any

MAX_BATCH = 25


def write_all(client: Any, table: str, requests: list[dict[str, Any]], *, attempts: int = 6) -> None:
    """Every Put/DeleteRequest applied, or RuntimeError: DynamoDB may hand back unprocessed items under
    load, and dropping them silently would lose writes (or, for deletes, leave expired data behind)."""
    for start in range(0, len(requests), MAX_BATCH):
        pending = {table: requests[start:start + MAX_BATCH]}
        for attempt in range(attempts):
            unprocessed = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not unprocessed:
                break
            pending = unprocessed
            time.sleep(0.05 * 2**attempt)
        else:
            raise RuntimeError(f"batch write to {table} left items unprocessed after {attempts} attempts")
