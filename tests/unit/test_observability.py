"""The lazy tracer: nothing of the X-Ray SDK at import, then powertools' Tracer on the first invocation."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_memory.observability import LazyTracer

SHARED = Path(__file__).resolve().parents[2] / "shared"


class RecordingTracer:
    """What LazyTracer hands the handler to: a Tracer's capture_lambda_handler and put_annotation."""

    def __init__(self) -> None:
        self.wrapped: list[tuple[Any, bool | None, bool | None]] = []
        self.annotations: dict[str, Any] = {}

    def capture_lambda_handler(self, handler, capture_response=None, capture_error=None):
        self.wrapped.append((handler, capture_response, capture_error))

        def traced(event, context, **kwargs):
            return {"traced": handler(event, context, **kwargs)}

        return traced

    def put_annotation(self, key, value):
        self.annotations[key] = value


def lazy() -> tuple[LazyTracer, list[RecordingTracer]]:
    built: list[RecordingTracer] = []

    def build() -> Any:
        built.append(RecordingTracer())
        return built[-1]

    return LazyTracer(service="test", build=build), built


def test_given_a_decorated_handler_then_the_tracer_is_built_on_the_first_invocation_only_and_wraps_it():
    tracer, built = lazy()

    @tracer.capture_lambda_handler(capture_response=False)
    def handler(event, context):
        return event * 2

    assert built == [] and not tracer.built  # decorating builds nothing
    assert handler(2, None) == {"traced": 4}
    assert handler(3, None) == {"traced": 6}
    assert len(built) == 1 and built[0].wrapped == [(handler.__wrapped__, False, None)]
    assert handler.__name__ == "handler"


def test_given_the_decorator_without_arguments_then_it_wraps_the_same_way():
    tracer, built = lazy()

    @tracer.capture_lambda_handler
    def handler(event, context):
        return event

    assert handler("x", None) == {"traced": "x"}
    assert built[0].wrapped[0][1:] == (None, None)


def test_given_warm_or_a_tracer_attribute_then_it_is_built_once_and_the_attribute_is_the_tracers():
    tracer, built = lazy()

    assert tracer.warm() is tracer.warm()
    tracer.put_annotation("route", "inject")

    assert len(built) == 1 and built[0].annotations == {"route": "inject"}
    with pytest.raises(AttributeError):
        tracer._missing  # noqa: B018 - private names never build the tracer


def test_given_powertools_tracer_outside_lambda_then_the_handler_runs_and_its_errors_propagate():
    tracer = LazyTracer(service="agent-memory")

    @tracer.capture_lambda_handler(capture_response=False)
    def handler(event, context):
        if event == "fail":
            raise ValueError("boom")
        return {"statusCode": 200}

    assert handler({}, None) == {"statusCode": 200}
    with pytest.raises(ValueError, match="boom"):
        handler("fail", None)


TRACED = """
import sys
from agent_memory.observability import tracer

@tracer.capture_lambda_handler(capture_response=False)
def handler(event, context):
    return event

assert "aws_xray_sdk.core" not in sys.modules, "the X-Ray SDK was imported at import time"
handler(1, None)
handler(2, None)
import botocore.client
assert getattr(botocore.client, "_xray_enabled", False), "botocore was not patched"
"""


def test_given_lambda_with_tracing_on_then_each_invocation_sends_the_handler_subsegment_to_the_daemon():
    """In a process with the Lambda environment X-Ray sets: the SDK is not imported at import, and each
    invocation still reaches the daemon as powertools' `## handler` subsegment, ColdStart only the first."""
    daemon = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    daemon.bind(("127.0.0.1", 0))
    daemon.settimeout(20)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SHARED), "LAMBDA_TASK_ROOT": "/tmp",
           "AWS_LAMBDA_FUNCTION_NAME": "agent-memory-test", "AWS_REGION": "us-east-1",
           "_X_AMZN_TRACE_ID": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
           "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{daemon.getsockname()[1]}"}
    try:
        run = subprocess.run([sys.executable, "-c", TRACED], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        documents = [json.loads(daemon.recvfrom(65536)[0].decode().split("\n", 1)[1]) for _ in range(2)]
    finally:
        daemon.close()

    assert [d["name"] for d in documents] == ["## handler", "## handler"]
    assert [d["annotations"] for d in documents] == [{"ColdStart": True, "Service": "agent-memory"},
                                                     {"ColdStart": False, "Service": "agent-memory"}]
    assert {d["trace_id"] for d in documents} == {"1-5759e988-bd862e3fe1be46a994272793"}
