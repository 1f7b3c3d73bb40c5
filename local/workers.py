"""The local stack's workers, in a process of their own as Lambda runs them: every SQS event source of
template.yaml (receive a batch, invoke the function, delete what it did not report as failed), the
table's stream for the indexer when OpenSearch is the search tier (local.streams) and, for demos, the
weekly rollup's schedule on a short interval.

A stop (SIGTERM or SIGINT) drains: the workers keep going until no queue holds a message they could
take and no batch is running, for at most the drain timeout, then report what they left. The
supervisor (local.stack) saves what is left and queues it again at the next start.

`python -m local.workers` runs it; `make run` starts it (see local.stack).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from local.memory_trim import start_trimming
from local.runtime import LocalFunctions, table_names
from local.settings import LocalSettings
from local.streams import StreamPoller
from local.template import SqsEventSource, functions, sqs_event_sources, stream_event_sources

WORKERS_REPORT = "workers-stop.json"  # read by local.stack at a stop
RECEIVE_LIMIT = 10  # SQS's most messages per ReceiveMessage
LONG_POLL_SECONDS = 1


@dataclass
class Poller:
    """What Lambda's event source mapping does for one queue and function."""

    source: SqsEventSource
    queue_url: str
    functions: LocalFunctions
    sqs: Any
    stopping: threading.Event
    busy: bool = False
    batches: int = 0
    thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name=f"sqs-{self.source.function}", daemon=True)
        self.thread.start()

    def _receive(self, limit: int, wait: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=min(RECEIVE_LIMIT, limit), WaitTimeSeconds=wait,
            AttributeNames=["All"]).get("Messages", [])
        return messages

    def _batch(self) -> list[dict[str, Any]]:
        """Up to the batch size, waiting at most the batching window once the first message is in."""
        messages = self._receive(self.source.batch_size, LONG_POLL_SECONDS)
        deadline = time.monotonic() + self.source.batching_window_seconds
        while messages and len(messages) < self.source.batch_size and time.monotonic() < deadline:
            more = self._receive(self.source.batch_size - len(messages), 0)
            if not more:
                time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
            messages += more
        return messages

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                messages = self._batch()
                if messages:
                    self.busy = True
                    self._deliver(messages)
            except Exception as error:  # keep polling, as the real event source mapping would
                if not self.stopping.is_set():
                    sys.stderr.write(f"{self.source.function} poller: {error!r}\n")
                    self.stopping.wait(1)
            finally:
                self.busy = False

    def _deliver(self, messages: list[dict[str, Any]]) -> None:
        event = {"Records": [{
            "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
            "attributes": m.get("Attributes", {}), "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
            "eventSource": "aws:sqs", "eventSourceARN": self.queue_url, "awsRegion": "us-east-1",
        } for m in messages]}
        try:
            result = self.functions.invoke(self.source.function, event) or {}
        except Exception as error:  # a function error: the whole batch comes back after its visibility timeout
            sys.stderr.write(f"{self.source.function} failed: {error!r}\n")
            return
        failures = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
        done = [m for m in messages if m["MessageId"] not in failures]
        for start in range(0, len(done), RECEIVE_LIMIT):
            chunk = done[start:start + RECEIVE_LIMIT]
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)])
        self.batches += 1


class Workers:
    def __init__(self, settings: LocalSettings, queue_urls: dict[str, str], sqs: Any,
                 functions: LocalFunctions | None = None, dynamodb: Any = None) -> None:
        """`dynamodb`: (dynamodb client, dynamodbstreams client) when the table's stream is to be read."""
        self.settings = settings
        self.sqs = sqs
        self.functions = functions or LocalFunctions(settings.containers_per_function)
        self._stopping = threading.Event()
        self.pollers = [Poller(source, queue_urls[source.queue], self.functions, sqs, self._stopping)
                        for source in sqs_event_sources()]
        self.stream_pollers: list[StreamPoller] = []
        if dynamodb is not None:
            tables = table_names()
            self.stream_pollers = [StreamPoller(
                source, tables[source.table], self.functions, dynamodb=dynamodb[0], streams=dynamodb[1],
                checkpoint_path=settings.data_dir / "streams" / f"{source.function}.json", stopping=self._stopping,
                on_failure=(sqs, queue_urls[source.on_failure_queue]) if source.on_failure_queue else None)
                for source in stream_event_sources()]
        self._schedule: threading.Thread | None = None

    def start(self) -> Workers:
        for poller in self.pollers:
            poller.start()
        for stream in self.stream_pollers:
            stream.start()
        if self.settings.rollup_every_seconds > 0:
            self._schedule = threading.Thread(target=self._fire_schedule, name="rollup-schedule", daemon=True)
            self._schedule.start()
        return self

    def _fire_schedule(self) -> None:
        """The weekly rollup's schedule, on a short interval: RollupFunction gets the schedule's event."""
        from local.rollup import schedule_event

        while not self._stopping.wait(self.settings.rollup_every_seconds):
            try:
                plan = self.functions.invoke("RollupFunction", schedule_event(week=self.settings.rollup_week or None))
                sys.stderr.write(f"rollup scheduled: {json.dumps(plan)}\n")
            except Exception as error:  # as EventBridge Scheduler would, try again next time
                sys.stderr.write(f"RollupFunction failed: {error!r}\n")

    def waiting(self) -> dict[str, dict[str, int]]:
        """Per source queue: messages a worker could take now, and those in flight or delayed."""
        counts = {}
        for poller in self.pollers:
            attributes = self.sqs.get_queue_attributes(QueueUrl=poller.queue_url, AttributeNames=[
                "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed"])["Attributes"]
            counts[poller.source.queue] = {
                "visible": int(attributes["ApproximateNumberOfMessages"]),
                "not_visible": int(attributes["ApproximateNumberOfMessagesNotVisible"])
                + int(attributes["ApproximateNumberOfMessagesDelayed"])}
        return counts

    def drain(self, timeout: float) -> dict[str, Any]:
        """Work until nothing is left that can be taken now (or the timeout), then stop the pollers."""
        started = time.monotonic()
        deadline = started + timeout
        while time.monotonic() < deadline:
            busy = any(p.busy for p in self.pollers) or any(s.busy or not s.caught_up for s in self.stream_pollers)
            counts = self.waiting()
            if not busy and all(c["visible"] == 0 for c in counts.values()):
                break
            time.sleep(0.2)
        self._stopping.set()
        every: list[Poller | StreamPoller] = [*self.pollers, *self.stream_pollers]
        for poller in every:  # a running batch finishes, within its timeout
            if poller.thread is not None:
                poller.thread.join(timeout=_timeout_seconds(poller.source.function) + LONG_POLL_SECONDS)
        return {"drained_in_seconds": round(time.monotonic() - started, 1),
                "batches": {p.source.function: p.batches for p in every},
                "left": {queue: c for queue, c in self.waiting().items() if c["visible"] or c["not_visible"]}}


def _timeout_seconds(logical_id: str) -> float:
    return float(functions()[logical_id].timeout)


def main() -> None:
    """The workers process of `make run`: its environment (tables, queues, endpoints) comes from local.stack."""
    import boto3

    from local.metrics import send_metrics

    settings = LocalSettings()
    streams = None
    if settings.opensearch_endpoint:  # the OpenSearch tier: the indexer follows the table's stream
        streams = (boto3.client("dynamodb"),
                   boto3.client("dynamodbstreams", endpoint_url=settings.dynamodb_endpoint or None))
    workers = Workers(settings, settings.queue_urls, boto3.client("sqs"), dynamodb=streams)
    send_metrics(settings.metrics, settings.data_dir)
    workers.start()
    start_trimming(settings.memory_trim_seconds)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()
    report = workers.drain(settings.drain_timeout_seconds)
    (settings.data_dir / WORKERS_REPORT).write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    main()
