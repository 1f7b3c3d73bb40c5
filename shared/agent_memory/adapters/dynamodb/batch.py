"""BatchWriteItem and BatchGetItem done right: their per-call limits, unprocessed items retried with backoff."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.items import BUSY, raise_domain_error
from agent_memory.errors import Throttled

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient
    from types_boto3_dynamodb.type_defs import WriteRequestOutputTypeDef, WriteRequestTypeDef

MAX_BATCH = 25
MAX_GET = 100


def write_all(client: DynamoDBClient, table: str, requests: list[dict[str, Any]], *, attempts: int = 6) -> None:
    """Every Put/DeleteRequest applied, or RuntimeError: DynamoDB may hand back unprocessed items under
    load, and dropping them silently would lose writes (or, for deletes, leave expired data behind)."""
    for start in range(0, len(requests), MAX_BATCH):
        # The builders' plain dicts are WriteRequests in DynamoDB's shape (checked by the tests, not the types).
        pending = cast("Mapping[str, Sequence[WriteRequestTypeDef | WriteRequestOutputTypeDef]]",
                       {table: requests[start:start + MAX_BATCH]})
        for attempt in range(attempts):
            unprocessed = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not unprocessed:
                break
            pending = unprocessed
            time.sleep(0.05 * 2**attempt)
        else:
            raise RuntimeError(f"batch write to {table} left items unprocessed after {attempts} attempts")


def read_all(client: DynamoDBClient, table: str, keys: list[dict[str, Any]], *, attempts: int = 6,
             projection: str | None = None) -> list[dict[str, Any]]:
    """Every item at these keys that exists, strongly consistent, 100 keys per call. Keys DynamoDB hands
    back unprocessed are asked again after a jittered backoff; still unprocessed after `attempts`, the
    store is busy (Throttled). SDK errors become domain errors."""
    found: list[dict[str, Any]] = []
    for start in range(0, len(keys), MAX_GET):
        pending: dict[str, Any] = {table: {"Keys": keys[start:start + MAX_GET], "ConsistentRead": True,
                                           **({"ProjectionExpression": projection} if projection else {})}}
        for attempt in range(attempts):
            if attempt:
                time.sleep(random.uniform(0, min(0.2, 0.01 * 2**attempt)))
            try:
                response = client.batch_get_item(RequestItems=pending)
            except ClientError as error:
                raise_domain_error(error)
            found += response.get("Responses", {}).get(table, [])
            pending = response.get("UnprocessedKeys") or {}
            if not pending:
                break
        else:
            raise Throttled(BUSY)
    return found


def partition_key_pages(client: DynamoDBClient, table: str, pk: str, page_size: int = 500,
                        prefix: str = "") -> Iterator[list[dict[str, Any]]]:
    """Every item key (pk, sk) of one partition (with `prefix`, of the items whose sort key starts with it), a page
    at a time, read consistently: what a sweep deletes."""
    params: dict[str, Any] = {
        "TableName": table, "KeyConditionExpression": "pk = :pk", "ProjectionExpression": "pk, sk",
        "ExpressionAttributeValues": {":pk": {"S": pk}}, "ConsistentRead": True, "Limit": page_size}
    if prefix:
        params["KeyConditionExpression"] += " AND begins_with(sk, :prefix)"
        params["ExpressionAttributeValues"][":prefix"] = {"S": prefix}
    while True:
        try:
            response = client.query(**params)
        except ClientError as error:
            raise_domain_error(error)
        items: list[dict[str, Any]] = response.get("Items", [])
        if items:
            yield items
        if "LastEvaluatedKey" not in response:
            return
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]
