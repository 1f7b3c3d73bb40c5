"""Access statistics in the table: a memory's access_count and last_accessed_at, and the user's access version."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.items import CONDITION_FAILED, error_code, raise_domain_error, to_item
from agent_memory.domain.keys import META, memory_sort_key, partition_key
from agent_memory.domain.models import ScopeRef

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

# How many memories' updates run at once (their round trips overlap; DynamoDB takes them in any order).
ACCESS_UPDATE_THREADS = 4


def record_access(client: DynamoDBClient, table: str, user: ScopeRef, memory_keys: list[str],
                  accessed_at: datetime) -> None:
    """Bump access statistics: each memory once, by how often `memory_keys` names it (a worker's batch of
    reads, merged). Not a content change: the content version stays, so caches of memories are not rebuilt
    by reads; the access version moves, so they can refresh just the statistics. A memory deleted meanwhile
    is skipped."""
    counts = Counter(memory_keys)

    def bump(memory_key: str) -> int:
        try:
            client.update_item(
                TableName=table,
                Key=to_item({"pk": partition_key(user), "sk": memory_sort_key(memory_key)}),
                UpdateExpression="ADD access_count :n SET last_accessed_at = :at",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues=to_item({":n": counts[memory_key], ":at": accessed_at.isoformat()}),
            )
            return 1
        except ClientError as error:
            if error_code(error) != CONDITION_FAILED:
                raise_domain_error(error)
            return 0

    # The updates are independent: a few at a time, so a batch's round trips overlap.
    with ThreadPoolExecutor(max_workers=min(ACCESS_UPDATE_THREADS, max(len(counts), 1))) as pool:
        recorded = sum(pool.map(bump, counts))
    if recorded:
        try:
            # Only a counter that is there: an erasure in between leaves nothing for statistics to bring back.
            client.update_item(
                TableName=table, Key=to_item({"pk": partition_key(user), "sk": META}),
                UpdateExpression="ADD access_version :n", ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues=to_item({":n": recorded}))
        except ClientError as error:
            if error_code(error) != CONDITION_FAILED:
                raise_domain_error(error)
