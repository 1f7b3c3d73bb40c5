"""The local stack's workers: they drain queued work before stopping, and report what is left after a drain
timeout."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local.queues import LocalQueues
from local.settings import LocalSettings
from local.workers import Workers

# The workers' drain ------------------------------------------------------------------------------------


class CountingFunctions:
    """Stands in for LocalFunctions in the workers: each invocation takes a while and succeeds."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.records: dict[str, int] = {}
        self._lock = threading.Lock()

    def invoke(self, logical_id: str, event: dict[str, Any]) -> dict[str, Any]:
        time.sleep(self.seconds)
        with self._lock:
            self.records[logical_id] = self.records.get(logical_id, 0) + len(event["Records"])
        return {"batchItemFailures": []}


@pytest.fixture
def queues(tmp_path: Path) -> Iterator[LocalQueues]:
    started = LocalQueues(tmp_path)
    started.start()
    try:
        yield started
    finally:
        started.stop()


def test_given_queued_work_when_the_workers_stop_then_they_drain_it_first(queues):
    sqs = queues.client()
    for i in range(12):
        sqs.send_message(QueueUrl=queues.urls["AccessStatsQueue"], MessageBody=str(i))
    functions = CountingFunctions(0.05)
    workers = Workers(LocalSettings(), queues.urls, sqs, functions)  # type: ignore[arg-type]
    report = workers.start().drain(timeout=30)
    assert functions.records == {"AccessStatsFunction": 12}
    assert report["left"] == {}
    assert queues.pending()["AccessStatsQueue"] == 0


def test_given_a_drain_timeout_then_the_workers_stop_and_report_what_is_left(queues):
    sqs = queues.client()
    for i in range(30):
        sqs.send_message(QueueUrl=queues.urls["LogExtractionQueue"], MessageBody=str(i))
    functions = CountingFunctions(0.5)  # 5 per batch: far slower than the timeout allows
    report = Workers(LocalSettings(), queues.urls, sqs, functions).start().drain(timeout=0.2)  # type: ignore[arg-type]
    done = functions.records.get("ExtractWorkerFunction", 0)
    assert done < 30
    assert report["left"]["LogExtractionQueue"]["visible"] == 30 - done
    assert queues.save()["LogExtractionQueue"] == 30 - done  # what the next start queues again
