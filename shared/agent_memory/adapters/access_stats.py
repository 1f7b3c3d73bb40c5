"""Access statistics off the request's critical path: the read path enqueues, a worker writes.

The load function stays read-only on the table: it only sends one SQS message per search.
"""

from __future__ import annotations

import json
from typing import Any

from agent_memory.domain.models import UserRef, utcnow
from agent_memory.observability import logger


class SqsAccessRecorder:
    def __init__(self, *, queue_url: str, client: Any) -> None:
        self._queue_url = queue_url
        self._client = client

    def __call__(self, user: UserRef, memory_keys: list[str]) -> None:
        body = {"tenant_id": user.tenant_id, "user_id": user.user_id, "memory_keys": memory_keys,
                "accessed_at": utcnow().isoformat()}
        try:
            self._client.send_message(QueueUrl=self._queue_url, MessageBody=json.dumps(body))
        except Exception:  # statistics must never fail a search
            logger.warning("could not enqueue access statistics", exc_info=True)
