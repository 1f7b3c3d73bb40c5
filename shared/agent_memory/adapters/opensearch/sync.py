"""DynamoDB Streams -> OpenSearch: what one stream record does to the derived index.

Only memory items (sk ``MEM#...``) matter; META, FIELD#, HASH#, KW# items are ignored.
  INSERT / MODIFY, still current     -> upsert (re-embedded when the vector is missing or stale)
  MODIFY to superseded               -> delete (only current memories are indexed)
  REMOVE (API delete or TTL expiry)  -> delete

Every action is idempotent, so Lambda's retries (which replay the shard from the failed record
on, in order) converge on the table's state.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from agent_memory.adapters.dynamodb.items import memory_from_item
from agent_memory.adapters.opensearch.documents import with_current_embeddings
from agent_memory.adapters.opensearch.index import OpenSearchIndex
from agent_memory.domain.keys import MEMORY_PREFIX
from agent_memory.domain.models import Memory, ScopeRef

if TYPE_CHECKING:
    from agent_memory.ports import Embedder

_PARTITION = re.compile(r"^T#(?P<tenant>.*)#U#(?P<user>.*)$")
TTL_PRINCIPAL = "dynamodb.amazonaws.com"  # userIdentity of a REMOVE done by TTL expiry


class SyncAction(StrEnum):
    UPSERT = "upsert"
    DELETE = "delete"
    IGNORE = "ignore"
    ERASED = "erased"  # an upsert written before its user was erased: never brought back into the index


def _never(_scope: ScopeRef, _written_by: datetime | None) -> bool:
    return False


@dataclass(frozen=True)
class Indexer:
    index: OpenSearchIndex
    embedder: Embedder | None
    # Whether a change written by then was written before its scope's erasure (ErasureService.dropped).
    dropped: Callable[[ScopeRef, datetime | None], bool] = _never


def _decode_binaries(value: Any) -> Any:
    """Stream images carry B/BS as base64 text; boto3's get_item/scan hand out bytes. Make them alike."""
    if isinstance(value, dict):
        if set(value) == {"B"} and isinstance(value["B"], str):
            return {"B": base64.b64decode(value["B"])}
        if set(value) == {"BS"}:
            return {"BS": [base64.b64decode(v) if isinstance(v, str) else v for v in value["BS"]]}
        return {k: _decode_binaries(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_binaries(v) for v in value]
    return value


def memory_from_image(image: dict[str, Any]) -> Memory:
    """A Memory from a stream image (DynamoDB JSON), through the store's own item mapping."""
    return memory_from_item(_decode_binaries(image))



def classify(record: dict[str, Any]) -> SyncAction:
    data = record.get("dynamodb") or {}
    sk = (data.get("Keys") or {}).get("sk", {}).get("S", "")
    if not sk.startswith(MEMORY_PREFIX):
        return SyncAction.IGNORE
    event = record.get("eventName")
    if event == "REMOVE":
        return SyncAction.DELETE
    if event in ("INSERT", "MODIFY"):
        image = data.get("NewImage") or {}
        return SyncAction.DELETE if "superseded_at" in image else SyncAction.UPSERT
    return SyncAction.IGNORE


def _identity(record: dict[str, Any]) -> tuple[str, str, str]:
    """(tenant, user, memory_key) from the image's attributes, else from the item's keys."""
    data = record["dynamodb"]
    image = data.get("OldImage") or data.get("NewImage") or {}
    if all(name in image for name in ("tenant_id", "user_id", "memory_key")):
        return image["tenant_id"]["S"], image["user_id"]["S"], image["memory_key"]["S"]
    keys = data["Keys"]
    found = _PARTITION.match(keys["pk"]["S"])
    if found is None:
        raise ValueError(f"not a memory partition key: {keys['pk']['S']!r}")
    return found["tenant"], found["user"], keys["sk"]["S"].removeprefix(MEMORY_PREFIX)


def _written_by(record: dict[str, Any]) -> datetime | None:
    """The latest the change can have been written: the stream gives its time in whole seconds, so the end of
    that second (a save in the same second as an erasure but after it is not taken for one before it)."""
    seconds = (record.get("dynamodb") or {}).get("ApproximateCreationDateTime")
    return datetime.fromtimestamp(int(seconds) + 1, UTC) if seconds is not None else None


def apply_record(record: dict[str, Any], indexer: Indexer) -> SyncAction:
    """Apply one stream record (the raw Lambda event record) to the index."""
    action = classify(record)
    if action is SyncAction.UPSERT:
        memory = memory_from_image(record["dynamodb"]["NewImage"])
        if indexer.dropped(ScopeRef(tenant_id=memory.tenant_id, user_id=memory.user_id), _written_by(record)):
            return SyncAction.ERASED
        indexer.index.upsert(with_current_embeddings([memory], indexer.embedder)[0])
    elif action is SyncAction.DELETE:
        indexer.index.delete(*_identity(record))
    return action
