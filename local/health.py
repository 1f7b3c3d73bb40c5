"""The local stack's own parts in `GET /health`, beside what the function checks (the table, the embedder): the
queues (moto's SQS server, in the supervisor's process) and the workers' process. Deployed, SQS and Lambda run
them and the function leaves them null; here the front door adds them to the function's answer, and a part that
is down turns it into a 503."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agent_memory.api.health import RETRY_AFTER
from agent_memory.domain.health import Health, HealthStatus, QueueHealth, WorkersHealth

HEALTH_ROUTES = ("GET /health", "GET /v1/health")
_DEPTH = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed")


def sqs_client(timeout_seconds: float = 2.0) -> Any:
    """An SQS client that gives up quickly (a probe must answer while a part is down), at AWS_ENDPOINT_URL_SQS."""
    import boto3
    from botocore.config import Config

    return boto3.client("sqs", config=Config(connect_timeout=timeout_seconds, read_timeout=timeout_seconds,
                                             retries={"total_max_attempts": 1}))


class LocalParts:
    def __init__(self, queue_urls: dict[str, str], sqs: Any, workers_pid: int | None) -> None:
        self.queue_urls = queue_urls
        self.sqs = sqs
        self.workers_pid = workers_pid
        # The queues asked at once: moto's server took ~50 ms a call on a busy laptop, 400 ms for eight in a row.
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(queue_urls)), thread_name_prefix="health-queues")

    def queues(self) -> dict[str, QueueHealth]:
        names = sorted(self.queue_urls)
        return dict(zip(names, self._pool.map(lambda name: self._queue(self.queue_urls[name]), names), strict=True))

    def _queue(self, url: str) -> QueueHealth:
        try:
            found = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(_DEPTH))["Attributes"]
        except Exception as error:  # unreachable, or the queue is gone: either way it is down
            return QueueHealth(status="down", depth=None, in_flight=None, error=type(error).__name__)
        return QueueHealth(status="ok", depth=int(found[_DEPTH[0]]),
                           in_flight=int(found[_DEPTH[1]]) + int(found[_DEPTH[2]]))

    def workers(self) -> WorkersHealth:
        alive = self.workers_pid is not None and running(self.workers_pid)
        return WorkersHealth(status="ok" if alive else "down", alive=alive)

    def added_to(self, status: int, headers: dict[str, str], payload: bytes) -> tuple[int, dict[str, str], bytes]:
        """The function's health answer with the queues and the workers in it, its status and Retry-After set by
        all the parts; any other answer (an error body) as it is."""
        try:
            answer = json.loads(payload)
            report: Health | HealthStatus = Health.model_validate(answer) if "tables" in answer \
                else HealthStatus.model_validate(answer)
        except (ValueError, TypeError):
            return status, headers, payload
        queues, workers = self.queues(), self.workers()
        if isinstance(report, Health):
            merged: Health | HealthStatus = Health.of(tables=report.tables, embedder=report.embedder, queues=queues,
                                                      workers=workers, search=report.search, pack=report.pack)
        else:  # the verdict alone, the local parts counted in it
            down = report.status != "ok" or workers.status == "down" or any(q.status == "down" for q in queues.values())
            merged = HealthStatus(status="unavailable" if down else "ok")
        headers = {k: v for k, v in headers.items() if k.lower() != "retry-after"}
        if merged.status != "ok":
            headers["Retry-After"] = RETRY_AFTER
        return (200 if merged.status == "ok" else 503), headers, merged.model_dump_json().encode()


def running(pid: int) -> bool:
    """Whether the process runs (not exited, nor a zombie its parent has yet to reap)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's: it exists
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:  # no /proc: kill's answer stands
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"
