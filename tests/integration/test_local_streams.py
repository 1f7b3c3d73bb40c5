"""The local stack's stream poller: DynamoDB Local's writes are delivered once, across a restart."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

# The table's stream, for the indexer --------------------------------------------------------------------


class StreamFunctions:
    """Stands in for LocalFunctions under a stream poller: records each record of the user's partition;
    `fail_once` reports the first record of that user as failed, once."""

    def __init__(self, partition: str, fail_once: bool = False) -> None:
        self.partition = partition
        self.fail_once = fail_once
        self.delivered: list[dict[str, Any]] = []

    def invoke(self, logical_id: str, event: dict[str, Any]) -> dict[str, Any]:
        mine = [r for r in event["Records"] if r["dynamodb"]["Keys"]["pk"]["S"] == self.partition]
        if mine and self.fail_once:
            self.fail_once = False
            return {"batchItemFailures": [{"itemIdentifier": mine[0]["dynamodb"]["SequenceNumber"]}]}
        self.delivered.extend(mine)
        return {"batchItemFailures": []}


def stream_poller(dynamodb_local: Any, functions: StreamFunctions, checkpoint: Path) -> Any:
    import boto3

    from local.streams import StreamPoller
    from local.template import stream_event_sources
    from tests.conftest import TABLE

    streams = boto3.client("dynamodbstreams", endpoint_url=dynamodb_local.endpoint, region_name="us-east-1",
                           aws_access_key_id="local", aws_secret_access_key="local")
    return StreamPoller(stream_event_sources()[0], TABLE, functions, dynamodb_local.client(), streams, checkpoint,
                        threading.Event())


def wait_until(check: Any, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_given_writes_then_the_stream_poller_delivers_them_once_across_a_restart(
        dynamodb_local, dynamodb_local_store, user, tmp_path):
    from agent_memory.domain.models import MemoryType, NewMemory

    partition = f"T#{user.tenant_id}#U#{user.user_id}"
    checkpoint = tmp_path / "IndexerFunction.json"
    first_functions = StreamFunctions(partition, fail_once=True)
    first = stream_poller(dynamodb_local, first_functions, checkpoint)
    first.start()
    dynamodb_local_store.save(user, NewMemory(memory_type=MemoryType.FACT, content="喜欢网球", embedding=b"\x01\x02"))
    memory_records = lambda functions: [r for r in functions.delivered  # noqa: E731
                                        if r["dynamodb"]["Keys"]["sk"]["S"].startswith("MEM#")]
    assert wait_until(lambda: memory_records(first_functions))
    (record,) = memory_records(first_functions)
    assert record["eventName"] == "INSERT" and record["eventSource"] == "aws:dynamodb"  # once, after a retry
    assert record["dynamodb"]["NewImage"]["embedding"] == {"B": "AQI="}  # base64, as Lambda carries it
    assert isinstance(record["dynamodb"]["ApproximateCreationDateTime"], float)
    delivered_before = len(first_functions.delivered)
    assert wait_until(lambda: first.caught_up)
    first.stopping.set()
    first.thread.join(timeout=10)

    second_functions = StreamFunctions(partition)
    second = stream_poller(dynamodb_local, second_functions, checkpoint)
    second.start()
    try:
        dynamodb_local_store.save(user, NewMemory(memory_type=MemoryType.FACT, content="住在杭州"))
        assert wait_until(lambda: memory_records(second_functions))
        assert [r["dynamodb"]["NewImage"]["content"]["S"] for r in memory_records(second_functions)] == ["住在杭州"]
        assert not first_functions.fail_once and delivered_before >= 3  # the failed record came again, once
    finally:
        second.stopping.set()
