"""What the local front door adds for a person at the console and a probe: `/` sends a browser to the inspector,
each request prints one short line (method, path, status, milliseconds), GET /health carries the stack's queues
and workers beside the function's parts, and the EMF metric lines go to a file, not the console."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.domain.health import EmbedderHealth, Health, HealthStatus, TableHealth
from local.api import access_line, serve
from local.health import LocalParts
from local.metrics import METRICS_FILE, keep_metrics_per_thread, send_metrics
from local.runtime import LocalFunctions
from local.template import FunctionDef

FUNCTION_OK = Health.of(tables={"MemoryTable": TableHealth(status="ok", latency_ms=2.0)},
                        embedder=EmbedderHealth(status="ok", model="m", loaded=False, lazy=True))


class HealthyFunctions:
    """Stands in for LocalFunctions: the load function's health answer (as deployed: no queues, no workers), part
    by part on GET /v1/health, the verdict alone on GET /health."""

    def __init__(self, report: Health = FUNCTION_OK) -> None:
        self.report = report

    def names(self) -> list[str]:
        return ["LoadFunction"]

    def invoke(self, logical_id: str, event: dict[str, Any]) -> dict[str, Any]:
        status = 200 if self.report.status == "ok" else 503
        body = self.report if event["rawPath"] == "/v1/health" else HealthStatus(status=self.report.status)
        return {"statusCode": status, "headers": {"Content-Type": "application/json"}, "body": body.model_dump_json()}


@pytest.fixture
def queues() -> Iterator[tuple[Any, dict[str, str]]]:
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        urls = {name: sqs.create_queue(QueueName=name)["QueueUrl"] for name in ("RollupQueue", "AccessStatsQueue")}
        yield sqs, urls


def serving(functions: Any, parts: LocalParts | None = None) -> tuple[int, Any]:
    server, _ = serve(functions, 0, parts)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1], server


def get(port: int, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def health_answer(functions: Any, parts: LocalParts, path: str = "/v1/health") -> tuple[int, dict[str, str], bytes]:
    """One health request to a front door of its own, stopped again."""
    port, server = serving(functions, parts)
    try:
        return get(port, path)
    finally:
        server.shutdown()


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_given_the_queues_and_the_workers_then_health_reports_their_depth_and_life(queues):
    sqs, urls = queues
    sqs.send_message(QueueUrl=urls["RollupQueue"], MessageBody="{}")
    status, headers, body = health_answer(HealthyFunctions(), LocalParts(urls, sqs, workers_pid=os.getpid()))

    report = json.loads(body)
    assert status == 200 and report["status"] == "ok" and "Retry-After" not in headers
    assert report["queues"] == {"AccessStatsQueue": {"status": "ok", "depth": 0, "in_flight": 0, "error": None},
                                "RollupQueue": {"status": "ok", "depth": 1, "in_flight": 0, "error": None}}
    assert report["workers"] == {"status": "ok", "alive": True}
    assert report["tables"] == json.loads(FUNCTION_OK.model_dump_json())["tables"]


def test_given_the_workers_process_gone_then_health_is_503_naming_it(queues):
    sqs, urls = queues
    status, headers, body = health_answer(HealthyFunctions(), LocalParts(urls, sqs, workers_pid=dead_pid()))

    report = json.loads(body)
    assert (status, headers["Retry-After"]) == (503, "5")
    assert report["status"] == "unavailable" and report["workers"] == {"status": "down", "alive": False}


def test_given_the_queues_unreachable_then_health_is_503_with_each_queue_down():
    sqs = boto3.client("sqs", region_name="us-east-1", endpoint_url="http://127.0.0.1:9")  # nothing listens
    status, _, body = health_answer(HealthyFunctions(), LocalParts({"RollupQueue": "http://127.0.0.1:9/q"}, sqs,
                                                                   workers_pid=os.getpid()))

    report = json.loads(body)
    assert status == 503 and report["queues"]["RollupQueue"]["status"] == "down"


def test_given_the_table_down_then_the_functions_503_stays_503_with_the_local_parts_added(queues):
    sqs, urls = queues
    down = Health.of(tables={"MemoryTable": TableHealth(status="down", latency_ms=None, error="unreachable")},
                     embedder=FUNCTION_OK.embedder)
    status, headers, body = health_answer(HealthyFunctions(down), LocalParts(urls, sqs, workers_pid=os.getpid()))

    report = json.loads(body)
    assert (status, headers["Retry-After"], report["status"]) == (503, "5", "unavailable")
    assert report["workers"]["alive"] and set(report["queues"]) == set(urls)


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_the_root_redirects_to_the_memory_inspector(method):
    port, server = serving(HealthyFunctions())
    try:
        status, headers, _ = get(port, "/", method)
    finally:
        server.shutdown()

    assert (status, headers["Location"]) == (302, "/ui")


def test_each_request_prints_one_line_with_method_path_status_and_milliseconds(capsys):
    port, server = serving(HealthyFunctions())
    try:
        get(port, "/health?secret=my%20words")
        get(port, "/")
    finally:
        server.shutdown()

    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"GET /health 200 \d+ ms", lines[0]), lines  # the query string stays out
    assert re.fullmatch(r"GET / 302 \d+ ms", lines[1]), lines


def test_the_access_line_format():
    assert access_line("POST", "/v1/users/u1/memories", 201, 12.4) == "POST /v1/users/u1/memories 201 12 ms"


METRICS_HANDLER = """
from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.observability import metrics


@metrics.log_metrics
def handler(event, context):
    metrics.add_metric(name="Work", unit=MetricUnit.Count, value=1)
    return {}
"""


@pytest.mark.parametrize("destination", ["file", "off", "console"])
def test_the_metric_lines_go_where_local_metrics_says(tmp_path: Path, capsys, destination):
    (tmp_path / "app.py").write_text(METRICS_HANDLER, encoding="utf-8")
    functions = LocalFunctions(definitions={"F": FunctionDef("F", str(tmp_path), "app.handler", timeout=5)})
    send_metrics(destination, tmp_path / "data")
    try:
        functions.invoke("F", {})
        functions.invoke("F", {})
    finally:
        keep_metrics_per_thread().write = None  # the process's default again: stdout

    printed = [line for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    written = tmp_path / "data" / METRICS_FILE
    filed = written.read_text(encoding="utf-8").splitlines() if written.exists() else []
    assert (len(printed), len(filed)) == {"file": (0, 2), "off": (0, 0), "console": (2, 0)}[destination]
    assert all(json.loads(line)["Work"] == [1.0] for line in printed + filed)


def test_given_the_workers_gone_then_the_public_health_check_says_unavailable_and_nothing_else(queues):
    sqs, urls = queues
    status, headers, body = health_answer(HealthyFunctions(), LocalParts(urls, sqs, workers_pid=dead_pid()), "/health")

    assert (status, headers["Retry-After"], json.loads(body)) == (503, "5", {"status": "unavailable"})
