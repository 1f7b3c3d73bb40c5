"""Access statistics leave the read path without waiting for SQS."""

from __future__ import annotations

import json
import threading
from typing import Any

from agent_memory.adapters.access_stats import SqsAccessRecorder
from agent_memory.domain.models import ScopeRef

USER = ScopeRef(tenant_id="t1", user_id="u1")


class SlowSqs:
    """Records SendMessageBatch calls; each waits until `release` is set (an SQS that is slow or down)."""

    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[dict[str, Any]]] = []
        self.release = threading.Event()
        self.fail = fail

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.release.wait(5)
        if self.fail:
            raise ConnectionError("sqs unreachable")
        self.batches.append(Entries)
        return {"Successful": [{"Id": e["Id"]} for e in Entries]}


def test_given_a_slow_queue_then_recording_returns_at_once_and_the_message_follows():
    sqs = SlowSqs()
    recorder = SqsAccessRecorder(queue_url="q", client=sqs)
    recorder(USER, ["mem_a", "mem_b"])  # returns although SQS has not answered
    assert sqs.batches == []
    sqs.release.set()
    assert recorder.flush(timeout=5)
    (body,) = [json.loads(e["MessageBody"]) for batch in sqs.batches for e in batch]
    assert body["memory_keys"] == ["mem_a", "mem_b"] and body["tenant_id"] == "t1" and body["user_id"] == "u1"


def test_given_many_searches_while_sqs_is_busy_then_they_go_out_in_batches_of_ten():
    sqs = SlowSqs()
    recorder = SqsAccessRecorder(queue_url="q", client=sqs)
    for i in range(25):
        recorder(ScopeRef(tenant_id="t1", user_id=f"u{i}"), [f"mem_{i}"])
    sqs.release.set()
    assert recorder.flush(timeout=5)
    sizes = [len(batch) for batch in sqs.batches]
    assert sum(sizes) == 25 and max(sizes) <= 10


def test_given_sqs_down_or_a_full_backlog_then_searches_never_fail():
    sqs = SlowSqs(fail=True)
    recorder = SqsAccessRecorder(queue_url="q", client=sqs, max_pending=2)
    for i in range(5):  # beyond the backlog: dropped with a warning, and counted
        recorder(USER, [f"mem_{i}"])
    sqs.release.set()
    assert recorder.flush(timeout=5)
    assert sqs.batches == []
    assert recorder.dropped >= 1  # at most two wait and two are being sent: the fifth at least was dropped


def test_given_one_users_reads_pending_together_then_they_go_out_as_one_message_of_every_read():
    sqs = SlowSqs()
    recorder = SqsAccessRecorder(queue_url="q", client=sqs)
    recorder(ScopeRef(tenant_id="t1", user_id="u0"), ["mem_first"])  # the sender takes it and waits on SQS
    for i in range(12):  # meanwhile these wait together
        recorder(USER, ["mem_a", f"mem_{i % 2}"])
    sqs.release.set()
    assert recorder.flush(timeout=5)

    bodies = [json.loads(e["MessageBody"]) for batch in sqs.batches for e in batch]
    mine = [b for b in bodies if b["user_id"] == "u1"]
    assert sorted(k for b in mine for k in b["memory_keys"]) == sorted(["mem_a"] * 12 + ["mem_0", "mem_1"] * 6)
    assert len(mine) < 12  # merged, not one message per read
