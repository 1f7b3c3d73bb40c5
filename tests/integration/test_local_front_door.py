"""The local stack's front door, on its own: HTTP handling of oversized, malformed, repeated, non-UTF-8, chunked and
pipelined requests. (The whole stack over HTTP is in tests/e2e.)"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from local.api import MAX_REQUEST_BYTES, serve


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
