"""The OpenSearch search tier beside the serverless (in-Lambda) tier at scale (make bench-opensearch).

One process, one run, so the two tiers' figures are comparable: AWS's DynamoDB Local (in memory) holds the
table, a real single-node OpenSearch 2.19 with k-NN (local/opensearch_node.py, a temporary data dir) holds the
index; both are stopped at the end, on error and on Ctrl-C.

  ingest (stream path)     the sizes up to --table-max are saved to the table (the save service's `enrich`, the
                           store's `save_many`, 100 a call, vectors given, as in benchmarks/scale.py); the table's
                           stream reaches the node as it does in `make run SEARCH=opensearch`: local/streams.py's
                           StreamPoller invokes the real IndexerFunction handler
                           (functions/indexer/indexer_handler.py, through local.runtime.LocalFunctions, its
                           environment pointing get_indexer() at the node).
                           memories/s: from the first save until the index's count of the user's documents
                           reaches the number stored; nothing calls refresh, the node's 1 s refresh interval
                           applies. The indexer's own time per memory is summed around its invocations
  searchable after         one memory with a word of its own is saved (to a user of its own), then a keyword search
                           for that word is repeated until it finds it: the time from the save's return, after a
                           random pause, --visibility-tries times
  bulk-loaded sizes        the sizes above --table-max and the --users x --per-user users are written straight to
                           the index with OpenSearchIndex.bulk_upsert, 500 a call (the stream would take too long);
                           the serverless tier needs them in the table, and seeding runs at ~100 memories/s on 2
                           cores, so it is measured there only for --serverless-users of the users; for a size not
                           in the table its first search and index RSS are extrapolated (linearly, said so)
  search warm              the search service (hybrid, limit 10, min_relevance_score 0), --runs calls after --warmup
                           untimed ones, every call a question not asked before in the run, so the query-embedding
                           cache never answers; the serverless tier's container has the user's index built first;
                           the many-users rows ask a random user each call. The OpenSearch index holds everything
                           loaded so far, as one shared index does; its requests are timed too (wall, node's took)
  memory                   the node's heap (_nodes/stats/jvm) and resident set (/proc/<pid>/status) after each
                           size; the serverless tier's: what its first search of the user added to this process
Memories are LoCoMo turns (cycled), --distinct of them embedded once; memory i carries text i mod --distinct's
vector plus a little Gaussian noise (cosine ~0.95 to it), so the HNSW graph is not built over repeats of 256
points. Prints the tables, writes benchmarks/results/opensearch_scale.json and plots docs/opensearch_scale.png.
All local: add the network round trips to a domain and to DynamoDB from a Lambda.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, redirect_stdout
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import corpus, latency_row, offline_aws_credentials
from benchmarks.scale import Progress, rss_mb, seed, timed_runs

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PLOT = ROOT / "docs" / "opensearch_scale.png"
TENANT = "bench"
TABLE = "bench-opensearch"
ALIAS = "bench-opensearch"
BULK_BATCH = 500
NOISE_NORM = 0.3  # the noise vector's expected length: cosine ~0.95 to the text's own vector


@dataclass
class Timing:
    """How the warm rows are timed: `runs` calls after `warmup` untimed ones, each a new question."""

    runs: int
    warmup: int
    queries: Iterator[str]


REQUEST_KINDS = ("bm25", "knn", "msearch", "other")


def request_kind(method: str, body: Any) -> str:
    """Which of the OpenSearch tier's requests this is (adapters/opensearch/index.py builds them): the BM25 or
    the kNN candidates, the msearch completing each candidate's other signal, or other (the vectors of the
    results a ranking diversifies, conversation neighbours: filters only)."""
    if method == "msearch":
        return "msearch"
    query = body.get("query", {}) if isinstance(body, dict) else {}
    if "knn" in query:
        return "knn"
    return "bm25" if query.get("bool", {}).get("must") else "other"


class RequestTimes:
    """The OpenSearch client's search and msearch requests, timed: the wall time here, and the node's `took`."""

    def __init__(self, client: Any) -> None:
        self.samples: list[tuple[str, float, float]] = []
        for method in ("search", "msearch"):
            # The instance's attribute: every caller of this client goes through it.
            setattr(client, method, self._timed(method, getattr(client, method)))

    def _timed(self, method: str, call: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            response = call(*args, **kwargs)
            self.samples.append((request_kind(method, kwargs.get("body")), (time.perf_counter() - started) * 1000,
                                 float(response.get("took", 0))))
            return response

        return timed

    def summary(self, searches: int) -> dict[str, Any]:
        """Requests per search (of `searches`), the median request's wall ms, and by kind its median `took`."""
        import statistics

        kinds = sorted({kind for kind, _, _ in self.samples})
        return {"per_search": round(len(self.samples) / searches, 2),
                "wall_p50_ms": round(statistics.median(w for _, w, _ in self.samples), 1) if self.samples else 0.0,
                "took_p50_ms": {kind: round(statistics.median(t for k, _, t in self.samples if k == kind), 1)
                                for kind in kinds}}


@dataclass
class Tiers:
    """What both tiers search through: one warm container each, over the same table and embedder; and the
    services that write the memories (no embedder: the vectors are given, enrich only extracts keywords)."""

    seeder: Any
    serverless: Any
    opensearch: Any
    os_client: Any
    node: Any
    requests: RequestTimes


def search_request(query: str) -> Any:
    from agent_memory.api.search import SearchRequest

    return SearchRequest(query=query, limit=10, min_relevance_score=0.0)


def scope(user_id: str) -> Any:
    from agent_memory.domain.models import ScopeRef

    return ScopeRef(tenant_id=TENANT, user_id=user_id)


# ---- vectors and memories ------------------------------------------------------------------------------

def noisy_vectors(base: Any, first: int, count: int, seed_value: int = 7) -> Any:
    """Vectors of memories first..first+count-1: text i mod len(base)'s vector plus noise, unit length.
    The same first and count give the same vectors: a user both seeded in the table and bulk-loaded carries
    the same in both tiers."""
    import numpy as np

    rows = np.arange(first, first + count)
    noise = np.random.default_rng([seed_value, first]).normal(0.0, NOISE_NORM / np.sqrt(base.shape[1]),
                                                               (count, base.shape[1]))
    vectors = base[rows % len(base)] + noise.astype(np.float32)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def rotated(texts: Sequence[str], start: int) -> list[str]:
    """The pool from `start` on, then from its beginning: seed() takes its texts from the first."""
    start %= len(texts)
    return [*texts[start:], *texts[:start]]


def memories_for(save: Any, user: Any, contents: Sequence[str], vectors: Any, model_id: str) -> list[Any]:
    """Stored-form memories as the store would write them (enriched, keyed, with their vectors), for bulk loads."""
    from agent_memory.domain.keys import new_memory_key
    from agent_memory.domain.models import MemoryType, NewMemory, new_memory_version
    from agent_memory.domain.search.vectors import encode_vector

    enriched = save.enrich([NewMemory(memory_type=MemoryType.FACT, content=c, source="benchmark") for c in contents])
    return [new_memory_version(user, m, new_memory_key(), None).model_copy(
        update={"embedding": encode_vector(vectors[i]), "embedding_model": model_id}) for i, m in enumerate(enriched)]


def bulk_load(index: Any, save: Any, users: Sequence[tuple[Any, int]], texts: Sequence[str], base: Any,
              model_id: str, label: str) -> float:
    """Each (user, count) written straight to the index, BULK_BATCH a call; the seconds it took."""
    from benchmarks.inject import unique_texts

    progress, started = Progress(label, sum(n for _, n in users)), time.perf_counter()
    offset = 0
    for user, count in users:
        contents = unique_texts(texts, count, start=offset)
        for start in range(0, count, BULK_BATCH):
            part = contents[start:start + BULK_BATCH]
            index.bulk_upsert(memories_for(save, user, part, noisy_vectors(base, offset + start, len(part)),
                                           model_id))
            progress.step(len(part))
        offset += count
    return time.perf_counter() - started


# ---- the node ------------------------------------------------------------------------------------------

def user_count(client: Any, user: Any) -> int:
    body = {"query": {"bool": {"filter": [{"term": {"tenant_id": user.tenant_id}},
                                          {"term": {"user_id": user.user_id}}]}}}
    return int(client.count(index=ALIAS, body=body)["count"])


def wait_for_count(client: Any, user: Any, expected: int, timeout: float = 900.0) -> float:
    """Seconds until `expected` of the user's documents are searchable (polled; the count never refreshes
    more than the node's own schedule would, except that it wakes an idle index as any search does)."""
    started = time.perf_counter()
    while user_count(client, user) < expected:
        if time.perf_counter() - started > timeout:
            raise RuntimeError(f"{user.user_id}: fewer than {expected} documents searchable after {timeout:g} s")
        time.sleep(0.1)
    return time.perf_counter() - started


def settle_merges(client: Any, timeout: float = 180.0) -> float:
    """Wait (up to `timeout`) until the node merges no segments, so a bulk load's background merging is not
    timed with the searches; the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        stats = client.indices.stats(index=ALIAS, metric="merge")["_all"]["primaries"]["merges"]
        if not stats["current"]:
            break
        time.sleep(1.0)
    return round(time.perf_counter() - started, 1)


def process_memory(pid: int) -> dict[str, float]:
    """VmRSS and its anonymous part (the heap and other private memory; the rest is mapped files) in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon"):
            found[name] = round(int(value.split()[0]) / 1024, 1)
    return {"rss_mb": found.get("VmRSS", 0.0), "rss_anon_mb": found.get("RssAnon", 0.0)}


def node_memory(client: Any, pid: int) -> dict[str, Any]:
    jvm = next(iter(client.nodes.stats(metric="jvm")["nodes"].values()))["jvm"]["mem"]
    index = client.indices.stats(index=ALIAS, metric="docs,store")["_all"]["primaries"]
    return {"heap_used_mb": round(jvm["heap_used_in_bytes"] / 2**20, 1),
            "heap_max_mb": round(jvm["heap_max_in_bytes"] / 2**20, 1), **process_memory(pid),
            "index_docs": int(index["docs"]["count"]),
            "index_store_mb": round(index["store"]["size_in_bytes"] / 2**20, 1)}


@contextmanager
def indexer_environment(url: str, dynamodb_endpoint: str) -> Iterator[None]:
    """The IndexerFunction's environment (template.yaml's, resolved as `make run` does) pointed at the node and
    the table, for get_indexer() to build its index from; the process's environment is restored after."""
    from agent_memory.bootstrap import get_indexer
    from agent_memory.settings import get_settings
    from local.runtime import function_environment
    from local.template import functions

    env = function_environment(functions()["IndexerFunction"], {"OpenSearchEndpoint": url, "OpenSearchIndex": ALIAS})
    env.update({"MEMORY_TABLE_NAME": TABLE, "AWS_ENDPOINT_URL_DYNAMODB": dynamodb_endpoint,
                "POWERTOOLS_LOG_LEVEL": "WARNING"})
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    get_settings.cache_clear()
    get_indexer.cache_clear()
    try:
        # Powertools prints each invocation's metrics (EMF) on stdout, as Lambda logs them: not amid the
        # tables (the run reports on stderr meanwhile).
        with open(os.devnull, "w") as sink, redirect_stdout(sink):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        get_settings.cache_clear()


class TimedFunctions:
    """LocalFunctions for the stream poller, counting the time the indexer spent and the records it got."""

    def __init__(self, functions: Any) -> None:
        self.functions, self.seconds, self.records = functions, 0.0, 0
        self._lock = threading.Lock()

    def invoke(self, logical_id: str, event: dict[str, Any]) -> Any:
        started = time.perf_counter()
        try:
            return self.functions.invoke(logical_id, event)
        finally:
            with self._lock:
                self.seconds += time.perf_counter() - started
                self.records += len(event["Records"])

    def reset(self) -> None:
        with self._lock:
            self.seconds, self.records = 0.0, 0


def stream_poller(dynamodb: Any, functions: TimedFunctions, checkpoint: Path) -> Any:
    """The IndexerFunction's stream event source (template.yaml's batch size and start position)."""
    import boto3

    from local.streams import StreamPoller
    from local.template import stream_event_sources

    streams = boto3.client("dynamodbstreams", endpoint_url=dynamodb.endpoint, region_name="us-east-1",
                           aws_access_key_id="local", aws_secret_access_key="local")
    source = next(s for s in stream_event_sources() if s.function == "IndexerFunction")
    return StreamPoller(source, TABLE, functions, dynamodb.client(), streams, checkpoint, threading.Event())


def stop_poller(poller: Any) -> None:
    poller.stopping.set()
    if poller.thread is not None:
        poller.thread.join(timeout=30)


# ---- measurements --------------------------------------------------------------------------------------

def ingest(tiers: Tiers, indexer: TimedFunctions, size: int, texts: Sequence[str], base: Any,
           model_id: str) -> dict[str, Any]:
    """`size` memories saved to the table for a new user, until all are searchable on the node."""
    user, stored = scope(f"one-{size}"), distinct_contents(texts, size)
    indexer.reset()
    started = time.perf_counter()
    saved_s = seed(tiers.seeder, user, size, texts, noisy_vectors(base, 0, size), model_id)
    lag_s = wait_for_count(tiers.os_client, user, stored)
    total_s = time.perf_counter() - started
    return {"memories": size, "stored": stored, "saved_s": round(saved_s, 1), "searchable_s": round(total_s, 1),
            "memories_per_s": round(stored / total_s, 1), "lag_after_last_save_s": round(lag_s, 2),
            "indexer_busy_s": round(indexer.seconds, 1), "indexer_records": indexer.records,
            "indexer_ms_per_memory": round(indexer.seconds * 1000 / stored, 2)}


def distinct_contents(texts: Sequence[str], size: int) -> int:
    """How many memories seed() stores of `size`: the store keeps one of texts that normalise alike."""
    from agent_memory.domain.models import content_hash
    from benchmarks.inject import unique_texts

    return len({content_hash(text) for text in unique_texts(texts, size)})


def searchable_after(tiers: Tiers, base: Any, model_id: str, tries: int) -> dict[str, Any]:
    """Save one memory with a word of its own, then keyword-search that word until it is found: ms from the
    save's return. A random pause before each try samples the stream poll's and the refresh's phases."""
    from agent_memory.api.search import SearchRequest, search_memories
    from agent_memory.domain.models import MemoryType, NewMemory
    from agent_memory.domain.search.vectors import encode_vector

    user, rng, samples = scope("visibility"), random.Random(11), []
    progress = Progress("saved -> searchable", tries)
    for i in range(tries):
        time.sleep(rng.uniform(0.0, 1.0))
        word = "".join(rng.choices(string.ascii_lowercase, k=12))
        memory = tiers.seeder.save.enrich([NewMemory(memory_type=MemoryType.FACT, source="benchmark",
                                                         content=f"The storage locker code is {word} now")])[0]
        vector = encode_vector(noisy_vectors(base, 10**6 + i, 1)[0])
        key = tiers.seeder.store.save_many(user, [memory.model_copy(update={
            "embedding": vector, "embedding_model": model_id})])[0].memory.memory_key
        saved = time.perf_counter()
        request = SearchRequest(query=word, search_mode="keyword", limit=10, min_relevance_score=0.0)
        while not any(r.memory_key == key for r in search_memories(tiers.opensearch.search, user, request).results):
            if time.perf_counter() - saved > 60:
                raise RuntimeError(f"a saved memory was not searchable after 60 s ({word})")
            time.sleep(0.02)
        samples.append((time.perf_counter() - saved) * 1000)
        progress.step()
    return latency_row(samples)


def first_search(services: Any, user: Any, query: str) -> tuple[float, float]:
    """The serverless container's first search of the user (reads the partition, builds its index): ms and
    the MB it added to the process."""
    from agent_memory.api.search import search_memories

    before, started = rss_mb(), time.perf_counter()
    search_memories(services.search, user, search_request(query))
    elapsed_ms = (time.perf_counter() - started) * 1000
    services.index.flush()  # its snapshot is saved in the background: not while the warm rows are timed
    return elapsed_ms, rss_mb() - before


def warm_rows(services: Any, users: Sequence[Any], timing: Timing, label: str, rng: random.Random,
              requests: RequestTimes | None = None) -> dict[str, float]:
    """Warm searches, a random one of `users` each call, after `timing.warmup` untimed ones (a node's JIT
    and caches warm up over its first requests, as a long-running domain's are); `requests` records only
    the timed calls' requests."""
    from agent_memory.api.search import search_memories

    def call(i: int) -> object:
        return search_memories(services.search, rng.choice(users), search_request(next(timing.queries)))

    for i in range(timing.warmup):
        call(i)
    if requests is not None:
        requests.samples.clear()
    return timed_runs(label, timing.runs, call)


def opensearch_rows(tiers: Tiers, users: Sequence[Any], timing: Timing, label: str, rng: random.Random
                    ) -> dict[str, Any]:
    """The OpenSearch tier's warm searches, what its requests took, and the node's memory after."""
    row = warm_rows(tiers.opensearch, users, timing, label, rng, tiers.requests)
    return {"search_warm": row, "requests": tiers.requests.summary(timing.runs),
            "node": node_memory(tiers.os_client, tiers.node.pid)}


def one_user(tiers: Tiers, size: int, *, in_table: bool, timing: Timing) -> dict[str, Any]:
    """Both tiers' warm search of the user with `size` memories (the serverless tier's only when the table
    holds them), the node's memory and the serverless container's."""
    user, rng = scope(f"one-{size}"), random.Random(size)
    result: dict[str, Any] = {"memories": size, "in_table": in_table}
    if in_table:
        first_ms, added_mb = first_search(tiers.serverless, user, next(timing.queries))
        result["serverless"] = {"search_warm": warm_rows(tiers.serverless, [user], timing, f"{size}: serverless warm",
                                                         rng),
                                "first_search_ms": round(first_ms, 1), "index_rss_mb": round(added_mb, 1)}
    result["opensearch"] = opensearch_rows(tiers, [user], timing, f"{size}: opensearch warm", rng)
    return result


def many_users(tiers: Tiers, *, users: int, per_user: int, serverless_users: int, timing: Timing,
               texts: Sequence[str], base: Any, model_id: str) -> dict[str, Any]:
    """`users` x `per_user` bulk-loaded into the index, a random user each search; on the serverless tier the
    first `serverless_users` of them, seeded in the table: each one's first search (the container holds none
    of them yet), then warm searches of a random one (it holds them all)."""
    from agent_memory.adapters.opensearch.index import OpenSearchIndex

    everyone = [scope(f"many-{n:04d}") for n in range(users)]
    result: dict[str, Any] = {"users": users, "per_user": per_user, "serverless_users": serverless_users}
    index = OpenSearchIndex(client=tiers.os_client, alias=ALIAS)
    result["bulk_load_s"] = round(bulk_load(index, tiers.seeder.save, [(u, per_user) for u in everyone], texts,
                                            base, model_id, f"{users} users x {per_user}: bulk load"), 1)
    wait_for_count(tiers.os_client, everyone[-1], per_user)
    result["merges_waited_s"] = settle_merges(tiers.os_client)
    rng = random.Random(users)
    result["opensearch"] = opensearch_rows(tiers, everyone, timing, f"{users} users: opensearch warm", rng)
    if serverless_users:
        held = everyone[:serverless_users]
        started = time.perf_counter()
        for n, user in enumerate(held):  # the texts and vectors the user has in the index
            start = n * per_user
            seed(tiers.seeder, user, per_user, rotated(texts, start), noisy_vectors(base, start, per_user),
                 model_id)
        result["serverless_seed_s"] = round(time.perf_counter() - started, 1)
        rss_before, firsts = rss_mb(), []
        for user in rng.sample(held, len(held)):
            firsts.append(first_search(tiers.serverless, user, next(timing.queries))[0])
        result["serverless"] = {"first_search": latency_row(firsts),
                                "index_rss_mb": round(rss_mb() - rss_before, 1),
                                "search_warm": warm_rows(tiers.serverless, held, timing,
                                                         f"{serverless_users} users: serverless warm", rng)}
    return result


def save_rate(ingested: list[dict[str, Any]]) -> float | None:
    """Memories/s of the largest seed into the table (the saves alone)."""
    largest = max(ingested, key=lambda item: item["memories"], default=None)
    return largest["memories"] / largest["saved_s"] if largest and largest["saved_s"] else None


def extrapolated(measured: dict[str, Any], size: int, save_rate: float | None) -> dict[str, Any]:
    """The serverless tier at a size not in the table, linearly from the largest size measured (said so)."""
    factor = size / measured["memories"]
    serverless = measured["serverless"]
    return {"measured": False, "from_memories": measured["memories"],
            "why": f"not in the table: seeding {size:,} memories into DynamoDB Local"
                   + (f" at the {save_rate:.0f} memories/s measured here would take {size / save_rate / 60:.0f} min"
                      if save_rate else " takes too long on this machine"),
            "first_search_ms_extrapolated": round(serverless["first_search_ms"] * factor),
            "index_rss_mb_extrapolated": round(serverless["index_rss_mb"] * factor)}


# ---- output --------------------------------------------------------------------------------------------

def cell(row: dict[str, float] | None) -> str:
    return "-" if row is None else f"{row['p50_ms']:,.0f} / {row['p95_ms']:,.0f}"


def serverless_cell(column: dict[str, Any], what: str) -> str:
    """A serverless figure of a column: measured, extrapolated (marked), or none."""
    if "serverless" in column:
        value = column["serverless"].get(what)
        if value is None:
            return "-"
        if isinstance(value, dict):
            return cell(value)
        return f"{value:,.0f}" + (f" ({column['serverless_users']} users)" if "users" in column else "")
    guess = column.get("serverless_extrapolated")
    if guess is None or what == "search_warm":
        return "not run" if guess else "-"
    return f"~{guess[f'{what}_extrapolated']:,} (est.)"


def format_tables(results: dict[str, Any]) -> str:
    """Scenario rows by size columns (the many-users column last), then the stream path's figures."""
    columns = list(results["sizes"].values())
    labels = [f"{c['memories']:,}" for c in columns]
    many = results.get("many_users")
    if many:
        columns.append(many)
        labels.append(f"{many['users']:,} users × {many['per_user']}")
    lines = ["| p50 / p95 ms (columns: one user's memories) | " + " | ".join(labels) + " |",
             "|---|" + "---:|" * len(labels)]

    def row(name: str, value: Any) -> None:
        lines.append(f"| {name} | " + " | ".join(value(c) for c in columns) + " |")

    def node(c: dict[str, Any]) -> dict[str, Any]:
        return dict(c["opensearch"]["node"])

    row("search warm, serverless tier", lambda c: serverless_cell(c, "search_warm"))
    row("search warm, OpenSearch tier", lambda c: cell(c["opensearch"]["search_warm"]))
    row("OpenSearch: requests per search × p50 ms", lambda c: "{per_search:g} × {wall_p50_ms:.0f}".format(
        **c["opensearch"]["requests"]))
    row("OpenSearch: node's took p50, ms: BM25 / kNN / msearch / other", lambda c: " / ".join(
        f"{c['opensearch']['requests']['took_p50_ms'].get(kind, 0):.0f}" for kind in REQUEST_KINDS))
    row("serverless: a user's first search (reads, indexes), ms",
        lambda c: serverless_cell(c, "first_search" if "users" in c else "first_search_ms"))
    row("serverless: RSS its index adds, MB", lambda c: serverless_cell(c, "index_rss_mb"))
    row("OpenSearch: heap used / max, MB", lambda c: f"{node(c)['heap_used_mb']:,.0f} / {node(c)['heap_max_mb']:,.0f}")
    row("OpenSearch: node RSS (anonymous), MB", lambda c: f"{node(c)['rss_mb']:,.0f} ({node(c)['rss_anon_mb']:,.0f})")
    row("OpenSearch: documents in the index / store MB",
        lambda c: f"{node(c)['index_docs']:,} / {node(c)['index_store_mb']:,.0f}")
    row("loaded into the index", lambda c: "stream" if c.get("in_table") else "bulk")
    lines += ["", "| stream path (table → stream → IndexerFunction → node) | memories | saved in s | searchable in s | "
              "memories/s | lag after the last save, s | indexer ms / memory |", "|---|---:|---:|---:|---:|---:|---:|"]
    for item in results["ingest"]:
        lines.append(f"| one user | {item['memories']:,} | {item['saved_s']:.1f} | {item['searchable_s']:.1f} | "
                     f"{item['memories_per_s']:.0f} | {item['lag_after_last_save_s']:.2f} | "
                     f"{item['indexer_ms_per_memory']:.1f} |")
    visible = results.get("searchable_after")
    if visible:
        lines += ["", f"saved → found by a keyword search: p50 {visible['p50_ms']:,.0f} ms, "
                      f"p95 {visible['p95_ms']:,.0f} ms, max {visible['max_ms']:,.0f} ms ({visible['runs']} tries)"]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes, many = results["sizes"], results.get("many_users")
    xs = [int(s) for s in sizes]
    figure, (latency, memory) = plt.subplots(1, 2, figsize=(13, 6.4), gridspec_kw={"width_ratios": [1.5, 1]})
    tiers = {"serverless": "tab:blue", "opensearch": "tab:orange"}
    names = {"serverless": "serverless tier", "opensearch": "OpenSearch tier"}
    for tier, color in tiers.items():
        points = [(int(s), r[tier]["search_warm"]) for s, r in sizes.items() if tier in r]
        for stat, style in (("p95_ms", "-"), ("p50_ms", "--")):
            latency.plot([x for x, _ in points], [row[stat] for _, row in points], style, marker="o", color=color,
                         label=f"{names[tier]}, {stat[:3]}")
        if many and tier in many:
            row = many[tier]["search_warm"]
            x = many["users"] * many["per_user"]
            latency.scatter([x, x], [row["p95_ms"], row["p50_ms"]], marker="D", s=60, color=color,
                            edgecolors="black", zorder=5,
                            label=f"{names[tier]}: {many['users']:,} users × {many['per_user']}, random user "
                                  f"({many['serverless_users'] if tier == 'serverless' else many['users']:,} loaded)")
    latency.set(xscale="log", xlabel="memories (one user's; ◆: all users')", ylabel="warm search, ms",
                title="Warm search (hybrid, limit 10): p95 solid, p50 dashed")
    _size_axis(latency, xs, legend_columns=2)

    nodes = [(int(s), r["opensearch"]["node"]) for s, r in sizes.items()]
    memory.plot([x for x, _ in nodes], [n["heap_used_mb"] for _, n in nodes], marker="o", color="tab:orange",
                label="OpenSearch node: heap used")
    memory.plot([x for x, _ in nodes], [n["rss_mb"] for _, n in nodes], "--", marker="s", color="tab:orange",
                label="OpenSearch node: RSS")
    measured = [(int(s), r["serverless"]["index_rss_mb"]) for s, r in sizes.items() if "serverless" in r]
    memory.plot([x for x, _ in measured], [y for _, y in measured], marker="o", color="tab:blue",
                label="serverless: RSS its index adds")
    guesses = [(int(s), r["serverless_extrapolated"]["index_rss_mb_extrapolated"]) for s, r in sizes.items()
               if "serverless_extrapolated" in r]
    if measured and guesses:
        line = [measured[-1], *guesses]
        memory.plot([x for x, _ in line], [y for _, y in line], ":", color="tab:blue")
        memory.scatter([x for x, _ in guesses], [y for _, y in guesses], marker="o", facecolors="white",
                       edgecolors="tab:blue", zorder=5, label="serverless, extrapolated (not in the table)")
    memory.set(xscale="log", xlabel="one user's memories (the index holds all loaded so far)", ylabel="MB",
               title="Memory")
    _size_axis(memory, xs, legend_columns=1)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _size_axis(axis: Any, sizes: list[int], *, legend_columns: int) -> None:
    """Both panels alike: the sizes as ticks, from zero up, a light grid, the legend under the panel."""
    axis.set_xticks(sizes, [f"{x:,}" for x in sizes])
    axis.minorticks_off()
    axis.set_ylim(bottom=0)
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(0, -0.14), ncol=legend_columns)


# ---- the run -------------------------------------------------------------------------------------------

def stream_phase(tiers: Tiers, dynamodb: Any, sizes: list[int], tries: int, texts: Sequence[str], base: Any,
                 model_id: str) -> dict[str, Any]:
    """The sizes saved through the table, its stream and the IndexerFunction, then the saved-to-searchable
    times; the poller is stopped after, so later seeds of the table stay off the index."""
    from local.runtime import LocalFunctions

    found: dict[str, Any] = {"ingest": []}
    with tempfile.TemporaryDirectory(prefix="bench-opensearch-stream-") as checkpoints, ExitStack() as stack:
        stack.enter_context(indexer_environment(tiers.node.url, dynamodb.endpoint))
        indexer = TimedFunctions(LocalFunctions())
        poller = stream_poller(dynamodb, indexer, Path(checkpoints) / "checkpoints.json")
        poller.start()
        stack.callback(stop_poller, poller)
        for size in sizes:
            found["ingest"].append(ingest(tiers, indexer, size, texts, base, model_id))
            print(f"{size}: {found['ingest'][-1]['memories_per_s']} memories/s through the stream", file=sys.stderr)
        if tries:
            found["searchable_after"] = searchable_after(tiers, base, model_id, tries)
    return found


def bulk_one_user(tiers: Tiers, size: int, texts: Sequence[str], base: Any, model_id: str) -> dict[str, Any]:
    """A user of `size` memories written straight to the index, searchable and merged."""
    from agent_memory.adapters.opensearch.index import OpenSearchIndex

    user = scope(f"one-{size}")
    load_s = bulk_load(OpenSearchIndex(client=tiers.os_client, alias=ALIAS), tiers.seeder.save, [(user, size)],
                       texts, base, model_id, f"{size}: bulk load")
    wait_for_count(tiers.os_client, user, size)
    return {"bulk_load_s": round(load_s, 1), "merges_waited_s": settle_merges(tiers.os_client)}


def build_tiers(stack: ExitStack, dynamodb: Any, settings: Any, embedder: Any, heap_mb: int) -> Tiers:
    """A node on a temporary data dir, its index created, and a warm container of each tier."""
    from opensearchpy import OpenSearch

    from agent_memory.adapters.opensearch.admin import ensure_index
    from agent_memory.adapters.opensearch.index import OpenSearchIndex
    from agent_memory.bootstrap.services import build_services
    from local.opensearch_node import OpenSearchNode

    started = time.perf_counter()
    node = stack.enter_context(OpenSearchNode(Path(stack.enter_context(tempfile.TemporaryDirectory(
        prefix="bench-opensearch-node-"))), heap_mb=heap_mb))
    print(f"OpenSearch node ready in {time.perf_counter() - started:.0f} s ({node.url})", file=sys.stderr)
    client = OpenSearch(hosts=[node.url], timeout=300)
    ensure_index(client, ALIAS, embedder.dimension)
    opensearch = build_services(settings.model_copy(update={"opensearch_endpoint": node.url,
                                                             "opensearch_index": ALIAS}),
                                dynamodb_client=dynamodb, embedder=embedder,
                                index=OpenSearchIndex(client=client, alias=ALIAS))
    return Tiers(seeder=build_services(settings, dynamodb_client=dynamodb, embedder=None),
                 serverless=build_services(settings, dynamodb_client=dynamodb, embedder=embedder),
                 opensearch=opensearch, os_client=client, node=node, requests=RequestTimes(client))


def run(args: argparse.Namespace, sizes: list[int]) -> dict[str, Any]:
    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.settings import Settings
    from benchmarks.inject import unique_texts
    from local.dynamodb_local import DynamoDBLocal
    from local.template import create_tables

    # Built before the indexer's environment is set: the serverless tier, whatever the shell exports.
    settings = Settings(memory_table_name=TABLE, opensearch_endpoint="")
    texts, questions, _ = corpus()
    calls = (len(sizes) + 1) * 2 * (args.runs + args.warmup + 1) + args.serverless_users + 20
    timing = Timing(runs=args.runs, warmup=args.warmup, queries=iter(unique_texts(questions, calls)))
    embedder = build_embedder(settings)
    if embedder is None:
        sys.exit("the benchmark needs the embedder (EMBEDDING_PROVIDER=none is set)")
    started = time.perf_counter()
    base = embedder.embed_documents(list(texts[:args.distinct]))
    print(f"embedded {args.distinct} texts in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    results: dict[str, Any] = {"sizes": {}, "ingest": []}
    streamed = [s for s in sizes if s <= args.table_max]
    with ExitStack() as stack:
        dynamodb = stack.enter_context(DynamoDBLocal())
        create_tables(dynamodb.client(), {"MemoryTable": TABLE})
        tiers = build_tiers(stack, dynamodb.client(), settings, embedder, args.heap_mb)
        if streamed:
            results.update(stream_phase(tiers, dynamodb, streamed, args.visibility_tries, texts, base,
                                        embedder.model_id))
        for size in sizes:
            loaded = {} if size in streamed else bulk_one_user(tiers, size, texts, base, embedder.model_id)
            result = {**one_user(tiers, size, in_table=size in streamed, timing=timing), **loaded}
            measured = [r for r in results["sizes"].values() if "serverless" in r]
            if loaded and measured:
                result["serverless_extrapolated"] = extrapolated(measured[-1], size, save_rate(results["ingest"]))
            results["sizes"][str(size)] = result
        if args.users:
            results["many_users"] = many_users(tiers, users=args.users, per_user=args.per_user,
                                               serverless_users=min(args.serverless_users, args.users),
                                               timing=timing, texts=texts, base=base,
                                               model_id=embedder.model_id)
    results["embedder"] = embedder.model_id
    return results


def main(argv: Sequence[str] | None = None) -> None:
    from benchmarks.retrieval import machine_info

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="memories of one user, comma-separated")
    parser.add_argument("--table-max", type=int, default=10000,
                        help="sizes up to this go through the table and its stream (and the serverless tier)")
    parser.add_argument("--users", type=int, default=1000, help="users of the many-users scenario (0: none)")
    parser.add_argument("--per-user", type=int, default=100, help="memories of each of those users")
    parser.add_argument("--serverless-users", type=int, default=100,
                        help="of those users, how many are seeded in the table for the serverless tier")
    parser.add_argument("--runs", type=int, default=100, help="timed searches per row")
    parser.add_argument("--warmup", type=int, default=20, help="untimed searches before each row's")
    parser.add_argument("--visibility-tries", type=int, default=20, help="saves timed until searchable")
    parser.add_argument("--distinct", type=int, default=256, help="texts embedded; memories reuse their vectors")
    parser.add_argument("--heap-mb", type=int, default=1024, help="the OpenSearch node's JVM heap")
    parser.add_argument("--output", type=Path, default=RESULTS / "opensearch_scale.json")
    parser.add_argument("--plot", type=Path, default=PLOT)
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    if not sizes or min([*sizes, args.runs, args.distinct, args.per_user]) < 1 or min(
            args.users, args.serverless_users, args.visibility_tries, args.warmup) < 0:
        parser.error("sizes, --runs, --distinct and --per-user must be >= 1; --users, --serverless-users, "
                     "--visibility-tries and --warmup >= 0")
    from local import dynamodb_local, opensearch_node

    if not dynamodb_local.available() or not opensearch_node.available():
        sys.exit("needs DynamoDB Local (`make dynamodb-local`) and the OpenSearch node (`make opensearch-node`)")
    offline_aws_credentials()
    started = time.perf_counter()
    results = run(args, sizes)
    machine = machine_info()
    results.update(measured_at=datetime.now(UTC).isoformat(), machine=machine,
                   minutes=round((time.perf_counter() - started) / 60, 1),
                   config={k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()})
    print(f"\n{machine['cpus']} CPUs, load average {machine['load_average']}, {results['minutes']} min\n")
    print(format_tables(results))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    load = machine["load_average"][0] if machine["load_average"] else "?"
    plot(results, args.plot, f"agent-memory: OpenSearch tier (one local node) beside the serverless tier, "
                             f"{machine['cpus']} CPUs, load {load} ({datetime.now(UTC):%Y-%m-%d})")
    print(f"\nwrote {args.output} and {args.plot}")


if __name__ == "__main__":
    main()
