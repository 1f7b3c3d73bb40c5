"""The real handlers against a DynamoDB endpoint nothing listens on: every route that reads or writes the table
answers 503 `store_unavailable` with Retry-After, never a 500; once the table is back, nothing was written."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from local.dynamodb_local import DynamoDBLocal
from local.runtime import LocalFunctions, table_names
from local.template import create_tables, sqs_queues
from tests.conftest import skip_or_fail
from tests.integration.conftest import LambdaApi, deployed_environment, reset_containers


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def table_at(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> LambdaApi:
    closed = f"http://127.0.0.1:{closed_port()}"
    queues = {logical_id: f"{closed}/000000000000/{logical_id}" for logical_id in sqs_queues()}
    for name, value in deployed_environment(queues).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SQS", closed)
    reset_containers()
    return LambdaApi(LocalFunctions())


REQUESTS: list[tuple[str, str, Any]] = [
    ("POST", "/v1/users/u1/memories", {"memory_type": "FACT", "content": "用户32岁", "field": "age"}),
    (
        "POST",
        "/v1/users/u1/memories/batch",
        {"memories": [{"memory_type": "FACT", "content": f"事实{i}"} for i in range(3)]},
    ),
    ("GET", "/v1/users/u1/memories", None),
    ("POST", "/v1/users/u1/memories/search", {"query": "年龄"}),
]


def test_given_the_table_endpoint_closed_then_every_route_answers_503_with_retry_after(monkeypatch):
    api = table_at(monkeypatch, f"http://127.0.0.1:{closed_port()}")
    try:
        answers = [api.call(method, path, body) for method, path, body in REQUESTS]
    finally:
        reset_containers()

    for (method, path, _), answer in zip(REQUESTS, answers, strict=True):
        assert answer.status == 503, (method, path, answer.body)
        assert answer.headers["retry-after"] == "5"
        assert answer.body["error"]["code"] in ("store_unavailable", "batch_interrupted"), answer.body
    batch = answers[1].body["error"]
    assert batch["code"] == "store_unavailable" or batch["details"]["written"] == []


def test_given_dynamodb_local_stopped_then_saves_answer_503_and_after_its_restart_nothing_was_written(
    monkeypatch, tmp_path
):
    from local.dynamodb_local import available

    if not available():
        skip_or_fail("DynamoDB Local not installed (make dynamodb-local) or no java")
    store = DynamoDBLocal(tmp_path / "dynamodb").start(timeout=120)
    try:
        create_tables(store.client(), table_names())
        api = table_at(monkeypatch, store.endpoint)
        assert api.call("POST", "/v1/users/u1/memories", {"memory_type": "FACT", "content": "我住在杭州"}).status == 201
        store.stop()

        down = [api.call(method, path, body) for method, path, body in REQUESTS[:2]]

        assert [(a.status, a.headers["retry-after"]) for a in down] == [(503, "5"), (503, "5")]
        store.start(timeout=120)  # the same port and data
        listed = api.call("GET", "/v1/users/u1/memories")
        assert listed.status == 200
        assert [m["content"] for m in listed.body["items"]] == ["我住在杭州"]
    finally:
        store.stop()
        reset_containers()


def test_given_a_table_that_accepts_connections_and_never_answers_then_a_503_comes_within_the_bounds(monkeypatch):
    import threading
    import time

    with socket.socket() as hanging:
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(16)
        held: list[socket.socket] = []
        stop = threading.Event()

        def accept() -> None:  # holds every connection open, reads nothing, answers nothing
            hanging.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(hanging.accept()[0])
                except OSError:
                    continue

        acceptor = threading.Thread(target=accept, daemon=True)
        acceptor.start()
        monkeypatch.setenv("STORE_READ_TIMEOUT_SECONDS", "1")
        api = table_at(monkeypatch, f"http://127.0.0.1:{hanging.getsockname()[1]}")
        try:
            started = time.monotonic()
            answer = api.call("GET", "/v1/users/u1/memories")
            elapsed = time.monotonic() - started
        finally:
            stop.set()
            acceptor.join()
            for connection in held:
                connection.close()
            reset_containers()

    assert answer.status == 503 and answer.body["error"]["code"] == "store_unavailable", answer.body
    # STORE_CALL_ATTEMPTS (2) reads of 1 s each, with a short backoff: nowhere near botocore's 60 s default
    assert elapsed < 10, elapsed
