"""BatchWriteItem and BatchGetItem done right: their per-call limits, unprocessed items retried with backoff."""

from __future__ import annotations

import time
from typing import Any

MAX_BATCH = 25
MAX_GET = 100


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


def read_all(client: Any, table: str, keys: list[dict[str, Any]], *, attempts: int = 6,
             consistent: bool = True) -> list[dict[str, Any]]:
    """Every item at these keys that exists (100 keys per call), or RuntimeError if DynamoDB keeps
    handing keys back unprocessed."""
    found: list[dict[str, Any]] = []
    for start in range(0, len(keys), MAX_GET):
        pending: dict[str, Any] = {table: {"Keys": keys[start:start + MAX_GET], "ConsistentRead": consistent}}
        for attempt in range(attempts):
            response = client.batch_get_item(RequestItems=pending)
            found += response.get("Responses", {}).get(table, [])
            pending = response.get("UnprocessedKeys") or {}
            if not pending:
                break
            time.sleep(0.05 * 2**attempt)
        else:
            raise RuntimeError(f"batch read from {table} left keys unprocessed after {attempts} attempts")
    return found
