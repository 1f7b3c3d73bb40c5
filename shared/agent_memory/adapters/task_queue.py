"""A work queue on SQS: JSON task bodies, sent 10 per SendMessageBatch call (the API's maximum).

Entries SQS refuses for a transient reason are sent again with backoff; what is still refused, or a
sender fault (a malformed message), raises `QueueUnavailable`, so the caller's invocation fails and
its own retry (the schedule's retry policy, the worker queue's redelivery) takes over.
"""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.errors import QueueUnavailable

BATCH = 10


class SqsTaskQueue:
    def __init__(self, *, queue_url: str, client: Any, max_attempts: int = 4, backoff_seconds: float = 0.1) -> None:
        self._queue_url = queue_url
        self._client = client
        self._max_attempts = max_attempts
        self._backoff = backoff_seconds

    def send(self, bodies: list[str]) -> None:
        for start in range(0, len(bodies), BATCH):
            self._send_batch(bodies[start:start + BATCH])

    def _send_batch(self, bodies: list[str]) -> None:
        pending = {str(i): body for i, body in enumerate(bodies)}
        for attempt in range(self._max_attempts):
            if attempt:
                time.sleep(self._backoff * 2 ** (attempt - 1))
            try:
                response = self._client.send_message_batch(
                    QueueUrl=self._queue_url,
                    Entries=[{"Id": entry_id, "MessageBody": body} for entry_id, body in pending.items()])
            except ClientError as error:
                raise QueueUnavailable("the work queue refused the batch",
                                       details={"code": error.response.get("Error", {}).get("Code")}) from error
            failed = response.get("Failed") or []
            if any(f.get("SenderFault") for f in failed):
                raise QueueUnavailable("the work queue rejected a message",
                                       details=[{"code": f.get("Code")} for f in failed if f.get("SenderFault")])
            pending = {f["Id"]: pending[f["Id"]] for f in failed}
            if not pending:
                return
        raise QueueUnavailable(f"the work queue refused {len(pending)} message(s) after {self._max_attempts} attempts")
