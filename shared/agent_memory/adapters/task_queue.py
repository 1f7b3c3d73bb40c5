"""A work queue on SQS: JSON task bodies, sent in SendMessageBatch calls (`sqs_batches`).

Entries SQS refuses for a transient reason are sent again with backoff; what is still refused, or a
sender fault (a malformed message), raises `QueueUnavailable`, so the caller's invocation fails and
its own retry (the schedule's retry policy, the worker queue's redelivery) takes over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from agent_memory.adapters.sqs_batches import batches, send_batch
from agent_memory.errors import QueueUnavailable

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient


class SqsTaskQueue:
    def __init__(self, *, queue_url: str, client: SQSClient, max_attempts: int = 4,
                 backoff_seconds: float = 0.1) -> None:
        self._queue_url = queue_url
        self._client = client
        self._max_attempts = max_attempts
        self._backoff = backoff_seconds

    def send(self, bodies: list[str]) -> None:
        for batch in batches(bodies):
            try:
                refused = send_batch(self._client, self._queue_url, batch, attempts=self._max_attempts,
                                     backoff_seconds=self._backoff)
            except ClientError as error:
                raise QueueUnavailable("the work queue refused the batch",
                                       details={"code": error.response.get("Error", {}).get("Code")}) from error
            if any(r.sender_fault for r in refused):
                raise QueueUnavailable("the work queue rejected a message",
                                       details=[{"code": r.code} for r in refused if r.sender_fault])
            if refused:
                raise QueueUnavailable(
                    f"the work queue refused {len(refused)} message(s) after {self._max_attempts} attempts")
