"""The template's SQS queues for the local stack: moto's SQS server, in the supervisor's process.

moto speaks the real SQS API (the functions' boto3 clients, visibility timeouts, redrive to the
dead-letter queues), which is what the functions and their event sources need; it keeps messages in
memory only, so a normal stop saves every message still queued, visible or in flight, to
`<dir>/<queue logical id>.jsonl`, and the next start queues them again before any worker runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agent_memory.adapters.sqs_batches import batches, send_batch
from local.runtime import LOCAL_TABLE_PREFIX
from local.template import create_queues

REGION = "us-east-1"
# moto remembers the receipt handles of every deleted message (so that a second delete succeeds, as SQS's does):
# unbounded, that set grew by ~0.3 MiB a minute under a steady load. The most recent ones are what a late second
# delete can name: a worker deletes what it processed at once, and retries a failed delete within seconds.
DELETED_HANDLES_KEPT = 2_000


class RecentHandles:
    """The set moto keeps of deleted messages' receipt handles, holding only the most recent `limit`."""

    def __init__(self, limit: int = DELETED_HANDLES_KEPT) -> None:
        self._limit = limit
        self._handles: dict[str, None] = {}  # insertion-ordered: the oldest first

    def __contains__(self, handle: object) -> bool:
        return handle in self._handles

    def __len__(self) -> int:
        return len(self._handles)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._handles))

    def add(self, handle: str) -> None:
        self._handles.pop(handle, None)
        self._handles[handle] = None
        while len(self._handles) > self._limit:
            del self._handles[next(iter(self._handles))]

    def update(self, handles: Iterable[str]) -> None:
        for handle in handles:
            self.add(handle)

    def discard(self, handle: str) -> None:
        self._handles.pop(handle, None)


class LocalQueues:
    def __init__(self, spill_dir: Path, port: int = 0) -> None:
        from moto.server import ThreadedMotoServer

        self.spill_dir = spill_dir
        self.urls: dict[str, str] = {}
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        self.port = port

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> Any:
        import boto3

        return boto3.client("sqs", endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id="local", aws_secret_access_key="local")

    def start(self) -> dict[str, int]:
        """Start the server and create the queues; returns how many saved messages were queued again."""
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's per-request access log is noise here
        self._server.start()
        self.port = self._server.get_host_and_port()[1]  # the port it bound
        self._backend().reset()  # moto's state is per process: a start holds only what a stop saved
        self.urls = create_queues(self.client(), LOCAL_TABLE_PREFIX)
        for lid in self.urls:
            self._queue(lid).deleted_messages = RecentHandles()
        return self._restore()

    def pending(self) -> dict[str, int]:
        """Messages per queue not yet deleted: waiting, in flight or delayed."""
        return {lid: len(self._queue(lid)._messages) for lid in self.urls}

    def save(self) -> dict[str, int]:
        """Write every message still in a queue to its file (appending to what a previous stop left);
        returns the counts saved per queue."""
        saved: dict[str, int] = {}
        for lid in self.urls:
            messages = list(self._queue(lid)._messages)
            if not messages:
                continue
            self.spill_dir.mkdir(parents=True, exist_ok=True)
            with (self.spill_dir / f"{lid}.jsonl").open("a", encoding="utf-8") as out:
                for message in messages:
                    out.write(json.dumps({"body": message.body}, ensure_ascii=False) + "\n")
            saved[lid] = len(messages)
        return saved

    def stop(self) -> None:
        self._server.stop()

    def _queue(self, logical_id: str) -> Any:
        # moto's own backend: the only way to see messages in flight (received, not deleted) as well.
        return self._backend().queues[f"{LOCAL_TABLE_PREFIX}-{logical_id}"]

    @staticmethod
    def _backend() -> Any:
        from moto.core.models import DEFAULT_ACCOUNT_ID  # where moto defines it (moto.core imports it implicitly)
        from moto.sqs.models import sqs_backends

        return sqs_backends[DEFAULT_ACCOUNT_ID][REGION]

    def _restore(self) -> dict[str, int]:
        restored: dict[str, int] = {}
        client = self.client()
        for lid, url in self.urls.items():
            path = self.spill_dir / f"{lid}.jsonl"
            if not path.exists():
                continue
            bodies = [json.loads(line)["body"] for line in path.read_text(encoding="utf-8").splitlines() if line]
            for batch in batches(bodies):
                refused = send_batch(client, url, batch)
                if refused:
                    raise RuntimeError(f"could not queue saved messages again on {lid}: {refused}")
            path.unlink()  # only once every message is back on the queue
            restored[lid] = len(bodies)
        return restored
