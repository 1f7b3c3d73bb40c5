"""The user's change log: what each move of the version counter wrote, so a search index of an older version can
be brought up to date by reading only what changed.

A write that moves ``META`` from version ``v`` to ``v + n`` moves it only if it is still at ``v`` (a condition
in the write's own transaction) and puts beside it the change record ``CHG#<v + n>``, which covers versions
``v + 1 .. v + n``: every memory version the write stored, as it now stands (new ones, and those it retired
with their end of validity), embeddings included. A reader whose index is of version ``v`` and finds the
counter at ``V`` reads the records ``CHG#<v + 1> .. CHG#<V>`` in one Query: they must cover every version in
between, one after another. A gap (a write that keeps no record: an import, a purge), a record too large to
hold its memories, or a record the table's TTL already removed all read as "no changes known": the index
is built again from the memories, as before.

Records are kept `CHANGE_TTL_SECONDS` (`expires_at`, the table's TTL attribute; sooner when a memory in it
expires sooner), as long as a search index snapshot: a container holding an older index than that builds
it again. A purge deletes them all, as they hold copies of the text; an erasure removes them with the
partition.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.items import (
    TRANSACTION_CANCELLED,
    error_code,
    from_item,
    memory_from_item,
    memory_to_item,
    to_item,
    transact_write,
    ttl_seconds,
)
from agent_memory.domain.keys import CHANGE_PREFIX, META, change_sort_key
from agent_memory.domain.models import Memory, StoreVersions, utcnow
from agent_memory.domain.search.index_changes import IndexChanges
from agent_memory.errors import Conflict

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

CHANGE_TTL_SECONDS = 7 * 86400
# An item holds at most 400 KB: a write storing more than this in memories records only that it happened.
MAX_RECORDED_BYTES = 300_000


@dataclass(frozen=True)
class ChangeRecord:
    """Versions `first`..`last` (the counter's moves of one write): the memory versions the write stored, as
    they now stand; `complete` is False when they were too many to record (a reader builds again)."""

    first: int
    last: int
    written: list[Memory] = field(default_factory=list)
    complete: bool = True
    written_at: float | None = None  # epoch seconds; None in a record made before it was kept


def recorded_bump(table: str, pk: str, *, seen: StoreVersions, by: int, written: Sequence[Memory] = (),
                  now: float | None = None) -> list[dict[str, Any]]:
    """The two TransactWriteItems actions that move the counter from `seen.content` by `by`, only if no other
    write moved it since it was read, and record what moved it. A cancelled transaction is read again."""
    now = time.time() if now is None else now
    last = seen.content + by
    expires = now + CHANGE_TTL_SECONDS
    for memory in written:
        if memory.expires_at is not None:
            expires = min(expires, memory.expires_at.timestamp())
    items = [memory_to_item(m) for m in written]
    complete = sum(_item_bytes(item) for item in items) <= MAX_RECORDED_BYTES
    condition = "attribute_not_exists(version)" if seen.content == 0 else "version = :seen"
    values: dict[str, Any] = {":version": last, ":now": utcnow().isoformat(), ":kind": "meta",
                              ":generation": seen.generation or secrets.token_hex(8)}
    if seen.content:
        values[":seen"] = seen.content
    record = {"pk": {"S": pk}, "sk": {"S": change_sort_key(last)}, "kind": {"S": "change"},
              "first": {"N": str(seen.content + 1)}, "complete": {"BOOL": complete},
              "written_at": {"N": f"{now:.3f}"},
              "written": {"L": [{"M": item} for item in items] if complete else []},
              "expires_at": {"N": str(ttl_seconds(expires))}}
    return [
        {"Update": {
            "TableName": table, "Key": to_item({"pk": pk, "sk": META}),
            "UpdateExpression": "SET version = :version, updated_at = :now, kind = :kind, "
                                "generation = if_not_exists(generation, :generation)",
            "ConditionExpression": condition, "ExpressionAttributeValues": to_item(values)}},
        {"Put": {"TableName": table, "Item": record}},
    ]


def _item_bytes(item: dict[str, Any]) -> int:
    """Roughly an item's size as DynamoDB counts it: names and values."""
    total = 0
    for name, value in item.items():
        total += len(name)
        kind, inner = next(iter(value.items()))
        if kind in ("S", "N"):
            total += len(str(inner).encode())
        elif kind == "B":
            total += len(inner)
        else:
            total += len(repr(inner))  # lists and maps: keywords, small next to the text and embedding
    return total


def read_changes(client: DynamoDBClient, table: str, pk: str, *, after: int, through: int) -> list[ChangeRecord] | None:
    """The records of versions `after + 1` .. `through`, oldest first, read consistently; None unless they cover
    each of those versions exactly once."""
    params: dict[str, Any] = {
        "TableName": table, "ConsistentRead": True,
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":low": {"S": change_sort_key(after + 1)},
                                      ":high": {"S": change_sort_key(through)}},
    }
    records: list[ChangeRecord] = []
    expected = after + 1
    while True:
        response = client.query(**params)
        for item in response.get("Items", []):
            record = _record(item)
            if record.first != expected or not record.complete:
                return None
            records.append(record)
            expected = record.last + 1
        if "LastEvaluatedKey" not in response:
            break
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    return records if expected == through + 1 else None


def read_recent(client: DynamoDBClient, table: str, pk: str, *, since: float, limit: int) -> list[ChangeRecord]:
    """The records written after `since` (epoch seconds), newest first, at most `limit` (a record written before
    `since`, or one older than the time it records, ends the read: the log is in version order)."""
    params: dict[str, Any] = {
        "TableName": table, "ConsistentRead": True, "ScanIndexForward": False, "Limit": min(limit, 25),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":prefix": {"S": CHANGE_PREFIX}},
    }
    records: list[ChangeRecord] = []
    while len(records) < limit:
        response = client.query(**params)
        for item in response.get("Items", []):
            record = _record(item)
            if record.written_at is None or record.written_at <= since:
                return records
            records.append(record)
            if len(records) >= limit:
                return records
        if "LastEvaluatedKey" not in response:
            break
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    return records


def folded(records: list[ChangeRecord], *, kept: Callable[[Memory], bool], every_version: bool) -> IndexChanges:
    """The records' net effect on an index: each memory version as the last record wrote it, indexed if `kept`
    and current (or with `every_version`, any version), dropped otherwise."""
    latest = {memory.memory_key: memory for record in records for memory in record.written}
    upserted = [m for m in latest.values() if kept(m) and (every_version or m.is_current)]
    indexed = {m.memory_key for m in upserted}
    return IndexChanges(upserted=sorted(upserted, key=lambda m: m.memory_key),
                        removed=sorted(set(latest) - indexed))


def _record(item: dict[str, Any]) -> ChangeRecord:
    last = int(item["sk"]["S"].removeprefix(CHANGE_PREFIX))
    written_at = item.get("written_at")
    return ChangeRecord(first=int(item["first"]["N"]), last=last, complete=bool(item["complete"]["BOOL"]),
                        written=[memory_from_item(entry["M"]) for entry in item.get("written", {}).get("L", [])],
                        written_at=float(written_at["N"]) if written_at else None)


def read_versions(client: DynamoDBClient, table: str, pk: str) -> StoreVersions:
    """The scope's counters (`META`), read consistently; zeros when nothing was written yet."""
    response = client.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"S": META}}, ConsistentRead=True)
    return versions_of(from_item(response["Item"]) if response.get("Item") else {})


def versions_of(meta: dict[str, Any]) -> StoreVersions:
    """The counters a `META` item's values hold (an empty dict: nothing written yet)."""
    return StoreVersions(content=int(meta.get("version", 0)), access=int(meta.get("access_version", 0)),
                         generation=str(meta.get("generation", "")))


def transact_recorded(client: DynamoDBClient, table: str, pk: str, actions: list[dict[str, Any]], *,
                      written: Sequence[Memory] = (), attempts: int = 8) -> None:
    """`actions` in one transaction with the counter's recorded move by one. Another write moving the counter
    first only cancels the bump: it is read again and the transaction retried. Any other cancellation (one
    of `actions`' own conditions) is raised as DynamoDB answered it."""
    for attempt in range(attempts):
        if attempt:
            time.sleep(random.uniform(0, min(0.2, 0.01 * 2**attempt)))
        seen = read_versions(client, table, pk)
        try:
            transact_write(client, [*actions, *recorded_bump(table, pk, seen=seen, by=1, written=written)])
            return
        except ClientError as error:
            reasons = error.response.get("CancellationReasons") or []
            own = [reason.get("Code") for reason in reasons[:len(actions)]]
            bump = reasons[len(actions)].get("Code") if len(reasons) > len(actions) else None
            if error_code(error) != TRANSACTION_CANCELLED or bump != "ConditionalCheckFailed" \
                    or any(code not in (None, "None") for code in own):
                raise
    raise Conflict("too many concurrent writes for this user, retry")
