"""The local stack's parts, each on its own: the front door's HTTP handling, the container pool, the queues'
save and restore across a stop, the workers' drain. (The whole stack over HTTP is in tests/e2e.)"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local.api import MAX_REQUEST_BYTES, serve
from local.queues import LocalQueues
from local.runtime import LocalFunctions
from local.settings import LocalSettings
from local.template import FunctionDef
from local.workers import Workers


class RecordingFunctions:
    """Stands in for LocalFunctions at the front door: records each event and answers 200 with its body."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def names(self) -> list[str]:
        return ["LoadFunction"]

    def invoke(self, logical_id: str, event: dict[str, Any]) -> dict[str, Any]:
        self.events.append(event)
        return {"statusCode": 200, "headers": {"content-type": "application/json"},
                "body": json.dumps({"path": event["rawPath"], "body": event.get("body")})}


@pytest.fixture
def front_door() -> Iterator[tuple[int, RecordingFunctions]]:
    functions = RecordingFunctions()
    server, _ = serve(functions, 0)  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], functions
    finally:
        server.shutdown()
        server.server_close()


def exchange(port: int, raw: bytes, wait: float = 2.0) -> bytes:
    """Send raw bytes on one connection; everything the server sent until it closed (or went quiet)."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(wait)
        sock.sendall(raw)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            received += b"<quiet>"
    return received


def json_body(response: bytes) -> dict[str, Any]:
    body = response.split(b"\r\n\r\n", 1)[1].removesuffix(b"<quiet>")
    return dict(json.loads(body))


def test_given_an_oversized_body_then_413_and_its_bytes_are_never_read_as_a_second_request(front_door):
    port, functions = front_door
    smuggled = b"GET /v1/users/u1/memories HTTP/1.1\r\nHost: x\r\n\r\n"
    head = f"POST /v1/users/u1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_REQUEST_BYTES + 1}\r\n\r\n"
    response = exchange(port, head.encode() + smuggled)
    assert response.startswith(b"HTTP/1.1 413")
    assert json_body(response)["error"]["code"] == "payload_too_large"
    assert response.count(b"HTTP/1.1") == 1 and functions.events == []


@pytest.mark.parametrize("length", [b"abc", b"-1", b"1.5"])
def test_given_a_malformed_content_length_then_a_json_400_and_the_connection_closes(front_door, length):
    port, functions = front_door
    response = exchange(port, b"POST /v1/users/u1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: " + length
                        + b"\r\n\r\n{}")
    assert response.startswith(b"HTTP/1.1 400")
    assert not response.endswith(b"<quiet>")  # closed, not left hanging
    assert json_body(response)["error"]["details"] == {"header": "Content-Length"}
    assert functions.events == []


def test_given_an_unparsable_request_line_then_the_error_is_json(front_door):
    port, _ = front_door
    response = exchange(port, b"GARBAGE\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 400")
    assert b"application/json" in response.split(b"\r\n\r\n")[0]
    assert json_body(response)["error"]["code"] == "bad_request"


def test_given_a_repeated_tenant_header_then_the_event_carries_both_values_for_the_handler_to_refuse(front_door):
    port, functions = front_door
    exchange(port, b"GET /v1/users/u1/memories HTTP/1.1\r\nHost: x\r\nX-Tenant-Id: a\r\nX-Tenant-Id: b\r\n"
             b"Connection: close\r\n\r\n")
    assert functions.events[0]["headers"]["x-tenant-id"] == "a,b"  # as API Gateway joins them


def test_given_raw_utf8_in_the_request_target_then_the_event_carries_it_decoded(front_door):
    port, functions = front_door
    exchange(port, "GET /v1/users/李雷/memories?q=香港&limit=5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
             .encode())
    event = functions.events[0]
    assert event["rawPath"] == "/v1/users/李雷/memories"
    assert event["rawQueryString"] == "q=香港&limit=5"
    assert event["queryStringParameters"] == {"q": "香港", "limit": "5"}


def test_given_a_request_target_that_is_not_utf8_then_a_json_400(front_door):
    port, functions = front_door
    response = exchange(port, b"GET /v1/users/u1/memories?q=\xff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 400")
    assert json_body(response)["error"]["details"] == {"field": "url"}
    assert functions.events == []


def test_given_a_chunked_body_then_the_function_gets_it_whole(front_door):
    port, functions = front_door
    exchange(port, b"POST /v1/users/u1/memories HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
             b"Connection: close\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n")
    assert json.loads(functions.events[0]["body"]) == {"a": 1}


def test_given_pipelined_requests_then_one_is_served_and_the_connection_closes(front_door):
    """One request per connection: bytes after a request are never parsed as another one."""
    port, functions = front_door
    one = b"POST /v1/users/u1/memories HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
    response = exchange(port, one + one)
    assert response.count(b"HTTP/1.1 200") == 1 and b"Connection: close" in response
    assert len(functions.events) == 1


# The container pool ---------------------------------------------------------------------------------------

SLOW_HANDLER = '''
import threading, time
STATE = {"calls": 0}
def handler(event, context):
    STATE["calls"] += 1
    time.sleep(event["sleep"])
    return {"container": id(STATE), "calls": STATE["calls"]}
'''


@pytest.fixture
def slow_function(tmp_path: Path) -> dict[str, FunctionDef]:
    (tmp_path / "app.py").write_text(SLOW_HANDLER, encoding="utf-8")
    return {"SlowFunction": FunctionDef("SlowFunction", str(tmp_path), "app.handler", timeout=5)}


def run_concurrently(functions: LocalFunctions, count: int, sleep: float) -> tuple[list[Any], float]:
    results: list[Any] = [None] * count

    def call(i: int) -> None:
        results[i] = functions.invoke("SlowFunction", {"sleep": sleep})

    threads = [threading.Thread(target=call, args=(i,)) for i in range(count)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.monotonic() - started


def test_given_two_containers_then_concurrent_invocations_of_one_function_run_at_once(slow_function):
    functions = LocalFunctions(containers_per_function=2, definitions=slow_function)
    results, elapsed = run_concurrently(functions, 4, 0.4)
    assert elapsed < 1.2  # two rounds of 0.4 s, not four
    assert len({r["container"] for r in results}) == 2  # each container its own module state
    assert functions.containers("SlowFunction") == 2


def test_given_one_container_then_invocations_wait_for_it_and_keep_it_warm(slow_function):
    functions = LocalFunctions(containers_per_function=1, definitions=slow_function)
    results, elapsed = run_concurrently(functions, 3, 0.2)
    assert elapsed >= 0.6
    assert sorted(r["calls"] for r in results) == [1, 2, 3]  # one warm container served all three


# The queues across a stop ------------------------------------------------------------------------------


def test_given_messages_queued_and_in_flight_at_a_stop_then_the_next_start_queues_them_again(tmp_path):
    queues = LocalQueues(tmp_path)
    assert queues.start() == {}
    sqs = queues.client()
    url = queues.urls["LogExtractionQueue"]
    for body in ("one", "two", "三"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)  # in flight when the stack stops
    assert queues.pending()["LogExtractionQueue"] == 3
    assert queues.save() == {"LogExtractionQueue": 3}
    queues.stop()

    again = LocalQueues(tmp_path)
    try:
        assert again.start() == {"LogExtractionQueue": 3}
        received = again.client().receive_message(QueueUrl=again.urls["LogExtractionQueue"], MaxNumberOfMessages=10)
        assert sorted(m["Body"] for m in received["Messages"]) == sorted(["one", "two", "三"])
        assert not (tmp_path / "LogExtractionQueue.jsonl").exists()
    finally:
        again.stop()


def test_the_queues_carry_the_templates_redrive_policy(tmp_path):
    queues = LocalQueues(tmp_path)
    queues.start()
    try:
        attributes = queues.client().get_queue_attributes(QueueUrl=queues.urls["LogExtractionQueue"],
                                                          AttributeNames=["All"])["Attributes"]
        assert json.loads(attributes["RedrivePolicy"])["maxReceiveCount"] == 3
        assert attributes["VisibilityTimeout"] == "1800"
    finally:
        queues.stop()


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


def test_given_queued_work_when_the_workers_stop_then_they_drain_it_first(tmp_path):
    queues = LocalQueues(tmp_path)
    queues.start()
    try:
        sqs = queues.client()
        for i in range(12):
            sqs.send_message(QueueUrl=queues.urls["AccessStatsQueue"], MessageBody=str(i))
        functions = CountingFunctions(0.05)
        workers = Workers(LocalSettings(), queues.urls, sqs, functions)  # type: ignore[arg-type]
        report = workers.start().drain(timeout=30)
        assert functions.records == {"AccessStatsFunction": 12}
        assert report["left"] == {}
        assert queues.pending()["AccessStatsQueue"] == 0
    finally:
        queues.stop()


def test_given_a_drain_timeout_then_the_workers_stop_and_report_what_is_left(tmp_path):
    queues = LocalQueues(tmp_path)
    queues.start()
    try:
        sqs = queues.client()
        for i in range(30):
            sqs.send_message(QueueUrl=queues.urls["LogExtractionQueue"], MessageBody=str(i))
        functions = CountingFunctions(0.5)  # 5 per batch: far slower than the timeout allows
        report = Workers(LocalSettings(), queues.urls, sqs, functions).start().drain(timeout=0.2)  # type: ignore[arg-type]
        done = functions.records.get("ExtractWorkerFunction", 0)
        assert done < 30
        assert report["left"]["LogExtractionQueue"]["visible"] == 30 - done
        assert queues.save()["LogExtractionQueue"] == 30 - done  # what the next start queues again
    finally:
        queues.stop()


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


def test_dynamodb_local_runs_in_a_session_of_its_own_so_a_terminal_ctrl_c_cannot_stop_it_early(dynamodb_local):
    """The supervisor stops the table last, after the workers' drain: a Ctrl-C in the terminal (sent to the
    foreground process group) must reach only the supervisor."""
    import os

    assert dynamodb_local.pid is not None
    assert os.getsid(dynamodb_local.pid) != os.getsid(0)
