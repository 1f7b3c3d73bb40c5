"""The Python client resends a batch whose first attempt got no answer (the connection dropped, timed out, or a
503): over a real socket, against a server that fails the first attempt. The API stores a resent batch once
(saves are idempotent by content), so the resend is safe."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from typing import Any

import pytest

from agent_memory_client import MemoryClient
from agent_memory_client._http import RetryPolicy

ANSWER = {"results": [{"outcome": "created", "memory": {"memory_key": "mem_1"}}]}


class FlakyServer:
    """Answers every request 200 with ANSWER, except the first: it is dropped unanswered, answered late, or 503."""

    def __init__(self, first: str) -> None:
        self.first = first
        self.bodies: list[dict[str, Any]] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            with connection:
                self.bodies.append(_read_request(connection))
                if len(self.bodies) == 1 and self.first == "drop":
                    continue  # closed without a word: the client sees the connection end
                if len(self.bodies) == 1 and self.first == "slow":
                    # Answered only once the client has given up on it (closed the connection), however long the
                    # client's timeout takes on a loaded machine.
                    with contextlib.suppress(OSError):
                        while connection.recv(65536):
                            pass
                status, body = (
                    ("503 Service Unavailable", b'{"error":{"code":"store_unavailable"}}')
                    if len(self.bodies) == 1 and self.first == "503"
                    else ("200 OK", json.dumps(ANSWER).encode())
                )
                head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                if status.startswith("503"):
                    head += "Retry-After: 0\r\n"
                with contextlib.suppress(OSError):  # the client may have given up on a slow answer
                    connection.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)

    def close(self) -> None:
        self._listener.close()


def _read_request(connection: socket.socket) -> dict[str, Any]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    length = next(int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length"))
    while len(body) < length:
        body += connection.recv(65536)
    return dict(json.loads(body))


@pytest.mark.parametrize("first", ["drop", "slow", "503"])
def test_given_the_first_attempt_unanswered_then_the_client_resends_the_same_batch(first):
    server = FlakyServer(first)
    memories = [{"memory_type": "FACT", "content": f"事实{i}"} for i in range(100)]
    try:
        # The timeout only ends the slow attempt: the retry's answer is immediate, but must not be cut short on a
        # loaded machine.
        with MemoryClient(server.url, timeout=2.0, retry_policy=RetryPolicy(initial_backoff=0.01)) as client:
            answer = client.save_batch("u1", memories)
    finally:
        server.close()

    assert answer == ANSWER
    assert len(server.bodies) == 2
    assert server.bodies[0] == server.bodies[1] == {"memories": memories}
