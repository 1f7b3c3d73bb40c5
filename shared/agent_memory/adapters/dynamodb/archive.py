"""A scope's partition read section by section for an export, and an import's items written in one transaction.

Every read is a query of the scope's own partition (``pk = T#<tenant>#U#<scope>``) by sort-key prefix, strongly
consistent, so an export never reads another scope's items. An import's items are written as the stores write
them (memories as a save does: the memory, its content marker, field pointer and keywords), each on the
condition that it is not there yet, with one bump of the scope's version counter, in one TransactWriteItems:
a concurrent writer cancels the whole page (Conflict), and a page sent again finds its items present.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.batch import read_all
from agent_memory.adapters.dynamodb.items import (
    BUSY,
    TRANSACTION_CANCELLED,
    bump_version,
    error_code,
    from_item,
    memory_from_item,
    memory_to_item,
    raise_domain_error,
    throttled_transaction,
    to_item,
    transact_write,
)
from agent_memory.adapters.dynamodb.memory_files import (
    DIRECTORY_KIND,
    directory_from_item,
    directory_item,
    directory_key,
    file_from_item,
    file_item,
    file_key,
)
from agent_memory.adapters.dynamodb.memory_layers import (
    hot_from_item,
    hot_item,
    log_from_item,
    log_item,
    log_sort_key,
    report_from_item,
    report_item,
)
from agent_memory.adapters.dynamodb.memory_writes import MAX_TRANSACTION_ACTIONS, save_writes
from agent_memory.adapters.dynamodb.synonyms import synonym_item, synonym_sort_key
from agent_memory.domain.keys import (
    FILE_PREFIX,
    HOT_PREFIX,
    LOG_PREFIX,
    MEMORY_PREFIX,
    REPORT_PREFIX,
    content_sort_key,
    field_sort_key,
    hot_sort_key,
    memory_sort_key,
    partition_key,
    report_sort_key,
    synonyms_partition_key,
)
from agent_memory.domain.lifecycle.portable import ImportBatch
from agent_memory.domain.memory_tool.memory_files import MemoryDirectory, MemoryFile
from agent_memory.domain.models import Memory, SaveOutcome, SaveResult, ScopeRef
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, LogMessage, WeeklyReport
from agent_memory.errors import Conflict, Throttled

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

Entry = LogMessage | HotMemoryEntry | WeeklyReport | MemoryFile | MemoryDirectory


def _places(entry: Entry) -> list[str]:
    """The sort keys an entry would take (a memory-tool path: as a file and as a directory)."""
    if isinstance(entry, LogMessage):
        return [log_sort_key(entry)]
    if isinstance(entry, HotMemoryEntry):
        return [hot_sort_key(entry.type.value, entry.key)]
    if isinstance(entry, WeeklyReport):
        return [report_sort_key(entry.week_start)]
    return [file_key(entry.path), directory_key(entry.path)]


_READERS = {LOG_PREFIX: log_from_item, HOT_PREFIX: hot_from_item, REPORT_PREFIX: report_from_item}


class DynamoScopeArchive:
    def __init__(self, *, table_name: str, client: DynamoDBClient, page_size: int = 100) -> None:
        self._table = table_name
        self._client = client
        self._page_size = page_size

    # ---- export ----------------------------------------------------------------------------------

    def memories_after(self, scope: ScopeRef, after: str | None) -> Iterator[tuple[str, Memory]]:
        """The scope's memories (current and history) by key, oldest key first, after the sort key `after`."""
        for item in self._items(scope, MEMORY_PREFIX, after):
            yield str(item["sk"]["S"]), memory_from_item(item)

    def memories(self, scope: ScopeRef, memory_keys: list[str]) -> dict[str, Memory]:
        """The scope's memories at these keys that exist."""
        pk = partition_key(scope)
        keys = [to_item({"pk": pk, "sk": memory_sort_key(key)}) for key in dict.fromkeys(memory_keys)]
        return {m.memory_key: m for m in map(memory_from_item, read_all(self._client, self._table, keys))}

    def entries_after(self, scope: ScopeRef, prefix: str, after: str | None) -> Iterator[tuple[str, Any]]:
        """The scope's items of one section (``LOG#``, ``HOT#``, ``REPORT#``, ``FILE#``) by sort key after `after`,
        as domain objects: a log message, a hot-memory entry, a weekly report, a memory file or directory."""
        for item in self._items(scope, prefix, after):
            sk = str(item["sk"]["S"])
            if prefix == FILE_PREFIX:
                kind = item.get("kind", {}).get("S")
                yield sk, directory_from_item(item) if kind == DIRECTORY_KIND else file_from_item(item)
            else:
                yield sk, _READERS[prefix](item)

    # ---- import ----------------------------------------------------------------------------------

    def slot_holders(self, scope: ScopeRef, memories: list[Memory]) -> dict[str, dict[str, str]]:
        """For each current memory (by key): which memory holds its content or its field now, if any."""
        slots = {m.memory_key: {"content": content_sort_key(m.content_hash),
                                 **({"field": field_sort_key(m.field)} if m.field else {})}
                 for m in memories if m.is_current}
        found = self._present(scope, [sk for named in slots.values() for sk in named.values()])
        return {key: {name: str(found[sk]["memory_key"]) for name, sk in named.items() if sk in found}
                for key, named in slots.items()}

    def held(self, scope: ScopeRef, entries: list[Entry]) -> list[str | None]:
        """For each entry, what the scope holds at its place: None, "present", or for a memory-tool path "file"
        or "directory" (whichever it is)."""
        places = [_places(e) for e in entries]
        found = self._present(scope, [sk for keys in places for sk in keys])
        held: list[str | None] = []
        for entry, keys in zip(entries, places, strict=True):
            there = [found[sk] for sk in keys if sk in found]
            if not there:
                held.append(None)
            elif isinstance(entry, MemoryFile | MemoryDirectory):
                held.append("directory" if there[0].get("kind") == DIRECTORY_KIND else "file")
            else:
                held.append("present")
        return held

    def _present(self, scope: ScopeRef, sort_keys: list[str]) -> dict[str, dict[str, Any]]:
        pk = partition_key(scope)
        keys = [to_item({"pk": pk, "sk": sk}) for sk in dict.fromkeys(sort_keys)]
        found = read_all(self._client, self._table, keys, projection="sk, kind, memory_key") if keys else []
        return {str(values["sk"]): values for values in map(from_item, found)}

    def present_synonyms(self, tenant_id: str, pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
        keys = [to_item({"pk": synonyms_partition_key(tenant_id), "sk": synonym_sort_key(a, b)})
                for a, b in dict.fromkeys(pairs)]
        found = read_all(self._client, self._table, keys) if keys else []
        return {(str(v["keyword"]), str(v["synonym"])) for v in map(from_item, found)}

    def write(self, scope: ScopeRef, batch: ImportBatch) -> None:
        """Every item of the batch, none present before, and the scope's version counter moved: one transaction."""
        if not len(batch):
            return
        pk = partition_key(scope)
        absent = "attribute_not_exists(pk)"
        actions: list[dict[str, Any]] = []
        for memory in batch.memories:
            if memory.is_current:  # as a save writes it: the memory, its content marker, field pointer, keywords
                actions += save_writes(self._table, SaveResult(outcome=SaveOutcome.CREATED, memory=memory))
            else:
                actions.append({"Put": {"TableName": self._table, "Item": memory_to_item(memory),
                                        "ConditionExpression": absent}})
        items = [*(log_item(pk, m) for m in batch.log), *(hot_item(pk, e) for e in batch.hot_memory),
                 *(report_item(pk, r) for r in batch.reports),
                 *(file_item(pk, f) if isinstance(f, MemoryFile) else directory_item(pk, f) for f in batch.files),
                 *(synonym_item(scope.tenant_id, a, b, score) for a, b, score in batch.synonyms)]
        actions += [{"Put": {"TableName": self._table, "Item": item, "ConditionExpression": absent}}
                    for item in items]
        actions.append(bump_version(self._table, pk, by=max(1, len(batch.memories) + len(batch.hot_memory))))
        if len(actions) > MAX_TRANSACTION_ACTIONS:
            raise ValueError(f"{len(actions)} writes do not fit one transaction ({MAX_TRANSACTION_ACTIONS})")
        try:
            transact_write(self._client, actions)
        except ClientError as error:
            if throttled_transaction(error):
                raise Throttled(BUSY) from error
            if error_code(error) == TRANSACTION_CANCELLED:
                raise Conflict("the scope changed while the page was being imported: nothing of it was written, "
                               "send it again") from error
            raise_domain_error(error)

    # ---- internals -------------------------------------------------------------------------------

    def _items(self, scope: ScopeRef, prefix: str, after: str | None) -> Iterator[dict[str, Any]]:
        pk = partition_key(scope)
        params: dict[str, Any] = {
            "TableName": self._table, "ConsistentRead": True, "Limit": self._page_size,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": pk, ":prefix": prefix}),
        }
        if after:
            params["ExclusiveStartKey"] = to_item({"pk": pk, "sk": after})
        while True:
            try:
                response = self._client.query(**params)
            except ClientError as error:
                raise_domain_error(error)
            yield from response.get("Items", [])
            if "LastEvaluatedKey" not in response:
                return
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]
