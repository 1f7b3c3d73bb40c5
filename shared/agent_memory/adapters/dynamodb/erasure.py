"""Erasure in the memory table: a scope's items removed, counted and looked for again; tombstones and receipts.

What a scope owns in the table (see domain/keys.py and the adapters beside this one):
  ``T#<tenant>#U#<scope>``       its partition: MEM#, FIELD#, HASH#, KW#, META, LOG#, LOGX#, HOT#, REPORT#, FILE#
  ``CTX#T#<tenant>#U#<scope>``   the context cache
  ``SNAP#T#<tenant>#U#<scope>``  saved search indexes
  ``ACTIVE#<week>#<shard>``      the rollup's marker of a week the scope logged in (sort key: the scope's partition)
Every item of the three partitions is read (keys only) and deleted in batches, whatever its kind; the markers are
looked up for every week the scope's log names and every week a marker written now could still be alive for.

Beside them, apart from the scope's partitions (so a read of those finds nothing after an erasure):
  ``T#<tenant>#ERASED``   sk ``U#<scope>``: the tombstone the workers check
  ``T#<tenant>#ERASURE``  sk ``<erasure id>``: the receipt
both with ``expires_at`` (the table's TTL).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.batch import partition_key_pages, read_all, write_all
from agent_memory.adapters.dynamodb.items import epoch_now, from_item, raise_domain_error, to_item, ttl_seconds
from agent_memory.adapters.dynamodb.memory_layers import ACTIVE_MARKER_DAYS
from agent_memory.domain.keys import (
    LOG_PREFIX,
    active_partition_key,
    active_shard,
    cache_partition_key,
    partition_key,
    scope_sort_key,
    snapshot_partition_key,
    tenant_section_key,
)
from agent_memory.domain.lifecycle.erasure import (
    CONTEXT_CACHE,
    INDEX_SNAPSHOTS,
    ROLLUP_MARKERS,
    ErasureReceipt,
    OutOfTime,
    Tombstone,
    store_of,
)
from agent_memory.domain.models import ScopeRef, utcnow

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

TOMBSTONES = "ERASED"
RECEIPTS = "ERASURE"


def _mondays(start: date, end: date) -> list[date]:
    first = start - timedelta(days=start.weekday())
    return [first + timedelta(days=7 * n) for n in range((end - first).days // 7 + 1)]


def _recent_weeks(now: datetime) -> list[date]:
    """Every week a marker written up to now may still be alive for (markers live ACTIVE_MARKER_DAYS)."""
    return _mondays(now.date() - timedelta(days=ACTIVE_MARKER_DAYS + 8), now.date() + timedelta(days=8))


def _log_weeks(sort_key: str) -> list[date]:
    """The weeks a logged message's marker may name (its week in any timezone: the Mondays around it)."""
    try:
        moment = datetime.fromisoformat(sort_key.split("#")[1].rstrip("Z")).replace(tzinfo=UTC)
    except (IndexError, ValueError):
        return []
    day, around = moment.date(), timedelta(days=8)
    # A message stored before dates were bounded may sit at the calendar's edge (0001-01-03).
    return _mondays(day - around if day > date.min + around else date.min,
                    day + around if day < date.max - around else date.max)


class DynamoScopeEraser:
    """Sweeps a scope out of the table. `shards`: the rollup's active-scope shards (settings.rollup_shards)."""

    def __init__(self, *, table_name: str, client: DynamoDBClient, shards: int) -> None:
        self._table = table_name
        self._client = client
        self._shards = shards

    # ---- removal -------------------------------------------------------------------------------

    def sweep(self, scope: ScopeRef, *, deadline: float, now: datetime, weeks: set[date]) -> Counter[str]:
        """Everything of the scope in the table, deleted: items removed by store. OutOfTime at `deadline`
        (time.monotonic), with the count so far. `weeks` gains the weeks whose rollup markers were looked up
        (for the final check)."""
        removed: Counter[str] = Counter()
        weeks.update(_recent_weeks(now))
        for store, pk in self._partitions(scope):
            for page in partition_key_pages(self._client, self._table, pk):
                if time.monotonic() > deadline:
                    raise OutOfTime(removed)
                if store is None:
                    weeks.update(week for item in page if item["sk"]["S"].startswith(LOG_PREFIX)
                                 for week in _log_weeks(item["sk"]["S"]))
                self._delete([{"pk": item["pk"], "sk": item["sk"]} for item in page])
                removed.update(store or store_of(item["sk"]["S"]) for item in page)
        markers = self._markers(scope, weeks)
        self._delete(markers)
        removed[ROLLUP_MARKERS] += len(markers)
        return removed

    def remaining(self, scope: ScopeRef, *, now: datetime, weeks: set[date]) -> Counter[str]:
        """The final check: what the table still holds of the scope, by store (an empty Counter: nothing)."""
        left: Counter[str] = Counter()
        for store, pk in self._partitions(scope):
            for page in partition_key_pages(self._client, self._table, pk):
                left.update(store or store_of(item["sk"]["S"]) for item in page)
        left[ROLLUP_MARKERS] += len(self._markers(scope, weeks | set(_recent_weeks(now))))
        return +left

    def _partitions(self, scope: ScopeRef) -> list[tuple[str | None, str]]:
        """(the store every item of it belongs to, None: by each item's kind; the partition key)."""
        return [(None, partition_key(scope)), (CONTEXT_CACHE, cache_partition_key(scope)),
                (INDEX_SNAPSHOTS, snapshot_partition_key(scope))]

    def _markers(self, scope: ScopeRef, weeks: set[date]) -> list[dict[str, Any]]:
        """The keys of the scope's active-week markers that exist, for these weeks: one BatchGetItem per 100."""
        shard, pk = active_shard(scope, self._shards), partition_key(scope)
        keys = [{"pk": {"S": active_partition_key(week, shard)}, "sk": {"S": pk}} for week in sorted(weeks)]
        return [{"pk": item["pk"], "sk": item["sk"]} for item in read_all(self._client, self._table, keys,
                                                                           projection="pk, sk")]

    def _delete(self, keys: list[dict[str, Any]]) -> None:
        try:
            write_all(self._client, self._table, [{"DeleteRequest": {"Key": key}} for key in keys])
        except ClientError as error:
            raise_domain_error(error)

    # ---- tombstones and receipts ---------------------------------------------------------------

    def put_tombstone(self, tombstone: Tombstone) -> None:
        self._put({"pk": tenant_section_key(tombstone.tenant_id, TOMBSTONES), "sk": scope_sort_key(tombstone.user_id),
                   "kind": "tombstone", "erased_at": tombstone.erased_at.isoformat(),
                   "erasure_id": tombstone.erasure_id, "expires_at": ttl_seconds(tombstone.expires_at),
                   **({"completed_at": tombstone.completed_at.isoformat()} if tombstone.completed_at else {})})

    def tombstone(self, scope: ScopeRef) -> Tombstone | None:
        """The scope's unexpired tombstone, if it was ever erased."""
        item = self._get(tenant_section_key(scope.tenant_id, TOMBSTONES), scope_sort_key(scope.user_id))
        if item is None or int(item["expires_at"]) <= epoch_now(utcnow()):
            return None
        return Tombstone(tenant_id=scope.tenant_id, user_id=scope.user_id, erasure_id=item["erasure_id"],
                         erased_at=datetime.fromisoformat(item["erased_at"]),
                         expires_at=datetime.fromtimestamp(int(item["expires_at"]), UTC),
                         completed_at=datetime.fromisoformat(item["completed_at"]) if item.get("completed_at")
                         else None)

    def put_receipt(self, receipt: ErasureReceipt, expires_at: datetime) -> None:
        self._put({"pk": tenant_section_key(receipt.tenant_id, RECEIPTS), "sk": receipt.erasure_id,
                   "kind": "erasure_receipt", "receipt_json": receipt.model_dump_json(),
                   "expires_at": ttl_seconds(expires_at)})

    def receipt(self, tenant_id: str, erasure_id: str) -> ErasureReceipt | None:
        item = self._get(tenant_section_key(tenant_id, RECEIPTS), erasure_id)
        if item is None or int(item["expires_at"]) <= epoch_now(utcnow()):
            return None
        return ErasureReceipt.model_validate(json.loads(item["receipt_json"]))

    def _put(self, values: dict[str, Any]) -> None:
        try:
            self._client.put_item(TableName=self._table, Item=to_item(values))
        except ClientError as error:
            raise_domain_error(error)

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        try:
            item = self._client.get_item(TableName=self._table, Key=to_item({"pk": pk, "sk": sk}),
                                         ConsistentRead=True).get("Item")
        except ClientError as error:
            raise_domain_error(error)
        return from_item(item) if item else None
