"""The three layers (L1 log, L2 hot memory, L3 reports) in the memory table, in the scope's partition.

Its items sit next to the memories: the log's messages (TTL), hot-memory entries, weekly reports and the
extraction markers, and outside the scopes' partitions the weeks' shards of active scopes for the rollup's
fan-out; their keys are built in domain/keys.py, and docs/design.md ("DynamoDB items") describes each.
Every hot-memory write bumps the scope's version counter (``META``), like memory writes, so
caches keyed on it (inject's context blocks) are invalidated with no call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import Binary
from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.batch import read_all, write_all
from agent_memory.adapters.dynamodb.changes import transact_recorded
from agent_memory.adapters.dynamodb.items import (
    CONDITION_FAILED,
    TRANSACTION_CANCELLED,
    domain_errors,
    epoch_now,
    error_code,
    from_item,
    raise_domain_error,
    to_item,
    to_value,
    ttl_seconds,
)
from agent_memory.domain.keys import (
    HOT_PREFIX,
    LOG_PREFIX,
    REPORT_PREFIX,
    active_partition_key,
    active_shard,
    extraction_sort_key,
    hot_sort_key,
    partition_key,
    report_sort_key,
)
from agent_memory.domain.models import ScopeRef, utcnow
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType, LogKey, LogMessage, WeeklyReport
from agent_memory.errors import NotFound

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

ACTIVE_SHARDS = 16
# Active-scope markers outlive the week they mark by long enough for a late or re-run rollup.
ACTIVE_MARKER_DAYS = 60
EXTRACTION_MARKER_DAYS = 40  # a done marker outlives every redelivery of its queue message (SQS keeps 14 days)
MAX_TRANSACTION_ITEMS = 100


def _iso(moment: datetime) -> str:
    """Fixed-width UTC timestamps, so sort keys order by time."""
    # isoformat pads the year to four digits (strftime's %Y gives "337" for the year 337, out of order).
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def log_sort_key(message: LogMessage | LogKey) -> str:
    """Time first (the log reads by time range), then the conversation and the message: the same message
    id at the same moment in two conversations is two messages."""
    return f"{LOG_PREFIX}{_iso(message.created_at)}#{message.conversation_id}#{message.message_id}"


class DynamoLayerStore:
    def __init__(self, *, table_name: str, client: DynamoDBClient, shards: int = ACTIVE_SHARDS) -> None:
        self._table = table_name
        self._client = client
        self.shards = shards

    # ---- L1: the conversation log ------------------------------------------------------------

    def append_messages(self, scope: ScopeRef, messages: list[LogMessage], weeks: set[date]) -> None:
        """The messages all or nothing, in one transaction (at most 100). The scope's active-week markers
        are written first, apart: a marker without messages only makes the rollup look at a quiet week,
        and it keeps the whole transaction for messages. A message written again with the same
        conversation, id and time (a client retry) overwrites itself."""
        if not messages:
            return
        if len(messages) > MAX_TRANSACTION_ITEMS:
            raise ValueError(f"at most {MAX_TRANSACTION_ITEMS} messages per append")
        pk = partition_key(scope)
        marker_expiry = ttl_seconds(utcnow() + timedelta(days=ACTIVE_MARKER_DAYS))
        shard = active_shard(scope, self.shards)
        markers = [{"PutRequest": {"Item": to_item({
            "pk": active_partition_key(week, shard), "sk": pk, "kind": "active", "tenant_id": scope.tenant_id,
            "scope_id": scope.user_id, "week_start": week.isoformat(), "expires_at": marker_expiry})}}
            for week in sorted(weeks)]
        try:
            if markers:
                write_all(self._client, self._table, markers)
            self._client.transact_write_items(TransactItems=[
                {"Put": {"TableName": self._table, "Item": log_item(pk, m)}} for m in messages])
        except ClientError as error:
            raise_domain_error(error)

    def logged_messages(self, scope: ScopeRef, keys: list[LogKey]) -> list[LogMessage]:
        pk = partition_key(scope)
        wanted = [to_item({"pk": pk, "sk": log_sort_key(key)}) for key in keys]
        return sorted((log_from_item(i) for i in read_all(self._client, self._table, wanted)), key=log_sort_key)

    def set_log_embeddings(self, scope: ScopeRef, messages: list[LogMessage]) -> None:
        pk = partition_key(scope)
        for message in messages:
            if not message.embedding:
                continue
            try:
                self._client.update_item(
                    TableName=self._table, Key=to_item({"pk": pk, "sk": log_sort_key(message)}),
                    UpdateExpression="SET embedding = :vector, embedding_model = :model",
                    ConditionExpression="attribute_exists(pk)",  # expired or deleted meanwhile: leave it gone
                    ExpressionAttributeValues={":vector": to_value(Binary(message.embedding)),
                                               ":model": {"S": message.embedding_model or ""}})
            except ClientError as error:
                if error_code(error) != CONDITION_FAILED:
                    raise_domain_error(error)

    def log_messages(self, scope: ScopeRef, *, start: datetime | None = None, end: datetime | None = None,
                     now: datetime | None = None) -> list[LogMessage]:
        """Messages in [start, end), oldest first; expired ones are never returned, whatever TTL did."""
        low = f"{LOG_PREFIX}{_iso(start)}" if start else LOG_PREFIX
        high = f"{LOG_PREFIX}{_iso(end)}" if end else LOG_PREFIX[:-1] + "$"  # "$" sorts just after "#"
        cutoff = epoch_now(now or utcnow())
        items = self._query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            FilterExpression="expires_at > :now",
            ExpressionAttributeValues=to_item({":pk": partition_key(scope), ":low": low, ":high": high,
                                               ":now": cutoff}))
        return [log_from_item(i) for i in items if i["sk"]["S"] < high]

    def recent_log(self, scope: ScopeRef, *, limit: int, now: datetime | None = None) -> list[LogMessage]:
        """The newest `limit` unexpired messages (a hot-memory refresh reads 50 by default), oldest first."""
        values = to_item({":pk": partition_key(scope), ":log": LOG_PREFIX, ":now": epoch_now(now or utcnow())})
        pages = self._pages(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :log)", FilterExpression="expires_at > :now",
            ScanIndexForward=False, Limit=max(limit, 25), ExpressionAttributeValues=values)
        items: list[dict[str, Any]] = []
        for item in pages:
            items.append(item)
            if len(items) >= limit:
                break
        return [log_from_item(i) for i in reversed(items)]

    def delete_expired_log(self, scope: ScopeRef, now: datetime) -> int:
        """What DynamoDB's TTL sweeper has not removed yet (it can lag by days)."""
        expired = self._query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :log)", FilterExpression="expires_at <= :now",
            ProjectionExpression="pk, sk",
            ExpressionAttributeValues=to_item({":pk": partition_key(scope), ":log": LOG_PREFIX,
                                               ":now": epoch_now(now)}))
        self._batch_delete([{"pk": i["pk"], "sk": i["sk"]} for i in expired])
        return len(expired)

    def claim_extraction(self, scope: ScopeRef, message_id: str, lease_seconds: int = 300) -> bool:
        """Log-and-forget idempotency: True = this delivery may extract the message. A done marker, or
        another delivery's live lease, says no; an expired lease (a crashed worker) may be taken over."""
        moment = utcnow()
        now = epoch_now(moment)
        try:
            self._client.put_item(
                TableName=self._table,
                Item={**self._extraction_key(scope, message_id), **to_item({
                    "kind": "extraction", "status": "running", "lease_until": now + lease_seconds,
                    "expires_at": ttl_seconds(moment + timedelta(days=EXTRACTION_MARKER_DAYS))})},
                ConditionExpression="attribute_not_exists(pk) OR (#status = :running AND lease_until < :now)",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=to_item({":running": "running", ":now": now}))
        except ClientError as error:
            if error_code(error) == CONDITION_FAILED:
                return False
            raise_domain_error(error)
        return True

    def finish_extraction(self, scope: ScopeRef, message_id: str, saved: int) -> None:
        with domain_errors():
            self._client.update_item(
                TableName=self._table, Key=self._extraction_key(scope, message_id),
                UpdateExpression="SET #status = :done, saved = :saved", ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=to_item({":done": "done", ":saved": saved}))

    def release_extraction(self, scope: ScopeRef, message_id: str) -> None:
        """A failed extraction lets the next delivery try again at once."""
        with domain_errors():
            self._client.delete_item(TableName=self._table, Key=self._extraction_key(scope, message_id))

    @staticmethod
    def _extraction_key(scope: ScopeRef, message_id: str) -> dict[str, Any]:
        """The one item that leases a logged message's extraction and then marks it done."""
        return to_item({"pk": partition_key(scope), "sk": extraction_sort_key(message_id)})

    # ---- L2: hot memory ------------------------------------------------------------------------

    def put_hot(self, scope: ScopeRef, entry: HotMemoryEntry) -> HotMemoryEntry:
        """Upsert by (scope, type, key), keeping the first created_at; bumps the scope's version."""
        pk = partition_key(scope)
        key = to_item({"pk": pk, "sk": hot_sort_key(entry.type.value, entry.key)})
        try:
            existing = self._client.get_item(TableName=self._table, Key=key, ConsistentRead=True).get("Item")
            created_at = from_item(existing)["created_at"] if existing else entry.created_at.isoformat()
            stored = entry.model_copy(update={"created_at": datetime.fromisoformat(created_at)})
            transact_recorded(self._client, self._table, pk,
                              [{"Put": {"TableName": self._table, "Item": hot_item(pk, stored)}}])
        except ClientError as error:
            raise_domain_error(error)
        return stored

    def hot_memory(self, scope: ScopeRef) -> list[HotMemoryEntry]:
        """Highest priority first, then most recently updated."""
        items = self._query(KeyConditionExpression="pk = :pk AND begins_with(sk, :hot)",
                            ExpressionAttributeValues=to_item({":pk": partition_key(scope), ":hot": HOT_PREFIX}))
        entries = [hot_from_item(i) for i in items]
        return sorted(entries, key=lambda e: (-e.priority, -e.updated_at.timestamp(), e.type, e.key))

    def delete_hot(self, scope: ScopeRef, type_: HotMemoryType, key: str) -> None:
        pk = partition_key(scope)
        try:
            transact_recorded(self._client, self._table, pk, [
                {"Delete": {"TableName": self._table, "Key": to_item({"pk": pk, "sk": hot_sort_key(type_.value, key)}),
                            "ConditionExpression": "attribute_exists(pk)"}}])
        except ClientError as error:
            if error_code(error) == TRANSACTION_CANCELLED:
                raise NotFound(f"no hot memory {type_.value}/{key}") from error
            raise_domain_error(error)

    # ---- L3: weekly reports --------------------------------------------------------------------

    def put_report_if_absent(self, scope: ScopeRef, report: WeeklyReport) -> bool:
        """One report per (scope, week): False when the week already has one (a re-run, a redelivery)."""
        return self._put_report(scope, report, condition="attribute_not_exists(pk)")

    def replace_report(self, scope: ScopeRef, report: WeeklyReport) -> bool:
        return self._put_report(
            scope, report, condition="attribute_exists(pk) AND (attribute_not_exists(messages_covered) "
                                     "OR messages_covered < :covered)",
            values={":covered": _covered(report)})

    def _put_report(self, scope: ScopeRef, report: WeeklyReport, *, condition: str,
                    values: dict[str, Any] | None = None) -> bool:
        item = report_item(partition_key(scope), report)
        extra: dict[str, Any] = {"ExpressionAttributeValues": to_item(values)} if values else {}
        try:
            self._client.put_item(TableName=self._table, Item=item, ConditionExpression=condition, **extra)
        except ClientError as error:
            if error_code(error) == CONDITION_FAILED:
                return False
            raise_domain_error(error)
        return True

    def report_stage(self, scope: ScopeRef, week_start: date) -> str | None:
        """None = the week has no report yet; else how far its rollup got: "written" (the report), then
        "complete" (hot memory refreshed too). A re-run or a redelivery resumes from there."""
        key = to_item({"pk": partition_key(scope), "sk": report_sort_key(week_start)})
        try:
            item = self._client.get_item(TableName=self._table, Key=key, ConsistentRead=True,
                                         ProjectionExpression="sk, rollup_stage").get("Item")
        except ClientError as error:
            raise_domain_error(error)
        if item is None:
            return None
        return str(item["rollup_stage"]["S"]) if "rollup_stage" in item else "written"

    def mark_report_stage(self, scope: ScopeRef, week_start: date, stage: str) -> None:
        try:
            self._client.update_item(
                TableName=self._table,
                Key=to_item({"pk": partition_key(scope), "sk": report_sort_key(week_start)}),
                UpdateExpression="SET rollup_stage = :stage", ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues=to_item({":stage": stage}))
        except ClientError as error:
            raise_domain_error(error)

    def reports(self, scope: ScopeRef) -> list[WeeklyReport]:
        """Newest week first."""
        items = self._query(KeyConditionExpression="pk = :pk AND begins_with(sk, :report)",
                            ExpressionAttributeValues=to_item({":pk": partition_key(scope), ":report": REPORT_PREFIX}),
                            ScanIndexForward=False)
        return [report_from_item(i) for i in items]

    # ---- the rollup's fan-out ------------------------------------------------------------------

    def active_scopes(self, week_start: date, shard: int, *, cursor: dict[str, Any] | None = None,
                      limit: int = 500) -> tuple[list[ScopeRef], dict[str, Any] | None]:
        kwargs: dict[str, Any] = {
            "TableName": self._table, "KeyConditionExpression": "pk = :pk", "Limit": limit,
            "ExpressionAttributeValues": to_item({":pk": active_partition_key(week_start, shard)}),
            "ProjectionExpression": "tenant_id, scope_id",
        }
        if cursor:
            kwargs["ExclusiveStartKey"] = cursor
        try:
            response = self._client.query(**kwargs)
        except ClientError as error:
            raise_domain_error(error)
        scopes = [ScopeRef(tenant_id=v["tenant_id"], user_id=v["scope_id"])
                  for v in map(from_item, response.get("Items", []))]
        return scopes, response.get("LastEvaluatedKey")

    # ---- internals ----------------------------------------------------------------------------

    def _query(self, **kwargs: Any) -> list[dict[str, Any]]:
        return list(self._pages(**kwargs))

    def _pages(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        kwargs["TableName"] = self._table
        try:
            while True:
                response = self._client.query(**kwargs)
                yield from response.get("Items", [])
                if "LastEvaluatedKey" not in response:
                    return
                kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        except ClientError as error:
            raise_domain_error(error)

    def _batch_delete(self, keys: list[dict[str, Any]]) -> None:
        try:
            write_all(self._client, self._table, [{"DeleteRequest": {"Key": k}} for k in keys])
        except ClientError as error:
            raise_domain_error(error)


def log_item(pk: str, message: LogMessage) -> dict[str, Any]:
    values = message.model_dump(mode="json", exclude={"embedding"}, exclude_none=True)
    values["expires_at"] = ttl_seconds(message.expires_at)  # the table's TTL attribute: epoch seconds
    item = to_item({"pk": pk, "sk": log_sort_key(message), "kind": "log", **values})
    if message.embedding:
        item["embedding"] = to_value(Binary(message.embedding))
    return item


def hot_item(pk: str, entry: HotMemoryEntry) -> dict[str, Any]:
    return to_item({"pk": pk, "sk": hot_sort_key(entry.type.value, entry.key), "kind": "hot", "type": entry.type.value,
                    "key": entry.key, "value_json": json.dumps(entry.value, ensure_ascii=False),
                    "priority": entry.priority, "source": entry.source, "created_at": entry.created_at.isoformat(),
                    "updated_at": entry.updated_at.isoformat()})


def report_item(pk: str, report: WeeklyReport) -> dict[str, Any]:
    fields = report.model_dump(mode="json", exclude={"embedding", "metrics", "key_events"}, exclude_none=True)
    item = to_item({"pk": pk, "sk": report_sort_key(report.week_start), "kind": "report",
                    "metrics_json": json.dumps(report.metrics, ensure_ascii=False),
                    "key_events": report.key_events or None, "messages_covered": _covered(report), **fields})
    if report.embedding:
        item["embedding"] = to_value(Binary(report.embedding))
    return item


def log_from_item(item: dict[str, Any]) -> LogMessage:
    values = from_item(item)
    for key in ("pk", "sk", "kind"):
        values.pop(key, None)
    values["expires_at"] = datetime.fromtimestamp(int(values["expires_at"]), UTC)
    if isinstance(values.get("embedding"), Binary):
        values["embedding"] = bytes(values["embedding"])
    return LogMessage.model_validate(values)


def hot_from_item(item: dict[str, Any]) -> HotMemoryEntry:
    values = from_item(item)
    return HotMemoryEntry(type=values["type"], key=values["key"], value=json.loads(values["value_json"]),
                          priority=int(values.get("priority", 0)), source=values.get("source", "api"),
                          created_at=values["created_at"], updated_at=values["updated_at"])


def _covered(report: WeeklyReport) -> int:
    """How many of the week's log messages the report was written from."""
    return int(report.metrics.get("messages", 0) or 0)


def report_from_item(item: dict[str, Any]) -> WeeklyReport:
    values = from_item(item)
    for key in ("pk", "sk", "kind"):
        values.pop(key, None)
    values["metrics"] = json.loads(values.pop("metrics_json", None) or "{}")
    values["key_events"] = list(values.get("key_events") or [])
    if isinstance(values.get("embedding"), Binary):
        values["embedding"] = bytes(values["embedding"])
    return WeeklyReport.model_validate(values)
