"""`make run`'s stack in a child process, for the end-to-end tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Stack:
    url: str
    process: subprocess.Popen[str]
    data_dir: Path
    # What the stack prints, read as it comes: a pipe nobody reads fills up (64 KiB of request logs) and then
    # blocks the stack's next log line, and with it the request that writes it.
    output: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    def drain(self) -> None:
        assert self.process.stdout is not None
        self.reader = threading.Thread(target=lambda: self.output.extend(self.process.stdout or ()), daemon=True)
        self.reader.start()

    def printed(self) -> str:
        """Everything the stack printed, once it has exited."""
        if self.reader is not None:
            self.reader.join(timeout=30)
        return "".join(self.output)

    def stop(self) -> str:
        """A normal stop (SIGTERM, as a supervisor sends it); returns what the stack printed."""
        self.process.terminate()
        self.process.wait(timeout=120)
        return self.printed()


def wait_for(check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_stack(data_dir: Path, port: int | None = None, *, env_overrides: dict[str, str] | None = None) -> Stack:
    """`make run` in a child process (`python -m local.stack`) on a free port, its data in `data_dir`;
    `env_overrides` adds to its environment (e.g. SEARCH=opensearch)."""
    from local.dynamodb_local import available

    if not available():
        pytest.skip("DynamoDB Local not installed (make dynamodb-local) or no java")
    port = port or free_port()
    inherited = ("AWS_", "LLM_", "ANTHROPIC_", "LOCAL_", "OPENSEARCH_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(inherited) and k != "SEARCH"}
    env["PYTHONPATH"] = f"{ROOT / 'shared'}:{ROOT}"
    env.update(env_overrides or {})
    process = subprocess.Popen([sys.executable, "-m", "local.stack", "--port", str(port), "--data-dir", str(data_dir)],
                               cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    stack = Stack(url, process, data_dir)
    stack.drain()
    deadline = time.monotonic() + 120
    while not healthy(url):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait(timeout=30)
            raise RuntimeError(f"local stack did not start:\n{stack.printed()}") from None
        time.sleep(0.2)
    return stack


def healthy(url: str) -> bool:
    """GET /health answers 200: the API, the table, the queues and the workers all answer."""
    try:
        with urllib.request.urlopen(url + "/health", timeout=30) as response:  # a first one loads the function
            return bool(response.status == 200)
    except OSError:  # not listening yet, or a 503 (HTTPError) while a part is still starting
        return False




@contextmanager
def running_stack(data_dir: Path, env_overrides: dict[str, str] | None = None) -> Iterator[Stack]:
    """`start_stack` for a block (a module's fixture): stopped at its end unless it has exited already."""
    running = start_stack(data_dir, env_overrides=env_overrides)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.stop()


def http(stack: Stack, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
    """Raw HTTP, for what a client never sends (broken JSON) and the local-only invoke route."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(stack.url + path, data=data, method=method,
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")
