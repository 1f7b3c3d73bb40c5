"""SendMessageBatch done one way for every SQS producer: bodies grouped under SQS's per-call limits, entries
refused for a transient reason sent again with backoff, and what is still refused handed back by position."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient

# SQS takes at most 10 entries and 256 KB per SendMessageBatch; a batch stays well under the bytes.
MAX_ENTRIES = 10
MAX_BATCH_BYTES = 200 * 1024


@dataclass(frozen=True)
class Refused:
    """An entry SQS did not queue: its position among the bodies sent, SQS's code, and whether the message
    itself is at fault (sending it again cannot help)."""

    index: int
    code: str
    sender_fault: bool


def batches(bodies: list[str]) -> list[list[tuple[int, str]]]:
    """The bodies with their positions, in order, in groups of at most MAX_ENTRIES and MAX_BATCH_BYTES."""
    groups: list[list[tuple[int, str]]] = []
    size = 0
    for index, body in enumerate(bodies):
        length = len(body.encode("utf-8"))
        if not groups or len(groups[-1]) == MAX_ENTRIES or size + length > MAX_BATCH_BYTES:
            groups.append([])
            size = 0
        groups[-1].append((index, body))
        size += length
    return groups


def send_batch(client: SQSClient, queue_url: str, batch: list[tuple[int, str]], *, attempts: int = 1,
               backoff_seconds: float = 0.1) -> list[Refused]:
    """One group from `batches` in one SendMessageBatch call; entries refused for a transient reason are sent
    again, up to `attempts` calls in all, with exponential backoff. Returns what is still refused; a sender
    fault stops the retries at once. SDK errors are the caller's to translate."""
    pending = dict(batch)
    refused: list[Refused] = []
    for attempt in range(attempts):
        if attempt:
            time.sleep(backoff_seconds * 2 ** (attempt - 1))
        response = client.send_message_batch(
            QueueUrl=queue_url, Entries=[{"Id": str(index), "MessageBody": body} for index, body in pending.items()])
        refused = [Refused(index=int(f["Id"]), code=str(f.get("Code", "")), sender_fault=bool(f.get("SenderFault")))
                   for f in response.get("Failed") or []]
        if not refused or any(r.sender_fault for r in refused):
            return refused
        pending = {r.index: pending[r.index] for r in refused}
    return refused
