"""Search-index snapshots in the memory table, in a partition of their own per user.

Items, ``pk = SNAP#T#<tenant>#U#<user>``, each sort key behind the index's namespace (none for the index of the
current memories, ``all#`` for the as-of index of every version: each has its own snapshots and HEAD):
  ``v<version>#<writer>#<n>``   the snapshot's bytes, CHUNK_BYTES a chunk (an item holds at most 400 KB), each
                                with the writer, the chunk count and the whole payload's SHA-256
  ``HEAD``                      the last snapshot saved (version, writer, chunks, written_at): for writers
Every item carries ``expires_at`` (the table's TTL attribute): the snapshots of users who stopped coming
back go by themselves, and so do the chunks of a writer that died half-way.

A writer puts its chunks, then HEAD (over an older or equal version only), then deletes the chunks the previous
HEAD named. A reader takes the version's newest writer and checks the digest of what it read: it never uses a
half-written snapshot, nor chunks of two writers mixed. The ``SNAP#`` prefix keeps these items out of every
query of the user's own partition (and off the stream indexer, which reads ``MEM#`` items only), and lets
IAM grant the reading functions writes to snapshots alone (``dynamodb:LeadingKeys``), as with ``CTX#``.
Failures are logged and read as "no snapshot": a snapshot only ever saves time.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.batch import write_all
from agent_memory.adapters.dynamodb.items import CONDITION_FAILED, error_code, ttl_seconds
from agent_memory.domain.keys import snapshot_partition_key
from agent_memory.domain.models import ScopeRef
from agent_memory.observability import logger

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

CHUNK_BYTES = 350_000
HEAD = "HEAD"
DEFAULT_TTL_SECONDS = 7 * 86400
READ_THREADS = 8


class DynamoIndexSnapshotStore:
    """`min_interval_seconds`: a snapshot of a newer version waits until the last one is this old, so a user
    whose memories change every turn is not re-snapshotted every turn (a snapshot of 10,000 memories is ~8 MB
    of writes). A snapshot of the same version (the last one was found damaged) is always written."""

    def __init__(self, *, table_name: str, client: DynamoDBClient, ttl_seconds: float = DEFAULT_TTL_SECONDS,
                 min_interval_seconds: float = 0.0, clock: Callable[[], float] = time.time,
                 namespace: str = "") -> None:
        self._table = table_name
        self._namespace = namespace
        self._head = namespace + HEAD
        self._client = client
        self._ttl = ttl_seconds
        self._min_interval = min_interval_seconds
        self._clock = clock
        self._writes_denied = False
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _version_prefix(self, version: int) -> str:
        return f"{self._namespace}v{version:012d}#"

    def _chunk_sk(self, version: int, writer: str, chunk: int) -> str:
        return f"{self._version_prefix(version)}{writer}#{chunk:04d}"

    def get(self, user: ScopeRef, version: int) -> bytes | None:
        """One Query, newest writer first (a snapshot of up to ~1 MB comes whole in its first page); the chunks
        the page lacks are read in parallel. Follows the newest writer of the version: an older one's orphaned
        chunks never hide it, and a half-written newest one reads as missing until it is done."""
        pk = snapshot_partition_key(user)
        try:
            page = self._client.query(
                TableName=self._table, KeyConditionExpression="pk = :pk AND begins_with(sk, :version)",
                ExpressionAttributeValues={":pk": {"S": pk}, ":version": {"S": self._version_prefix(version)}},
                ScanIndexForward=False)
            items = page.get("Items", [])
            if not items:
                return None
            writer, count, digest = items[0]["writer"]["S"], int(items[0]["chunks"]["N"]), items[0]["digest"]["S"]
            chunks: dict[str, dict[str, Any] | None] = {item["sk"]["S"]: item for item in items}
            missing = [sk for sk in (self._chunk_sk(version, writer, n) for n in range(count)) if sk not in chunks]
            if missing:
                chunks.update(zip(missing, self._readers().map(lambda sk: self._get(pk, sk), missing), strict=True))
        except ClientError as error:
            logger.warning("index snapshot read failed", error_code=error_code(error))
            return None
        except (KeyError, ValueError):  # not an item this adapter wrote
            logger.warning("index snapshot unreadable", error_code="MalformedItem")
            return None
        parts = [chunks.get(self._chunk_sk(version, writer, n)) for n in range(count)]
        if any(part is None for part in parts):
            return None  # being written, replaced meanwhile, or swept by TTL
        payload = b"".join(bytes(part["data"]["B"]) for part in parts if part is not None)
        return payload if hashlib.sha256(payload).hexdigest() == digest else None

    def newest(self, user: ScopeRef, at_most: int) -> bytes | None:
        """The newest version up to `at_most` that has chunks (one Query of one key, newest first), read whole."""
        if at_most < 0:  # a user with nothing written has no earlier version
            return None
        try:
            page = self._client.query(
                TableName=self._table, KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
                ExpressionAttributeValues={":pk": {"S": snapshot_partition_key(user)},
                                           ":low": {"S": self._version_prefix(0)},
                                           ":high": {"S": self._version_prefix(at_most) + "~"}},
                ScanIndexForward=False, Limit=1, ProjectionExpression="sk")
        except ClientError as error:
            logger.warning("index snapshot read failed", error_code=error_code(error))
            return None
        items = page.get("Items", [])
        if not items:
            return None
        version = items[0]["sk"]["S"].removeprefix(self._namespace)[1:13]
        return self.get(user, int(version)) if version.isdigit() else None

    def put(self, user: ScopeRef, version: int, encode: Callable[[], bytes]) -> bool:
        if self._writes_denied:
            return False
        pk, now = snapshot_partition_key(user), self._clock()
        try:
            previous = self._get(pk, self._head, consistent=True)
            if previous is not None and not self._may_replace(previous, version, now):
                return False
            payload = encode()
            writer = f"{int(now * 1000):013d}{secrets.token_hex(3)}"  # sorts by time: readers take the newest
            chunks = [payload[i:i + CHUNK_BYTES] for i in range(0, len(payload), CHUNK_BYTES)]
            about = {"writer": {"S": writer}, "chunks": {"N": str(len(chunks))},
                     "digest": {"S": hashlib.sha256(payload).hexdigest()},
                     "expires_at": {"N": str(ttl_seconds(now + self._ttl))}}
            write_all(self._client, self._table, [{"PutRequest": {"Item": {
                "pk": {"S": pk}, "sk": {"S": self._chunk_sk(version, writer, n)}, "kind": {"S": "index_snapshot"},
                "data": {"B": chunk}, **about}}} for n, chunk in enumerate(chunks)])
            try:
                self._client.put_item(
                    TableName=self._table,
                    Item={"pk": {"S": pk}, "sk": {"S": self._head}, "kind": {"S": "index_snapshot_head"},
                          "version": {"N": str(version)}, "bytes": {"N": str(len(payload))},
                          "written_at": {"N": repr(now)}, **about},
                    ConditionExpression="attribute_not_exists(pk) OR version <= :version",
                    ExpressionAttributeValues={":version": {"N": str(version)}},
                )
            except ClientError as error:
                if error_code(error) != CONDITION_FAILED:
                    raise
                self._delete_chunks(pk, version, writer, len(chunks))  # a later version's won the race
                return False
            if previous is not None:
                self._delete_old(pk, previous)
            return True
        except ClientError as error:
            code = error_code(error)
            self._writes_denied = code == "AccessDeniedException"  # the function may only read: stop trying
            logger.warning("index snapshot write failed", error_code=code)
        except RuntimeError:  # BatchWriteItem left chunks unprocessed: HEAD was not moved
            logger.warning("index snapshot write failed", error_code="UnprocessedItems")
        return False

    def _may_replace(self, head: dict[str, Any], version: int, now: float) -> bool:
        head_version = int(head["version"]["N"])
        if head_version > version:
            return False
        return head_version == version or now - float(head["written_at"]["N"]) >= self._min_interval

    def _get(self, pk: str, sk: str, *, consistent: bool = False) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=consistent).get("Item")
        return item

    def _delete_chunks(self, pk: str, version: int, writer: str, count: int) -> None:
        write_all(self._client, self._table, [{"DeleteRequest": {"Key": {
            "pk": {"S": pk}, "sk": {"S": self._chunk_sk(version, writer, n)}}}} for n in range(count)])

    def _delete_old(self, pk: str, head: dict[str, Any]) -> None:
        """The replaced snapshot's chunks; any left behind go with their TTL."""
        try:
            self._delete_chunks(pk, int(head["version"]["N"]), head["writer"]["S"], int(head["chunks"]["N"]))
        except (ClientError, RuntimeError):
            logger.warning("old index snapshot not deleted (its TTL will remove it)")

    def _readers(self) -> ThreadPoolExecutor:
        """Chunks are read in parallel (GetItem: the reading functions' IAM allows no BatchGetItem)."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="snapshot-read")
            return self._pool
