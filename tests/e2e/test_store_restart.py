"""`make run` when DynamoDB Local dies: requests meanwhile answer 503 store_unavailable with Retry-After, the
stack says so on stderr and restarts it on the same port with its data, and stops after too many restarts."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from typing import Any

from tests.e2e.stack import Stack, start_stack, wait_for


def http(stack: Stack, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], Any]:
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
    request = urllib.request.Request(
        stack.url + path, data=data, method=method, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read() or b"null")


def kill_store(stack: Stack) -> None:
    """SIGKILL DynamoDB Local (as the OOM killer would) and wait until it is gone."""
    state_file = stack.data_dir / "stack.json"  # written just after the API first answers
    assert wait_for(state_file.exists, timeout=30)
    state = json.loads(state_file.read_text(encoding="utf-8"))
    pid = state["processes"]["dynamodb-local"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_given_dynamodb_local_killed_then_requests_answer_503_and_the_stack_restarts_it_losing_nothing(tmp_path):
    stack = start_stack(tmp_path)
    try:
        assert http(stack, "POST", "/v1/users/u1/memories", {"memory_type": "FACT", "content": "我住在杭州"})[0] == 201

        time.sleep(2)  # DynamoDB Local writes to disk a moment after it answers: a SIGKILL at once can lose it
        kill_store(stack)
        status, headers, body = http(stack, "GET", "/v1/users/u1/memories")
        assert status == 503, body
        assert body["error"]["code"] == "store_unavailable" and headers["Retry-After"] == "5"

        answers: list[Any] = []

        def listed() -> list[str]:
            answers.append(http(stack, "GET", "/v1/users/u1/memories"))
            status, _, body = answers[-1]
            return [m["content"] for m in body["items"]] if status == 200 else []

        assert wait_for(listed, timeout=240) == ["我住在杭州"], (
            answers[-1],
            "\n".join(line for line in stack.stop().splitlines() if not line.startswith(("{", "127.0.0.1"))),
        )
        assert http(stack, "POST", "/v1/users/u1/memories", {"memory_type": "FACT", "content": "我喜欢网球"})[0] == 201
    finally:
        printed = stack.stop()
    assert "DynamoDB Local exited (code -9); restarting it (1 of at most 3)" in printed, printed
    assert "DynamoDB Local is back at" in printed
    assert stack.process.returncode == 0, printed


def test_given_dynamodb_local_dying_past_the_restart_limit_then_the_stack_stops_saying_why(tmp_path):
    stack = start_stack(tmp_path, env_overrides={"LOCAL_DYNAMODB_MAX_RESTARTS": "0"})
    try:
        kill_store(stack)
        stack.process.wait(timeout=120)
    finally:
        if stack.process.poll() is None:
            stack.stop()
    printed = stack.printed()
    assert stack.process.returncode == 1, printed
    assert (
        "DynamoDB Local exited (code -9) after 0 restarts (LOCAL_DYNAMODB_MAX_RESTARTS=0); stopping the stack"
        in printed
    ), printed
