"""DynamoDB memory store: the source of truth.

One table, one partition per (tenant, user): ``pk = T#<tenant>#U#<user>``, so every query is
scoped by construction and one tenant's request can never name another tenant's items.

Items in a partition:
  ``META``            the user's version counter (bumped by every write; caches key on it)
  ``MEM#<key>``       a memory, current or superseded (history is kept, never overwritten)
  ``FIELD#<field>``   pointer to the current memory of a field: the upsert slot
  ``HASH#<digest>``   marker of current content, so identical content is stored once
  ``KW#<keyword>#<key>``  the keyword index: one item per keyword of a current memory

A save is one TransactWriteItems whose conditions make concurrent saves safe: the field
pointer must still point where we read it, and the content marker must not exist.
"""

from __future__ import annotations

import base64
import binascii
import random
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.batch import read_all
from agent_memory.adapters.dynamodb.items import (
    from_item,
    memory_from_item,
    memory_to_item,
    raise_domain_error,
    to_item,
)
from agent_memory.domain.keys import is_valid_memory_key, new_memory_key, partition_key
from agent_memory.domain.keywords import normalize_keyword
from agent_memory.domain.models import (
    AccessStats,
    Keyword,
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
    new_memory_version,
    superseded_by,
    utcnow,
)
from agent_memory.errors import AgentMemoryError, Conflict, InvalidInput, NotFound, Throttled


def _keyword_sk(term: str, memory_key: str) -> str:
    return f"KW#{normalize_keyword(term)}#{memory_key}"


def _unique_keywords(memory: Memory) -> list[Keyword]:
    """One keyword item per distinct normalised term (a transaction may not touch an item twice)."""
    seen: dict[str, Keyword] = {}
    for keyword in memory.keywords:
        seen.setdefault(normalize_keyword(keyword.term), keyword)
    return list(seen.values())


def _encode_cursor(memory_key: str) -> str:
    return base64.urlsafe_b64encode(memory_key.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        memory_key = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        memory_key = ""
    if not is_valid_memory_key(memory_key):
        raise InvalidInput("cursor: not a cursor this API returned", details=[{"field": "cursor"}])
    return memory_key


# DynamoDB's limits on one TransactWriteItems: 100 actions and 4 MB (kept well under, for the item overhead).
_MAX_TRANSACTION_ACTIONS = 100
_MAX_GROUP_BYTES = 2_000_000


def _transaction_cost(memory: Memory) -> tuple[int, int]:
    """What creating `memory` adds to a transaction: actions (item, content marker, keywords) and bytes."""
    return 2 + len(_unique_keywords(memory)), len(memory.model_dump_json()) + len(memory.embedding or b"")


def _backoff(attempt: int) -> None:
    """Full-jitter backoff between optimistic retries, so racing writers spread out."""
    time.sleep(random.uniform(0, min(0.2, 0.01 * 2**attempt)))


class DynamoMemoryStore:
    def __init__(self, *, table_name: str, client: Any, max_attempts: int = 8) -> None:
        self._table = table_name
        self._client = client
        self._max_attempts = max_attempts

    # ---- writes -------------------------------------------------------------------------

    def save(self, user: ScopeRef, memory: NewMemory) -> SaveResult:
        digest = content_hash(memory.content)
        for attempt in range(self._max_attempts):
            if attempt:
                _backoff(attempt)
            existing_key, current_key = self._read_slots(user, digest, memory.field)
            if existing_key is not None:
                existing = self.get(user, existing_key)
                if existing is not None:
                    return SaveResult(outcome=SaveOutcome.DUPLICATE, memory=existing)
                continue  # marker without memory: a concurrent delete is in flight; read again
            previous = self.get(user, current_key) if current_key else None
            if current_key and previous is None:
                continue  # pointer raced with a delete; read again
            new = new_memory_version(user, memory, new_memory_key(), previous)
            try:
                self._client.transact_write_items(TransactItems=self._save_actions(user, new, previous))
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                    raise_domain_error(error)
                reasons = [r.get("Code") for r in error.response.get("CancellationReasons", [])]
                if reasons and reasons[1:2] == ["ConditionalCheckFailed"]:
                    continue  # someone stored this content meanwhile: report it as a duplicate
                if "ThrottlingError" in reasons or "ProvisionedThroughputExceeded" in reasons:
                    raise Throttled("the memory store is busy, retry shortly") from error
                continue  # the field moved under us: re-read and try again
            if previous is None:
                return SaveResult(outcome=SaveOutcome.CREATED, memory=new)
            return SaveResult(outcome=SaveOutcome.SUPERSEDED, memory=new, superseded=superseded_by(previous, new))
        raise Conflict("too many concurrent writes to this memory field, retry", details=[{"field": "field"}])

    def save_many(self, user: ScopeRef, memories: list[NewMemory]) -> list[SaveResult]:
        """Saves in order, with the results saving one by one would give, in far fewer round trips.

        One consistent BatchGetItem reads every content marker the batch touches. Runs of memories that
        can only be created (no field, content stored nowhere and not repeated in the batch) are written
        together, several to a transaction with one version bump; the rest, and any group whose
        transaction is cancelled by a concurrent write, go through `save`, which handles every race.
        """
        results: list[SaveResult] = []
        try:
            self._save_in_groups(user, memories, results)
        except AgentMemoryError as error:
            raise PartialSave(results, error) from error
        return results

    def _save_in_groups(self, user: ScopeRef, memories: list[NewMemory], results: list[SaveResult]) -> None:
        """Appends each item's result to `results` once it is stored, so a fault leaves the list true."""
        digests = [content_hash(m.content) for m in memories]
        stored = self._content_markers(user, set(digests))
        group: list[tuple[NewMemory, Memory]] = []
        actions, size = 1, 0  # the group's transaction so far: its version bump, and what its memories add
        seen: set[str] = set()
        for memory, digest in zip(memories, digests, strict=True):
            creatable = not memory.field and digest not in stored and digest not in seen
            seen.add(digest)
            stored_form = new_memory_version(user, memory, new_memory_key(), None) if creatable else None
            more_actions, more_bytes = _transaction_cost(stored_form) if stored_form else (0, 0)
            if stored_form is None or actions + more_actions > _MAX_TRANSACTION_ACTIONS \
                    or size + more_bytes > _MAX_GROUP_BYTES:
                self._create_group(user, group, results)
                group, actions, size = [], 1, 0
            if stored_form is None:
                results.append(self.save(user, memory))
            else:
                group.append((memory, stored_form))
                actions, size = actions + more_actions, size + more_bytes
        self._create_group(user, group, results)

    def _create_group(self, user: ScopeRef, group: list[tuple[NewMemory, Memory]], results: list[SaveResult]
                      ) -> None:
        if not group:
            return
        actions = [action for _, memory in group for action in self._save_actions(user, memory, None)[:-1]]
        actions.append(self._bump_version(user, by=len(group)))  # one item, once per transaction
        try:
            self._client.transact_write_items(TransactItems=actions)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise_domain_error(error)
            # Something of the group was stored meanwhile: one by one, each outcome is decided alone.
            for proposed, _ in group:
                results.append(self.save(user, proposed))
            return
        results.extend(SaveResult(outcome=SaveOutcome.CREATED, memory=memory) for _, memory in group)

    def _content_markers(self, user: ScopeRef, digests: set[str]) -> set[str]:
        """Which of these contents the user's memories hold now (strongly consistent)."""
        pk = partition_key(user)
        keys = [to_item({"pk": pk, "sk": f"HASH#{digest}"}) for digest in sorted(digests)]
        items = read_all(self._client, self._table, keys, attempts=self._max_attempts, projection="sk")
        return {str(from_item(item)["sk"]).removeprefix("HASH#") for item in items}

    def delete(self, user: ScopeRef, memory_key: str) -> Memory:
        memory = self.get(user, memory_key)
        if memory is None:
            raise NotFound(f"memory {memory_key} not found", details=[{"field": "memory_key"}])
        pk = partition_key(user)
        actions: list[dict[str, Any]] = [
            {"Delete": {"TableName": self._table, "Key": to_item({"pk": pk, "sk": f"MEM#{memory_key}"}),
                        "ConditionExpression": "attribute_exists(pk)"}},
            self._bump_version(user),
        ]
        if memory.is_current:
            actions.append(self._delete_if_points_to(pk, f"HASH#{memory.content_hash}", memory_key))
            actions.extend(self._keyword_deletes(pk, memory))
            if memory.field:
                # A memory stored under a former field name is read under the current one, whose pointer
                # it never had: no pointer is nothing to delete.
                actions.append(self._delete_if_points_to(pk, f"FIELD#{memory.field}", memory_key, or_absent=True))
        try:
            self._client.transact_write_items(TransactItems=actions)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "TransactionCanceledException":
                raise Conflict("the memory changed while it was being deleted, retry") from error
            raise_domain_error(error)
        return memory

    def record_access(self, user: ScopeRef, memory_keys: list[str], accessed_at: datetime) -> None:
        """Bump access statistics. Not a content change: the content version stays, so caches of memories
        are not rebuilt by reads; the access version moves, so they can refresh just the statistics. A
        memory deleted meanwhile is skipped."""
        recorded = 0
        for memory_key in memory_keys:
            try:
                self._client.update_item(
                    TableName=self._table,
                    Key=to_item({"pk": partition_key(user), "sk": f"MEM#{memory_key}"}),
                    UpdateExpression="ADD access_count :one SET last_accessed_at = :at",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeValues=to_item({":one": 1, ":at": accessed_at.isoformat()}),
                )
                recorded += 1
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise_domain_error(error)
        if recorded:
            try:
                self._client.update_item(
                    TableName=self._table, Key=to_item({"pk": partition_key(user), "sk": "META"}),
                    UpdateExpression="ADD access_version :n", ExpressionAttributeValues=to_item({":n": recorded}))
            except ClientError as error:
                raise_domain_error(error)

    def access_stats(self, user: ScopeRef) -> dict[str, AccessStats]:
        params: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "FilterExpression": "access_count > :zero",
            "ProjectionExpression": "sk, access_count, last_accessed_at",
            "ExpressionAttributeValues": to_item({":pk": partition_key(user), ":prefix": "MEM#", ":zero": 0}),
        }
        stats: dict[str, AccessStats] = {}
        while True:
            try:
                response = self._client.query(**params)
            except ClientError as error:
                raise_domain_error(error)
            for item in map(from_item, response.get("Items", [])):
                stats[str(item["sk"]).removeprefix("MEM#")] = AccessStats(
                    access_count=int(item.get("access_count", 0)), last_accessed_at=item.get("last_accessed_at"))
            if "LastEvaluatedKey" not in response:
                return stats
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    # ---- reads --------------------------------------------------------------------------

    def get(self, user: ScopeRef, memory_key: str) -> Memory | None:
        try:
            response = self._client.get_item(
                TableName=self._table,
                Key=to_item({"pk": partition_key(user), "sk": f"MEM#{memory_key}"}),
                ConsistentRead=True,
            )
        except ClientError as error:
            raise_domain_error(error)
        item = response.get("Item")
        return memory_from_item(item) if item else None

    def history(self, user: ScopeRef, memory: Memory) -> list[Memory]:
        """Every version of the memory's field, oldest first (just the memory when it has no field)."""
        if not memory.field:
            return [memory]
        versions = [m for m in self._iter_memories(user) if m.field == memory.field]
        return sorted(versions, key=lambda m: (m.valid_from, m.memory_key))

    def list_current(
        self,
        user: ScopeRef,
        *,
        memory_type: MemoryType | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> MemoryPage:
        start_key = _decode_cursor(cursor) if cursor else None
        items: list[Memory] = []
        has_more = False
        # Pages of the size asked for (plus the one that tells whether there is more): a default page is up
        # to 1 MB of items, read and paid for even when 20 are wanted.
        for memory in self._iter_memories(user, newest_first=True, start_after=start_key, page_size=limit + 1):
            if not memory.is_current or (memory_type and memory.memory_type != memory_type):
                continue
            if len(items) == limit:
                has_more = True
                break
            items.append(memory)
        next_cursor = _encode_cursor(items[-1].memory_key) if has_more else None
        return MemoryPage(items=items, next_cursor=next_cursor)

    def all_current(self, user: ScopeRef) -> list[Memory]:
        return [m for m in self._iter_memories(user) if m.is_current]

    def user_version(self, user: ScopeRef) -> int:
        return self.versions(user).content

    def versions(self, user: ScopeRef) -> StoreVersions:
        try:
            response = self._client.get_item(
                TableName=self._table, Key=to_item({"pk": partition_key(user), "sk": "META"}), ConsistentRead=True
            )
        except ClientError as error:
            raise_domain_error(error)
        values = from_item(response["Item"]) if response.get("Item") else {}
        return StoreVersions(content=int(values.get("version", 0)), access=int(values.get("access_version", 0)))

    # ---- internals ----------------------------------------------------------------------

    def _iter_memories(
        self, user: ScopeRef, *, newest_first: bool = False, start_after: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[Memory]:
        params: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": partition_key(user), ":prefix": "MEM#"}),
            "ScanIndexForward": not newest_first,
            "ConsistentRead": True,
        }
        if page_size:
            params["Limit"] = page_size
        if start_after:
            params["ExclusiveStartKey"] = to_item({"pk": partition_key(user), "sk": f"MEM#{start_after}"})
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

    def _read_slots(self, user: ScopeRef, digest: str, field: str | None) -> tuple[str | None, str | None]:
        """One consistent round trip: who holds this content now, and which memory is the field's current."""
        pk = partition_key(user)
        gets = [{"Get": {"TableName": self._table, "Key": to_item({"pk": pk, "sk": f"HASH#{digest}"})}}]
        if field:
            gets.append({"Get": {"TableName": self._table, "Key": to_item({"pk": pk, "sk": f"FIELD#{field}"})}})
        try:
            responses = self._client.transact_get_items(TransactItems=gets)["Responses"]
        except ClientError as error:
            raise_domain_error(error)
        found = [(from_item(r["Item"]).get("memory_key") if r.get("Item") else None) for r in responses]
        return found[0], (found[1] if field else None)

    def _save_actions(self, user: ScopeRef, new: Memory, previous: Memory | None) -> list[dict[str, Any]]:
        pk = partition_key(user)
        now = new.updated_at.isoformat()
        # Order matters: CancellationReasons are read by position (index 1 = content marker).
        actions: list[dict[str, Any]] = [
            {"Put": {"TableName": self._table, "Item": memory_to_item(new),
                     "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"TableName": self._table,
                     "Item": to_item({"pk": pk, "sk": f"HASH#{new.content_hash}", "kind": "content",
                                       "memory_key": new.memory_key}),
                     "ConditionExpression": "attribute_not_exists(pk)"}},
        ]
        if new.field:
            pointer = {"Put": {"TableName": self._table,
                               "Item": to_item({"pk": pk, "sk": f"FIELD#{new.field}", "kind": "field",
                                                 "memory_key": new.memory_key, "updated_at": now})}}
            if previous is None:
                pointer["Put"]["ConditionExpression"] = "attribute_not_exists(pk)"
            else:
                pointer["Put"]["ConditionExpression"] = "memory_key = :previous"
                pointer["Put"]["ExpressionAttributeValues"] = to_item({":previous": previous.memory_key})
            actions.append(pointer)
        if previous is not None:
            actions.append({"Update": {
                "TableName": self._table,
                "Key": to_item({"pk": pk, "sk": f"MEM#{previous.memory_key}"}),
                "UpdateExpression": "SET superseded_at = :at, superseded_by = :by, updated_at = :at",
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(superseded_at)",
                "ExpressionAttributeValues": to_item({":at": new.valid_from.isoformat(),
                                                       ":by": new.memory_key}),
            }})
            actions.append(self._delete_if_points_to(pk, f"HASH#{previous.content_hash}", previous.memory_key))
            actions.extend(self._keyword_deletes(pk, previous))
        actions.extend(
            {"Put": {"TableName": self._table, "Item": to_item({
                "pk": pk, "sk": _keyword_sk(keyword.term, new.memory_key), "kind": "keyword",
                "memory_key": new.memory_key, "keyword": keyword.term, "weight": f"{keyword.weight:.4f}",
                "extraction_source": new.metadata.get("keyword_source", "system"),
            })}}
            for keyword in _unique_keywords(new)
        )
        actions.append(self._bump_version(user))
        return actions

    def _keyword_deletes(self, pk: str, memory: Memory) -> list[dict[str, Any]]:
        return [
            {"Delete": {"TableName": self._table,
                        "Key": to_item({"pk": pk, "sk": _keyword_sk(k.term, memory.memory_key)})}}
            for k in _unique_keywords(memory)
        ]

    def _delete_if_points_to(self, pk: str, sk: str, memory_key: str, *, or_absent: bool = False
                             ) -> dict[str, Any]:
        condition = "attribute_not_exists(pk) OR memory_key = :key" if or_absent else "memory_key = :key"
        return {"Delete": {"TableName": self._table, "Key": to_item({"pk": pk, "sk": sk}),
                           "ConditionExpression": condition,
                           "ExpressionAttributeValues": to_item({":key": memory_key})}}

    def _bump_version(self, user: ScopeRef, by: int = 1) -> dict[str, Any]:
        return {"Update": {
            "TableName": self._table,
            "Key": to_item({"pk": partition_key(user), "sk": "META"}),
            "UpdateExpression": "ADD version :by SET updated_at = :now, kind = :kind",
            "ExpressionAttributeValues": to_item({":by": by, ":now": utcnow().isoformat(), ":kind": "meta"}),
        }}



