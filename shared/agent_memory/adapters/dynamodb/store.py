"""DynamoDB memory store: the source of truth.

One table, one partition per (tenant, user): ``pk = T#<tenant>#U#<user>``, so every query is
scoped by construction and one tenant's request can never name another tenant's items.

Items in a partition:
  ``META``            the user's version counter (bumped by every write; caches key on it)
  ``CHG#<version>``   what the write that moved the counter there stored, for indexes to follow (changes.py)
  ``MEM#<key>``       a memory version, current, superseded or deleted (history is kept, never overwritten:
                      a delete marks the version `deleted_at`, so what was known before it can be read as of
                      then; erasing the user removes the partition)
  ``FIELD#<field>``   pointer to the current memory of a field: the upsert slot
  ``HASH#<digest>``   marker of current content, so identical content is stored once
  ``KW#<keyword>#<key>``  the keyword index: one item per keyword of a current memory

The domain decides what a save supersedes (domain/lifecycle/supersession.py); the store writes it, one
TransactWriteItems for several saves, whose conditions make concurrent saves safe: the field
pointer must still point where we read it, and the content marker must not exist.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.access import record_access
from agent_memory.adapters.dynamodb.batch import partition_key_pages, read_all, write_all
from agent_memory.adapters.dynamodb.changes import (
    folded,
    read_changes,
    read_recent,
    read_versions,
    recorded_bump,
    transact_recorded,
    versions_of,
)
from agent_memory.adapters.dynamodb.cursors import decode_cursor, encode_cursor
from agent_memory.adapters.dynamodb.items import (
    BUSY,
    TRANSACTION_CANCELLED,
    bump_version,
    domain_errors,
    error_code,
    from_item,
    memory_from_item,
    raise_domain_error,
    throttled_transaction,
    to_item,
    transact_write,
)
from agent_memory.adapters.dynamodb.memory_writes import (
    MAX_TRANSACTION_ACTIONS,
    MAX_TRANSACTION_BYTES,
    delete_if_points_to,
    keyword_deletes,
    save_writes,
    touched_items,
    written_bytes,
)
from agent_memory.domain.keys import (
    CHANGE_PREFIX,
    CONTENT_PREFIX,
    FIELD_PREFIX,
    MEMORY_PREFIX,
    META,
    cache_partition_key,
    content_sort_key,
    field_sort_key,
    memory_sort_key,
    new_memory_key,
    partition_key,
    snapshot_partition_key,
)
from agent_memory.domain.lifecycle.retention import RetentionPolicy
from agent_memory.domain.lifecycle.supersession import CurrentMemories, plan_saves
from agent_memory.domain.models import (
    AccessStats,
    Memory,
    MemoryPage,
    MemoryType,
    NewMemory,
    PartialSave,
    SaveOutcome,
    SaveResult,
    ScopeRef,
    StoreVersions,
    content_hash,
    deleted_version,
    utcnow,
)
from agent_memory.domain.search.index_changes import IndexChanges, RecentWrites
from agent_memory.errors import AgentMemoryError, Conflict, NotFound, Throttled

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient


def _backoff(attempt: int) -> None:
    """Full-jitter backoff between optimistic retries, so racing writers spread out."""
    time.sleep(random.uniform(0, min(0.2, 0.01 * 2**attempt)))


class DynamoMemoryStore:
    """`retention`: each tenant's policy (domain/lifecycle/retention.py). An expired memory is read by nothing, before
    DynamoDB's TTL sweeper removes it; a save that meets one (its content, its field) removes it first."""

    def __init__(self, *, table_name: str, client: DynamoDBClient, max_attempts: int = 8,
                 retention: Callable[[str], RetentionPolicy] | None = None) -> None:
        self._table = table_name
        self._client = client
        self._max_attempts = max_attempts
        self._retention = retention

    def _kept(self, memory: Memory) -> bool:
        return self._retention is None or self._retention(memory.tenant_id).kept(memory, utcnow())

    # ---- writes -------------------------------------------------------------------------

    def save(self, user: ScopeRef, memory: NewMemory) -> SaveResult:
        return self._save_all(user, [memory], [])[0]

    def save_many(self, user: ScopeRef, memories: list[NewMemory]) -> list[SaveResult]:
        """Saves in order, with the results saving one by one would give, in as few round trips as
        DynamoDB's transactions allow: two consistent batch reads of what the batch touches, then the
        domain's decisions written several to a transaction."""
        results: list[SaveResult] = []
        try:
            self._save_all(user, memories, results)
        except AgentMemoryError as error:
            raise PartialSave(results, error) from error
        return results

    def _save_all(self, user: ScopeRef, memories: list[NewMemory], results: list[SaveResult]) -> list[SaveResult]:
        """Appends each item's result to `results` once it is stored, so a fault leaves the list true. A
        transaction cancelled by a concurrent write is read again and decided again from its first item on."""
        attempt, progress = 0, -1
        while len(results) < len(memories):
            if len(results) > progress:
                attempt, progress = 0, len(results)
            elif attempt == self._max_attempts:
                raise Conflict("too many concurrent writes to this memory field, retry",
                               details=[{"field": "field"}])
            if attempt:
                _backoff(attempt)
            attempt += 1
            remaining = memories[len(results):]
            read = self._current_memories(user, remaining)
            if read is not None:  # None: a marker or pointer names a memory deleted meanwhile; read again
                current, seen = read
                self._write_in_transactions(user, plan_saves(user, remaining, current, new_memory_key), results,
                                            seen)
        return results

    def _current_memories(self, user: ScopeRef,
                          memories: list[NewMemory]) -> tuple[CurrentMemories, StoreVersions] | None:
        """The current memories holding these contents or fields, and the counters they were read at: one
        consistent batch read of the counter, the content markers and the field pointers, one of the memories
        they name."""
        pk = partition_key(user)
        slots = [content_sort_key(digest) for digest in sorted({content_hash(m.content) for m in memories})]
        slots += [field_sort_key(field) for field in sorted({m.field for m in memories if m.field})]
        found = read_all(self._client, self._table, [to_item({"pk": pk, "sk": sk}) for sk in [META, *slots]],
                         attempts=self._max_attempts, projection="sk, memory_key, version, generation")
        values_of = list(map(from_item, found))
        seen = versions_of(next((values for values in values_of if values["sk"] == META), {}))
        pointers = {str(values["sk"]): str(values["memory_key"]) for values in values_of if values["sk"] != META}
        keys = [to_item({"pk": pk, "sk": memory_sort_key(key)}) for key in sorted(set(pointers.values()))]
        stored = {m.memory_key: m for m in map(memory_from_item, read_all(
            self._client, self._table, keys, attempts=self._max_attempts))} if keys else {}
        if any(key not in stored for key in pointers.values()):
            return None
        expired = [memory for memory in stored.values() if not self._kept(memory)]
        for memory in expired:  # gone for every reader already: removed, then read again
            with contextlib.suppress(Conflict, NotFound):  # changed or removed meanwhile: the next read sees how
                self._delete(user, memory)
        if expired:
            return None
        return CurrentMemories(
            by_content={sk.removeprefix(CONTENT_PREFIX): stored[k] for sk, k in pointers.items()
                        if sk.startswith(CONTENT_PREFIX)},
            by_field={sk.removeprefix(FIELD_PREFIX): stored[k] for sk, k in pointers.items()
                      if sk.startswith(FIELD_PREFIX)},
        ), seen

    def _write_in_transactions(self, user: ScopeRef, planned: list[SaveResult], results: list[SaveResult],
                               seen: StoreVersions) -> None:
        """The decided saves, in order, as few transactions as their size, action count and the rule of one
        action per item allow; stops at the first transaction a concurrent write cancels (one that moved the
        counter since `seen` too)."""
        group: list[SaveResult] = []
        actions: list[dict[str, Any]] = []
        touched: set[str] = set()
        size = 0
        for result in planned:
            writes = save_writes(self._table, result)
            items, more_bytes = touched_items(writes), written_bytes(result)
            if writes and (len(actions) + len(writes) + 2 > MAX_TRANSACTION_ACTIONS  # +2: the recorded bump
                           or size + more_bytes > MAX_TRANSACTION_BYTES or items & touched):
                moved = self._commit(user, group, actions, results, seen)
                if moved is None:
                    return
                seen = moved
                group, actions, touched, size = [], [], set(), 0
            group.append(result)
            actions += writes
            touched |= items
            size += more_bytes
        self._commit(user, group, actions, results, seen)

    def _commit(self, user: ScopeRef, group: list[SaveResult], actions: list[dict[str, Any]],
                results: list[SaveResult], seen: StoreVersions) -> StoreVersions | None:
        """One transaction for the group (one version per memory written, recorded in the change log with every
        memory version it stores); the counters after it, or None if it was cancelled."""
        stored = [r for r in group if r.outcome is not SaveOutcome.DUPLICATE]
        if stored:
            written = [version for r in stored for version in (r.superseded, r.memory) if version is not None]
            try:
                transact_write(self._client, [*actions, *recorded_bump(
                    self._table, partition_key(user), seen=seen, by=len(stored), written=written)])
            except ClientError as error:
                if error_code(error) != TRANSACTION_CANCELLED:
                    raise_domain_error(error)
                if throttled_transaction(error):
                    raise Throttled(BUSY) from error
                return None
        results.extend(group)
        return seen.model_copy(update={"content": seen.content + len(stored)})

    def delete(self, user: ScopeRef, memory_key: str) -> Memory:
        """The version leaves everything current (search, listing, the profile, `get`) and stays as history,
        marked deleted: valid until now. NotFound when there is none, or it was deleted already."""
        memory = self.get(user, memory_key)
        if memory is None:
            raise NotFound(f"memory {memory_key} not found", details=[{"field": "memory_key"}])
        return self._delete(user, memory)

    def _delete(self, user: ScopeRef, memory: Memory) -> Memory:
        memory_key = memory.memory_key
        at = utcnow()
        pk = partition_key(user)
        # A current version is retired now (and must still be current: a concurrent save may have retired it);
        # a version already retired keeps the end of its validity.
        retire = ", superseded_at = :at" if memory.is_current else ""
        actions: list[dict[str, Any]] = [
            {"Update": {
                "TableName": self._table, "Key": to_item({"pk": pk, "sk": memory_sort_key(memory_key)}),
                "UpdateExpression": f"SET deleted_at = :at, updated_at = :at{retire}",
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(deleted_at)"
                + (" AND attribute_not_exists(superseded_at)" if memory.is_current else ""),
                "ExpressionAttributeValues": to_item({":at": at.isoformat()})}},
        ]
        if memory.is_current:
            actions.append(delete_if_points_to(self._table, pk, content_sort_key(memory.content_hash), memory_key))
            actions.extend(keyword_deletes(self._table, pk, memory))
            if memory.field:
                # A memory stored under a former field name is read under the current one, whose pointer
                # it never had: no pointer is nothing to delete.
                actions.append(delete_if_points_to(self._table, pk, field_sort_key(memory.field), memory_key,
                                                   or_absent=True))
        retired = deleted_version(memory, at)
        try:
            transact_recorded(self._client, self._table, pk, actions, written=[retired],
                              attempts=self._max_attempts)
        except ClientError as error:
            if error_code(error) == TRANSACTION_CANCELLED:
                raise Conflict("the memory changed while it was being deleted, retry") from error
            raise_domain_error(error)
        return memory

    def purge(self, user: ScopeRef, memory_key: str) -> list[Memory]:
        """The memory and every version of its field (deleted and expired ones too) removed from the table, then
        the user's saved search indexes and assembled contexts, which hold copies of their text. The current
        version is retired first as a delete retires it (its pointers and keywords in one transaction); a purge
        stopped half-way leaves only history, and running it again finishes it."""
        every = list(self._iter_memories(user))
        memory = next((m for m in every if m.memory_key == memory_key), None)
        if memory is None:
            raise NotFound(f"memory {memory_key} not found", details=[{"field": "memory_key"}])
        versions = [m for m in every if m.field == memory.field] if memory.field else [memory]
        for version in versions:
            if version.is_current:
                self._delete(user, version)
        pk = partition_key(user)
        try:
            write_all(self._client, self._table, [
                {"DeleteRequest": {"Key": to_item({"pk": pk, "sk": memory_sort_key(m.memory_key)})}} for m in versions])
            # The change log holds copies of the text too. The bump records nothing: indexes build again.
            for keys in partition_key_pages(self._client, self._table, pk, prefix=CHANGE_PREFIX):
                write_all(self._client, self._table, [{"DeleteRequest": {"Key": key}} for key in keys])
            self._client.update_item(**bump_version(self._table, pk)["Update"])
            for derived in (snapshot_partition_key(user), cache_partition_key(user)):
                self._delete_partition(derived)
        except ClientError as error:
            raise_domain_error(error)
        except RuntimeError as error:  # deletes left unprocessed under load
            raise Throttled("the table is busy: the purge stopped part-way, run it again") from error
        return sorted(versions, key=lambda m: (m.valid_from, m.memory_key))

    def _delete_partition(self, pk: str) -> None:
        for keys in partition_key_pages(self._client, self._table, pk):
            write_all(self._client, self._table, [{"DeleteRequest": {"Key": key}} for key in keys])

    def record_access(self, user: ScopeRef, memory_keys: list[str], accessed_at: datetime) -> None:
        record_access(self._client, self._table, user, memory_keys, accessed_at)

    def access_stats(self, user: ScopeRef) -> dict[str, AccessStats]:
        params: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "FilterExpression": "access_count > :zero",
            "ProjectionExpression": "sk, access_count, last_accessed_at",
            "ExpressionAttributeValues": to_item({":pk": partition_key(user), ":prefix": MEMORY_PREFIX, ":zero": 0}),
        }
        stats: dict[str, AccessStats] = {}
        while True:
            try:
                response = self._client.query(**params)
            except ClientError as error:
                raise_domain_error(error)
            for item in map(from_item, response.get("Items", [])):
                stats[str(item["sk"]).removeprefix(MEMORY_PREFIX)] = AccessStats(
                    access_count=int(item.get("access_count", 0)), last_accessed_at=item.get("last_accessed_at"))
            if "LastEvaluatedKey" not in response:
                return stats
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    # ---- reads --------------------------------------------------------------------------

    def get(self, user: ScopeRef, memory_key: str) -> Memory | None:
        memory = self._get(user, memory_key)
        return memory if memory is not None and self._kept(memory) else None

    def _get(self, user: ScopeRef, memory_key: str) -> Memory | None:
        try:
            response = self._client.get_item(
                TableName=self._table,
                Key=to_item({"pk": partition_key(user), "sk": memory_sort_key(memory_key)}),
                ConsistentRead=True,
            )
        except ClientError as error:
            raise_domain_error(error)
        item = response.get("Item")
        memory = memory_from_item(item) if item else None
        return None if memory is None or memory.is_deleted else memory

    def history(self, user: ScopeRef, memory: Memory) -> list[Memory]:
        """Every version of the memory's field, deleted ones included, oldest first (just the memory when it has
        no field)."""
        if not memory.field:
            return [memory]
        versions = [m for m in self._iter_memories(user) if m.field == memory.field and self._kept(m)]
        return sorted(versions, key=lambda m: (m.valid_from, m.memory_key))

    def all_versions(self, user: ScopeRef) -> list[Memory]:
        return [m for m in self._iter_memories(user) if self._kept(m)]  # an expired version: not even as of then

    def list_current(
        self,
        user: ScopeRef,
        *,
        memory_type: MemoryType | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> MemoryPage:
        start_key = decode_cursor(cursor) if cursor else None
        items: list[Memory] = []
        has_more = False
        # Pages of the size asked for (plus the one that tells whether there is more): a default page is up
        # to 1 MB of items, read and paid for even when 20 are wanted.
        for memory in self._iter_memories(user, newest_first=True, start_after=start_key, page_size=limit + 1):
            if not memory.is_current or (memory_type and memory.memory_type != memory_type) or not self._kept(memory):
                continue
            if len(items) == limit:
                has_more = True
                break
            items.append(memory)
        next_cursor = encode_cursor(items[-1].memory_key) if has_more else None
        return MemoryPage(items=items, next_cursor=next_cursor)

    def all_current(self, user: ScopeRef) -> list[Memory]:
        return [m for m in self._iter_memories(user) if m.is_current and self._kept(m)]

    def user_version(self, user: ScopeRef) -> int:
        return self.versions(user).content

    def versions(self, user: ScopeRef) -> StoreVersions:
        with domain_errors():
            return read_versions(self._client, self._table, partition_key(user))

    def changes(self, user: ScopeRef, after: StoreVersions, through: StoreVersions, *,
                every_version: bool = False) -> IndexChanges | None:
        """From the change log in one Query (changes.py); memories expired since are left out."""
        if after.generation != through.generation or after.content > through.content:
            return None
        with domain_errors():
            records = read_changes(self._client, self._table, partition_key(user), after=after.content,
                                   through=through.content)
        return None if records is None else folded(records, kept=self._kept, every_version=every_version)

    def recent_writes(self, user: ScopeRef, since: float, *, limit: int = 50) -> RecentWrites:  # newest first
        with domain_errors():
            records = read_recent(self._client, self._table, partition_key(user), since=since, limit=limit)
        return RecentWrites.folded(((r.written_at or 0.0, r.written) for r in reversed(records)), kept=self._kept)

    # ---- internals ----------------------------------------------------------------------

    def _iter_memories(
        self, user: ScopeRef, *, newest_first: bool = False, start_after: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[Memory]:
        params: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": partition_key(user), ":prefix": MEMORY_PREFIX}),
            "ScanIndexForward": not newest_first,
            "ConsistentRead": True,
        }
        if page_size:
            params["Limit"] = page_size
        if start_after:
            params["ExclusiveStartKey"] = to_item({"pk": partition_key(user), "sk": memory_sort_key(start_after)})
        while True:
            try:
                response = self._client.query(**params)
            except ClientError as error:
                raise_domain_error(error)
            for item in response.get("Items", []):
                yield memory_from_item(item)
            if "LastEvaluatedKey" not in response:
                return
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]
