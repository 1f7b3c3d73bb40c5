"""The memory tool's files in the memory table, in the user's own partition (``pk = T#<tenant>#U#<user>``).

=================================  ===========================================================
``FILE#/memories/<path>``          a file: ``text``, ``size`` (UTF-8 bytes), ``version``, times
``FILE#/memories/<path>/``         a directory; ``revision`` moves with every entry put below it
=================================  ===========================================================

A directory's key is its path and a '/', so one ``begins_with`` query reads it and everything below
it. Nothing else in the partition starts with ``FILE#``, and every other reader of the partition
queries its own prefix (``MEM#``, ``LOG#``, ``HOT#``...), so these items are never read as memories;
the stream indexer passes over them (it indexes ``MEM#`` only). They go with the partition.

Writes that span several items are one transaction, so a file never exists without its directories:
a create puts the file and (if missing) its parents; a rename deletes and puts every moved entry.
A rename conditions the old directory's delete on its ``revision``, so a file created inside it
meanwhile cancels the move instead of being left behind without a directory. Listings and usage
read whole items (DynamoDB charges a query by the size of what it reads), bounded by the limits.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.batch import read_all, write_all
from agent_memory.adapters.dynamodb.items import (
    BUSY,
    CONDITION_FAILED,
    TRANSACTION_CANCELLED,
    error_code,
    from_item,
    raise_domain_error,
    throttled_transaction,
    to_item,
    transact_write,
)
from agent_memory.domain.keys import FILE_PREFIX, partition_key
from agent_memory.domain.memory_tool.memory_files import (
    MAX_RENAME_ENTRIES,
    MemoryDirectory,
    MemoryEntry,
    MemoryFile,
    MemoryUsage,
)
from agent_memory.domain.memory_tool.memory_paths import ROOT, ancestors
from agent_memory.domain.models import ScopeRef
from agent_memory.errors import Conflict, InvalidInput, NotFound, Throttled

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

FILE_KIND = "memory_file"
DIRECTORY_KIND = "memory_dir"


def file_key(path: str) -> str:
    return FILE_PREFIX + path


def directory_key(path: str) -> str:
    return FILE_PREFIX + path + "/"


def file_from_item(item: dict[str, Any]) -> MemoryFile:
    values = from_item(item)
    return MemoryFile(path=values["path"], text=values["text"], created_at=values["created_at"],
                      updated_at=values["updated_at"], version=int(values["version"]))


def file_item(pk: str, file: MemoryFile) -> dict[str, Any]:
    return to_item({"pk": pk, "sk": file_key(file.path), "kind": FILE_KIND, "path": file.path,
                    "text": file.text, "size": file.size, "version": file.version,
                    "created_at": file.created_at.isoformat(), "updated_at": file.updated_at.isoformat()})


def directory_item(pk: str, directory: MemoryDirectory) -> dict[str, Any]:
    return to_item({"pk": pk, "sk": directory_key(directory.path), "kind": DIRECTORY_KIND, "path": directory.path,
                    "created_at": directory.created_at.isoformat(), "revision": 1})


def directory_from_item(item: dict[str, Any]) -> MemoryDirectory:
    values = from_item(item)
    return MemoryDirectory(path=values["path"], created_at=values["created_at"])


def _raise_for(error: ClientError, conflict: str) -> NoReturn:
    """A failed condition is a lost race (Conflict); a throttled transaction is the store pushing back."""
    if throttled_transaction(error):
        raise Throttled(BUSY) from error
    if error_code(error) in (TRANSACTION_CANCELLED, CONDITION_FAILED):
        raise Conflict(conflict) from error
    raise_domain_error(error)


class DynamoMemoryFileStore:
    def __init__(self, *, table_name: str, client: DynamoDBClient, max_attempts: int = 6) -> None:
        self._table = table_name
        self._client = client
        self._max_attempts = max_attempts

    # ---- reads ---------------------------------------------------------------------------------

    def get(self, user: ScopeRef, path: str) -> MemoryFile | MemoryDirectory | None:
        """The file or the directory at `path`: both keys in one consistent BatchGetItem."""
        pk = partition_key(user)
        keys = [to_item({"pk": pk, "sk": sk}) for sk in (file_key(path), directory_key(path))]
        found = {item["sk"]["S"]: item
                 for item in read_all(self._client, self._table, keys, attempts=self._max_attempts)}
        if file_key(path) in found:
            return file_from_item(found[file_key(path)])
        if directory_key(path) in found:
            values = from_item(found[directory_key(path)])
            return MemoryDirectory(path=values["path"], created_at=values["created_at"])
        return None

    def list_under(self, user: ScopeRef, directory: str) -> list[MemoryEntry]:
        own = directory_key(directory) if directory != ROOT else None
        entries = [MemoryEntry(path=str(v["path"]), is_directory=v["kind"] == DIRECTORY_KIND,
                               size=int(v.get("size", 0)))
                   for v in self._items(user, directory, "sk, kind, #path, #size")
                   if v["sk"] != own]
        return sorted(entries, key=lambda e: e.path)

    def usage(self, user: ScopeRef) -> MemoryUsage:
        usage = MemoryUsage()
        for values in self._items(user, ROOT, "kind, #size"):
            if values["kind"] == DIRECTORY_KIND:
                usage.directories += 1
            else:
                usage.files += 1
                usage.bytes += int(values.get("size", 0))
        return usage

    # ---- writes --------------------------------------------------------------------------------

    def create(self, user: ScopeRef, file: MemoryFile) -> None:
        pk = partition_key(user)
        actions = [
            {"Put": {"TableName": self._table, "Item": file_item(pk, file),
                     "ConditionExpression": "attribute_not_exists(pk)"}},
            self._absent(pk, directory_key(file.path)),
            *self._parents(pk, file.path, file.created_at),
        ]
        self._transact(actions, f"{file.path} exists already, or a parent of it is a file")

    def update(self, user: ScopeRef, path: str, text: str, *, expected_version: int, now: datetime) -> None:
        try:
            self._client.update_item(
                TableName=self._table, Key=to_item({"pk": partition_key(user), "sk": file_key(path)}),
                UpdateExpression="SET #text = :text, #size = :size, updated_at = :now, version = :next",
                ConditionExpression="version = :expected",
                ExpressionAttributeNames={"#text": "text", "#size": "size"},
                ExpressionAttributeValues=to_item({
                    ":text": text, ":size": len(text.encode("utf-8")), ":now": now.isoformat(),
                    ":next": expected_version + 1, ":expected": expected_version}))
        except ClientError as error:
            _raise_for(error, f"{path} was edited or removed meanwhile")

    def delete(self, user: ScopeRef, path: str) -> int:
        """A file in one conditional delete; a directory in batches, deepest keys first and its own entry
        last, so an interrupted delete never leaves an entry without its directory."""
        found = self.get(user, path)
        pk = partition_key(user)
        if isinstance(found, MemoryFile):
            try:
                self._client.delete_item(TableName=self._table, Key=to_item({"pk": pk, "sk": file_key(path)}),
                                         ConditionExpression="attribute_exists(pk)")
            except ClientError as error:
                if error_code(error) == CONDITION_FAILED:
                    return 0  # deleted meanwhile
                raise_domain_error(error)
            return 1
        if found is None:
            return 0
        keys = sorted((str(v["sk"]) for v in self._items(user, path, "sk")), reverse=True)
        try:
            write_all(self._client, self._table,
                      [{"DeleteRequest": {"Key": to_item({"pk": pk, "sk": sk})}} for sk in keys])
        except ClientError as error:
            raise_domain_error(error)
        return len(keys)

    def rename(self, user: ScopeRef, old_path: str, new_path: str, *, now: datetime) -> None:
        pk = partition_key(user)
        source = self.get(user, old_path)
        if source is None:
            raise NotFound(f"{old_path} does not exist")
        if new_path == old_path or new_path.startswith(old_path + "/"):
            raise Conflict(f"{new_path} is {old_path} or inside it")
        moving = list(self._items(user, old_path)) if isinstance(source, MemoryDirectory) \
            else [self._raw(pk, file_key(old_path))]
        if len(moving) > MAX_RENAME_ENTRIES:
            raise InvalidInput(f"{old_path} holds {len(moving)} entries; at most {MAX_RENAME_ENTRIES} move at once",
                               details=[{"field": "old_path"}])
        actions: list[dict[str, Any]] = []
        for values in moving:
            old_sk = str(values["sk"])
            moved = {**values, "sk": FILE_PREFIX + new_path + old_sk[len(FILE_PREFIX + old_path):],
                     "path": new_path + str(values["path"])[len(old_path):]}
            actions.append(self._delete_unchanged(pk, values))
            actions.append({"Put": {"TableName": self._table, "Item": to_item(moved),
                                    "ConditionExpression": "attribute_not_exists(pk)"}})
        other = directory_key(new_path) if isinstance(source, MemoryFile) else file_key(new_path)
        actions.append(self._absent(pk, other))
        actions.extend(self._parents(pk, new_path, now))
        self._transact(actions, f"{new_path} exists, a parent of it is a file, or {old_path} changed meanwhile")

    # ---- internals -----------------------------------------------------------------------------

    def _absent(self, pk: str, sk: str) -> dict[str, Any]:
        return {"ConditionCheck": {"TableName": self._table, "Key": to_item({"pk": pk, "sk": sk}),
                                   "ConditionExpression": "attribute_not_exists(pk)"}}

    def _parents(self, pk: str, path: str, now: datetime) -> list[dict[str, Any]]:
        """Each parent directory made if missing (its revision moved either way), and not a file."""
        actions: list[dict[str, Any]] = []
        for parent in ancestors(path):
            actions.append({"Update": {
                "TableName": self._table, "Key": to_item({"pk": pk, "sk": directory_key(parent)}),
                "UpdateExpression": "SET kind = :kind, #path = :path, created_at = if_not_exists(created_at, :now) "
                                    "ADD revision :one",
                "ExpressionAttributeNames": {"#path": "path"},
                "ExpressionAttributeValues": to_item({":kind": DIRECTORY_KIND, ":path": parent,
                                                      ":now": now.isoformat(), ":one": 1})}})
            actions.append(self._absent(pk, file_key(parent)))
        return actions

    def _delete_unchanged(self, pk: str, values: dict[str, Any]) -> dict[str, Any]:
        """Delete an entry being moved only as it was read: a file at its version, a directory at its
        revision (nothing was put below it meanwhile)."""
        seen = values["version"] if values["kind"] == FILE_KIND else values.get("revision", 0)
        attribute = "version" if values["kind"] == FILE_KIND else "revision"
        return {"Delete": {"TableName": self._table, "Key": to_item({"pk": pk, "sk": values["sk"]}),
                           "ConditionExpression": f"{attribute} = :seen",
                           "ExpressionAttributeValues": to_item({":seen": seen})}}

    def _transact(self, actions: list[dict[str, Any]], conflict: str) -> None:
        try:
            transact_write(self._client, actions)
        except ClientError as error:
            _raise_for(error, conflict)

    def _raw(self, pk: str, sk: str) -> dict[str, Any]:
        try:
            item = self._client.get_item(TableName=self._table, Key=to_item({"pk": pk, "sk": sk}),
                                         ConsistentRead=True).get("Item")
        except ClientError as error:
            raise_domain_error(error)
        if not item:
            raise Conflict(f"{sk.removeprefix(FILE_PREFIX)} changed meanwhile")
        return from_item(item)

    def _items(self, user: ScopeRef, directory: str, projection: str | None = None) -> Iterator[dict[str, Any]]:
        """The items of `directory` (its own, then everything below it), strongly consistent, page by page."""
        prefix = FILE_PREFIX + ROOT + "/" if directory == ROOT else directory_key(directory)
        params: dict[str, Any] = {
            "TableName": self._table, "ConsistentRead": True,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": to_item({":pk": partition_key(user), ":prefix": prefix}),
        }
        if projection:  # "size" and "path" are reserved words in expressions
            params["ProjectionExpression"] = projection
            names = {name: name[1:] for name in ("#path", "#size") if name in projection}
            if names:
                params["ExpressionAttributeNames"] = names
        while True:
            try:
                response = self._client.query(**params)
            except ClientError as error:
                raise_domain_error(error)
            yield from map(from_item, response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                return
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]
