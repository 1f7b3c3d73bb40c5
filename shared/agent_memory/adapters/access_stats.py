"""Access statistics off the request's critical path: the read path enqueues, a worker writes.

The load function stays read-only on the table: it only sends SQS messages. It does not wait for
them either: a search hands its statistics to a background sender thread and returns. Statistics
are counters, not user data, so this trades a little durability for latency: Lambda freezes the
thread between invocations and it resumes at the next one; only what is pending when an execution
environment is shut down is lost (at most `max_pending` messages; when full, new ones are dropped
with a warning).
"""

from __future__ import annotations

import json
import queue
import threading
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.adapters.sqs_batches import MAX_ENTRIES, send_batch
from agent_memory.domain.models import ScopeRef, utcnow
from agent_memory.observability import logger, metrics

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient


class SqsAccessRecorder:
    def __init__(self, *, queue_url: str, client: SQSClient, max_pending: int = 1000) -> None:
        self._queue_url = queue_url
        self._client = client
        self._pending: queue.Queue[str] = queue.Queue(maxsize=max_pending)
        self._sender: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.dropped = 0  # reads whose statistics were dropped, since this container started

    def __call__(self, user: ScopeRef, memory_keys: list[str]) -> None:
        body = {"tenant_id": user.tenant_id, "user_id": user.user_id, "memory_keys": memory_keys,
                "accessed_at": utcnow().isoformat()}
        try:
            self._pending.put_nowait(json.dumps(body))
        except queue.Full:  # statistics must never slow or fail a search: counted and said, never silent
            self.dropped += 1
            metrics.add_metric(name="AccessStatsDropped", unit=MetricUnit.Count, value=1)
            logger.warning("access statistics dropped: the sender is behind", dropped_so_far=self.dropped,
                           memory_keys=len(memory_keys))
            return
        self._ensure_sender()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything handed over so far has been sent (tests, shutdown); False at the timeout."""
        done = threading.Event()

        def wait() -> None:
            self._pending.join()
            done.set()

        threading.Thread(target=wait, daemon=True).start()
        return done.wait(timeout)

    def _ensure_sender(self) -> None:
        with self._start_lock:
            if self._sender is None or not self._sender.is_alive():
                self._sender = threading.Thread(target=self._send_forever, name="access-stats", daemon=True)
                self._sender.start()

    def _send_forever(self) -> None:
        while True:
            batch = [self._pending.get()]
            while len(batch) < MAX_ENTRIES * COALESCE_BATCHES:
                try:
                    batch.append(self._pending.get_nowait())
                except queue.Empty:
                    break
            try:
                failed = []
                merged = coalesced(batch)
                for start in range(0, len(merged), MAX_ENTRIES):
                    failed += send_batch(self._client, self._queue_url,
                                         list(enumerate(merged[start:start + MAX_ENTRIES])))
                if failed:
                    logger.warning("could not enqueue some access statistics", extra={"failed": len(failed)})
            except Exception:  # statistics must never fail a search
                logger.warning("could not enqueue access statistics", exc_info=True)
            finally:
                for _ in batch:
                    self._pending.task_done()


# How many SQS batches' worth of pending reads one round takes (merged per user, they are fewer messages).
COALESCE_BATCHES = 5


def coalesced(bodies: list[str]) -> list[str]:
    """Pending reads merged per user: one message naming every memory read (as often as read), at the latest
    read's time, so a sender behind a burst catches up instead of dropping."""
    by_user: dict[tuple[str, str], dict[str, Any]] = {}
    for text in bodies:
        body = json.loads(text)
        key = (body["tenant_id"], body["user_id"])
        merged = by_user.setdefault(key, {**body, "memory_keys": []})
        merged["memory_keys"] += body["memory_keys"]
        merged["accessed_at"] = max(merged["accessed_at"], body["accessed_at"])
    return [json.dumps(body) for body in by_user.values()]
