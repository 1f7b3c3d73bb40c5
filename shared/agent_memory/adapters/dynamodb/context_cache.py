"""The context cache in the memory table: blocks survive Lambda scale-out and cold starts.

Items: ``pk = CTX#T#<tenant>#U#<user>``, ``sk = <key>``, with the body and ``expires_at`` (the table's
TTL attribute, epoch seconds). DynamoDB's sweeper can lag by days, so reads check ``expires_at`` too.
The ``CTX#`` prefix keeps the inject function's write permission off the memories (IAM LeadingKeys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.items import error_code, ttl_seconds
from agent_memory.domain.keys import cache_partition_key
from agent_memory.domain.models import ScopeRef
from agent_memory.observability import logger
from agent_memory.ports import CachedContext

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

# A block body is small; anything near DynamoDB's 400 KB item limit is not worth caching.
MAX_CACHED_BYTES = 300_000




class DynamoContextCache:
    """Failures read as misses and skipped writes: the cache must never fail a request."""

    def __init__(self, *, table_name: str, client: DynamoDBClient) -> None:
        self._table = table_name
        self._client = client

    def get(self, user: ScopeRef, key: str, *, now: float) -> CachedContext | None:
        try:
            item = self._client.get_item(
                TableName=self._table, Key={"pk": {"S": cache_partition_key(user)}, "sk": {"S": key}},
            ).get("Item")
        except ClientError as error:
            logger.warning("context cache read failed", error_code=error_code(error))
            return None
        if not item:
            return None
        entry = CachedContext(content=item["content"]["S"], created_at=float(item["created_at"]["N"]),
                              expires_at=float(item["expires_at_precise"]["N"]))
        return entry if entry.expires_at > now else None

    def put(self, user: ScopeRef, key: str, entry: CachedContext) -> None:
        if len(entry.content.encode("utf-8")) > MAX_CACHED_BYTES:
            return
        item = {
            "pk": {"S": cache_partition_key(user)}, "sk": {"S": key}, "kind": {"S": "context"},
            "content": {"S": entry.content}, "created_at": {"N": repr(entry.created_at)},
            "expires_at_precise": {"N": repr(entry.expires_at)},
            "expires_at": {"N": str(ttl_seconds(entry.expires_at))},  # the table's TTL attribute
        }
        try:
            self._client.put_item(TableName=self._table, Item=item)
        except ClientError as error:
            logger.warning("context cache write failed", error_code=error_code(error))
