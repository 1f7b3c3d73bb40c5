"""The one place for DynamoDB's wire details: how values and memories become items and back, the bump of a
scope's version counter, the code a `ClientError` carries, and how SDK errors become domain errors."""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NoReturn, cast

from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agent_memory.domain.keys import META, memory_sort_key, partition_key
from agent_memory.domain.models import Memory, utcnow
from agent_memory.errors import StoreUnavailable, Throttled

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient
    from types_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

CONDITION_FAILED = "ConditionalCheckFailedException"
TRANSACTION_CANCELLED = "TransactionCanceledException"
_THROTTLING_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
# The reasons a transaction's cancellation gives for an item DynamoDB pushed back on.
_THROTTLED_ITEM_CODES = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"})
BUSY = "the memory store is busy, retry shortly"

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_value(value: Any) -> dict[str, Any]:
    # boto3 ships no types: serialize returns an attribute value, a dict such as {"S": "..."}.
    return cast(dict[str, Any], _serializer.serialize(value))


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    return {k: to_value(v) for k, v in values.items() if v is not None}


def from_item(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}


def memory_to_item(memory: Memory) -> dict[str, Any]:
    values = memory.model_dump(mode="json", exclude_none=True)
    if not memory.retraction:  # the common case stores nothing for it
        values.pop("retraction", None)
    # DynamoDB numbers must not be floats; keyword weights go in as strings of fixed precision.
    values["keywords"] = [{"term": k.term, "weight": f"{k.weight:.4f}"} for k in memory.keywords]
    # Metadata is free-form JSON (floats included), so it is stored as a JSON string.
    values["metadata_json"] = json.dumps(values.pop("metadata", {}), ensure_ascii=False)
    if memory.embedding:
        values["embedding"] = Binary(memory.embedding)
    if memory.expires_at is not None:  # the table's TTL attribute: epoch seconds
        values["expires_at"] = ttl_seconds(memory.expires_at)
    return to_item({"pk": partition_key(memory), "sk": memory_sort_key(memory.memory_key), "kind": "memory", **values})


def ttl_seconds(moment: datetime | float) -> int:
    """A time (a datetime, or epoch seconds) as the table's TTL attribute holds it: whole epoch seconds,
    rounded up, so an item never expires before its moment."""
    return max(0, math.ceil(moment.timestamp() if isinstance(moment, datetime) else moment))


def epoch_now(moment: datetime) -> int:
    """A moment compared with TTL attributes (`expires_at > now`): truncated, so an item rounded up by
    `ttl_seconds` is live until its expiry's whole second is over, never hidden before its moment."""
    return int(moment.timestamp())


def memory_from_item(item: dict[str, Any]) -> Memory:
    values = from_item(item)
    for key in ("pk", "sk", "kind"):
        values.pop(key, None)
    values["metadata"] = json.loads(values.pop("metadata_json", None) or "{}")
    if isinstance(values.get("embedding"), Binary):
        values["embedding"] = bytes(values["embedding"])
    if isinstance(values.get("expires_at"), Decimal):
        values["expires_at"] = datetime.fromtimestamp(int(values["expires_at"]), UTC)
    return Memory.model_validate(values)


def bump_version(table: str, pk: str, by: int = 1) -> dict[str, Any]:
    """The TransactWriteItems action that moves the scope's version counter (``META``): caches keyed on it
    are invalidated with no call. The counter's first write names its generation: an erased scope's counter
    starts again from 0, and its new versions must not be taken for the old ones a cache holds."""
    return {"Update": {
        "TableName": table, "Key": to_item({"pk": pk, "sk": META}),
        "UpdateExpression": "ADD version :by SET updated_at = :now, kind = :kind, "
                            "generation = if_not_exists(generation, :generation)",
        "ExpressionAttributeValues": to_item({":by": by, ":now": utcnow().isoformat(), ":kind": "meta",
                                              ":generation": secrets.token_hex(8)}),
    }}


def error_code(error: ClientError) -> str:
    """The code DynamoDB answered with ("" when the error carries none)."""
    return str(error.response.get("Error", {}).get("Code", ""))


def throttled_transaction(error: ClientError) -> bool:
    """A transaction cancelled because DynamoDB pushed back on one of its items (not a failed condition)."""
    reasons = {reason.get("Code") for reason in error.response.get("CancellationReasons", [])}
    return error_code(error) == TRANSACTION_CANCELLED and bool(reasons & _THROTTLED_ITEM_CODES)


def raise_domain_error(error: ClientError) -> NoReturn:
    """Translate an SDK error into a domain error, in one place."""
    if error_code(error) in _THROTTLING_CODES:
        raise Throttled(BUSY) from error
    raise error


@contextmanager
def domain_errors() -> Iterator[None]:
    """The SDK's errors raised inside translated (raise_domain_error)."""
    try:
        yield
    except ClientError as error:
        raise_domain_error(error)


_UNAVAILABLE = "the memory store is unavailable; nothing more was written, retry shortly"


def table_client(*, connect_seconds: float, read_seconds: float, attempts: int) -> DynamoDBClient:
    """A DynamoDB client bounded in time (botocore's defaults wait 60 s for an answer and retry a throttled or
    failed call up to 10 times), so a table that hangs fails a request well inside the function's timeout."""
    import boto3
    from botocore.config import Config

    return boto3.client("dynamodb", config=Config(
        connect_timeout=connect_seconds, read_timeout=read_seconds,
        retries={"total_max_attempts": attempts, "mode": "standard"}))


def report_unavailable_store(client: DynamoDBClient | None) -> None:
    """Make every call of this DynamoDB client raise StoreUnavailable when the table cannot be reached
    (connection refused or closed, connect or read timeout) or answers 5xx, once botocore's own retries are
    spent. Hooked into the client's events, so one translation covers every adapter sharing the client,
    each of their calls and paginators, without a `try` at each call. Registering again changes nothing."""
    events = getattr(getattr(client, "meta", None), "events", None)
    if events is None:  # not a botocore client (a test's fake)
        return
    events.register("after-call-error.dynamodb", _raise_for_unreachable, unique_id="agent-memory-unreachable")
    events.register("after-call.dynamodb", _raise_for_server_error, unique_id="agent-memory-server-error")


def _raise_for_unreachable(exception: BaseException | None = None, **_: Any) -> None:
    if isinstance(exception, BotocoreConnectionError | HTTPClientError):
        raise StoreUnavailable(_UNAVAILABLE) from exception


def _raise_for_server_error(http_response: Any = None, parsed: Any = None, **_: Any) -> None:
    if http_response is not None and http_response.status_code >= 500:  # InternalServerError, ServiceUnavailable
        code = (parsed or {}).get("Error", {}).get("Code", "") if isinstance(parsed, dict) else ""
        raise StoreUnavailable(_UNAVAILABLE, details={"code": code or None})


def transact_write(client: DynamoDBClient, actions: Sequence[Mapping[str, Any]]) -> None:
    """`actions` in one TransactWriteItems. The item builders make plain dicts; their shape is DynamoDB's
    TransactWriteItem, which the tests check against DynamoDB Local and moto rather than the type checker."""
    client.transact_write_items(TransactItems=cast("list[TransactWriteItemTypeDef]", list(actions)))
