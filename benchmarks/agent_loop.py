"""The agent loop over HTTP on the local stack (make bench-loop): save, then inject and search for the same user.

An agent saves what the user said, then on the next message injects context or searches for that user. This
times each call of that loop against the same calls with nothing written since (the warm path), in one run, so
the machine's load cancels out in the ratio. It starts a stack of its own (`python -m local.stack`, a temporary
data dir, nothing else running) unless --url names one.

Per user size (--sizes, default 1,000 and 10,000 memories, imported in batches of 100 under a fresh tenant):
  turn        an inject and a search with nothing written (warm), a direct save, then the first inject or search
              after it (the two take turns going first); every fifth turn, a turn logged with `extract: true`,
              extracted by the queue's worker off the request path, then the first inject after it landed
  new process 50 saves, the stack restarted, the first search; then restarted again with nothing written
              since, the first search (from a snapshot of the current version) — three times each
Each call's DynamoDB read units come from the stack's `X-Local-Read-Units` header (ReturnConsumedCapacity).

Writes benchmarks/results/agent_loop.json and a PNG plot, prints a table. Targets: right after a save, inject and
search p50/p95 within 1.3x of warm; a search's read units right after one save under 1% of a full partition read;
the first search in a new process after 50 writes within 1.5x of one from a current snapshot.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from benchmarks.common import percentile
from benchmarks.local_stack import distinct_texts, log, started_stack

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
READ_UNITS = "x-local-read-units"
BATCH = 100
RESTARTS = 3
WRITES_BEFORE_RESTART = 50


@dataclass
class Call:
    ms: float
    read_units: float
    answer: dict[str, Any]


class Http:
    def __init__(self, url: str, tenant: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.tenant = parts.hostname or "127.0.0.1", parts.port or 80, tenant
        self._conn: http.client.HTTPConnection | None = None

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Call:
        payload = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
        headers = {"content-type": "application/json", "x-tenant-id": self.tenant}
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
            started = time.perf_counter()
            try:
                self._conn.request(method, path, body=payload, headers=headers)
                response = self._conn.getresponse()
                raw = response.read()
                break
            except (OSError, http.client.HTTPException):
                self._conn.close()
                self._conn = None
                if attempt == 2:
                    raise
        elapsed = (time.perf_counter() - started) * 1000
        if not 200 <= response.status < 300:
            raise RuntimeError(f"{method} {path}: HTTP {response.status}: {raw[:500]!r}")
        units = float(response.headers.get(READ_UNITS) or "nan")
        return Call(elapsed, units, json.loads(raw) if raw else {})

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


@dataclass
class Samples:
    calls: dict[str, list[Call]] = field(default_factory=dict)

    def add(self, name: str, call: Call) -> None:
        self.calls.setdefault(name, []).append(call)

    def row(self, name: str) -> dict[str, float]:
        ms = [c.ms for c in self.calls.get(name, [])]
        units = [c.read_units for c in self.calls.get(name, [])]
        if not ms:
            return {}
        return {"runs": len(ms), "p50_ms": round(statistics.median(ms), 1), "p95_ms": round(percentile(ms, 0.95), 1),
                "read_units_p50": round(statistics.median(units), 1)}


def texts(n: int) -> list[str]:
    try:
        from benchmarks.common import corpus

        pool = corpus()[0]
    except Exception:  # the team folder's benchmark data absent: synthetic text
        pool = [f"note {i}: the user mentioned topic {i % 97} and place {i % 31}" for i in range(n)]
    return distinct_texts(pool, n)


def seed(client: Http, user: str, memories: list[str]) -> None:
    for start in range(0, len(memories), BATCH):
        client.call("POST", f"/v1/users/{user}/memories/batch", {"memories": [
            {"memory_type": "FACT", "content": text} for text in memories[start:start + BATCH]]})
        if start % 1000 == 0:
            log(f"  {user}: {start + BATCH} memories imported")


def inject(client: Http, user: str, message: str) -> Call:
    return client.call("POST", "/v1/context/inject", {"user_id": user, "conversation_id": "loop",
                                                      "current_user_message": message, "max_context_tokens": 8000})


def search(client: Http, user: str, query: str) -> Call:
    return client.call("POST", f"/v1/users/{user}/memories/search", {"query": query})


def queue_drained(client: Http) -> bool:
    queues = client.call("GET", "/v1/health").answer.get("queues", {})
    return all(not q.get("depth") and not q.get("in_flight") for q in queues.values())


def wait_until(condition: Any, timeout: float = 120.0, what: str = "the extraction queue did not drain") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


def loop(client: Http, user: str, turns: int, questions: list[str], samples: Samples) -> None:
    for turn in range(turns):
        question = questions[turn % len(questions)]
        samples.add("inject, warm", inject(client, user, question))
        samples.add("search, warm", search(client, user, question))
        saved = client.call("POST", f"/v1/users/{user}/memories", {
            "memory_type": "PREFERENCE", "content": f"Turn {turn}: prefers answers about {question[:40]}"})
        samples.add("save, direct", saved)
        first, second = ("inject", "search") if turn % 2 == 0 else ("search", "inject")
        for kind in (first, second):
            call = inject(client, user, question) if kind == "inject" else search(client, user, question)
            samples.add(f"{kind}, right after a save" if kind == first else f"{kind}, second after a save", call)
        if turn % 5 == 4:
            client.call("POST", f"/v1/users/{user}/conversations/loop/messages", {"extract": True, "messages": [
                {"role": "user", "content": f"我今年{30 + turn}岁，住在杭州"}]})
            wait_until(lambda: queue_drained(client))
            samples.add("inject, right after an extraction", inject(client, user, "我多大了？"))


def fresh_loop(client: Http, node: str, user: str, turns: int, samples: Samples,
               outcomes: dict[str, list[float]]) -> None:
    """The OpenSearch tier: each turn saves a new memory, then searches for it and injects a message about it at
    once (found? carried?), then waits until the index itself can find it (the stream's and the refresh's lag),
    then the same calls again (warm: the index has it)."""
    for turn in range(turns):
        text = f"Turn {turn}: keeps a notebook labelled {uuid.uuid4().hex[:6]} for the garden project"
        saved = client.call("POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": text})
        saved_at = time.monotonic()
        found = search(client, user, text)
        samples.add("search, right after a save", found)
        outcomes["search right after a save found it"].append(
            float(any(r.get("content_preview") == text for r in found.answer.get("results", []))))
        injected = inject(client, user, text)
        samples.add("inject, right after a save", injected)
        outcomes["inject right after a save carried it"].append(float(text in json.dumps(injected.answer,
                                                                                         ensure_ascii=False)))
        key = saved.answer["memory"]["memory_key"]
        wait_until(lambda key=key: indexed_count(node, client.tenant, user, key) > 0, timeout=60,
                   what="the index did not find a saved memory within 60 s")
        outcomes["seconds until the index itself finds it"].append(round(time.monotonic() - saved_at, 3))
        samples.add("search, warm", search(client, user, f"{text}?"))
        samples.add("inject, warm", inject(client, user, f"{text}?"))


def current_count(client: Http, user: str) -> int:
    """The user's current memories, from the listing's pages."""
    count, cursor = 0, None
    while True:
        after = f"&cursor={quote(cursor)}" if cursor else ""
        page = client.call("GET", f"/v1/users/{user}/memories?limit=100{after}").answer
        count += len(page.get("items", []))
        cursor = page.get("next_cursor")
        if not cursor:
            return count


def indexed_count(node: str, tenant: str, user: str, memory_key: str | None = None) -> int:
    """How many of the user's memories (or this one) a search of the OpenSearch index itself finds (refreshed)."""
    parts = urlsplit(node)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 9200, timeout=10)
    filters = [{"term": {"tenant_id": tenant}}, {"term": {"user_id": user}}]
    if memory_key:
        filters.append({"term": {"memory_key": memory_key}})
    try:
        connection.request("POST", "/agent-memory/_count", json.dumps({"query": {"bool": {"filter": filters}}}),
                           {"content-type": "application/json"})
        return int(json.loads(connection.getresponse().read()).get("count", 0))
    finally:
        connection.close()


def run_opensearch(args: argparse.Namespace) -> int:
    """`--search opensearch`: one user per size on a stack of its own with SEARCH=opensearch."""
    import os

    os.environ["SEARCH"] = "opensearch"
    report: dict[str, Any] = {"tier": "opensearch", "sizes": {},
                              "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with tempfile.TemporaryDirectory(prefix="bench-loop-os-") as scratch:
        data_dir = Path(scratch)
        for size in [int(s) for s in args.sizes.split(",")]:
            tenant, user = f"bench-{uuid.uuid4().hex[:8]}", f"loop-os-{size}"
            samples, outcomes = Samples(), {name: [] for name in (
                "search right after a save found it", "inject right after a save carried it",
                "seconds until the index itself finds it")}
            with stack(args.url, data_dir) as url:
                node = json.loads((data_dir / "stack.json").read_text())["opensearch"]
                client = Http(url, tenant)
                log(f"{size} memories on the OpenSearch tier: importing")
                memories = texts(size)
                seed(client, user, memories)
                stored = current_count(client, user)  # near-duplicates in the corpus were merged
                wait_until(lambda n=node, t=tenant, u=user, k=stored: indexed_count(n, t, u) >= k,
                           timeout=900, what="the index did not catch up with the import")
                log(f"{size} memories: {args.turns} turns")
                fresh_loop(client, node, user, args.turns, samples, outcomes)
                client.close()
            rows = {name: samples.row(name) for name in samples.calls}
            lags = outcomes["seconds until the index itself finds it"]
            summary = {
                "search right after a save found it": f"{int(sum(outcomes['search right after a save found it']))}"
                                                      f"/{len(lags)}",
                "inject right after a save carried it": f"{int(sum(outcomes['inject right after a save carried it']))}"
                                                        f"/{len(lags)}",
                "index's own lag p50 / p95 s": f"{statistics.median(lags):.2f} / {percentile(lags, 0.95):.2f}",
            }
            report["sizes"][str(size)] = {"rows": rows, "outcomes": summary, "lags_s": lags}
            print_table(size, rows, {})
            for name, value in summary.items():
                print(f"- {name}: {value}")
    report["load_average"] = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "agent_loop_opensearch.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
    log(f"wrote {RESULTS / 'agent_loop_opensearch.json'}")
    return 0


@contextmanager
def stack(url: str | None, data_dir: Path) -> Iterator[str]:
    if url:
        yield url
        return
    with started_stack(data_dir) as started:
        yield started


def new_process(data_dir: Path, tenant: str, user: str, query: str, samples: Samples) -> None:
    """The first search in a freshly started stack: after 50 saves since the last snapshot, and with none."""
    for attempt in range(RESTARTS):
        with started_stack(data_dir) as url:
            client = Http(url, tenant)
            for i in range(WRITES_BEFORE_RESTART):
                client.call("POST", f"/v1/users/{user}/memories", {
                    "memory_type": "FACT", "content": f"restart {attempt} write {i}: the user likes item {i}"})
            client.close()
        with started_stack(data_dir) as url:
            client = Http(url, tenant)
            samples.add("search, new process, 50 writes since the snapshot", search(client, user, query))
            time.sleep(2)  # the snapshot of the new version is saved off the request path
            client.close()
        with started_stack(data_dir) as url:
            client = Http(url, tenant)
            samples.add("search, new process, current snapshot", search(client, user, query))
            client.close()


def ratio(rows: dict[str, dict[str, float]], name: str, base: str, key: str) -> float | None:
    if not rows.get(name) or not rows.get(base) or not rows[base].get(key):
        return None
    return round(rows[name][key] / rows[base][key], 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running stack (default: start one on a temporary data dir)")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--no-restarts", action="store_true", help="skip the new-process measurements")
    parser.add_argument("--search", choices=["serverless", "opensearch"], default="serverless",
                        help="opensearch: the loop on the OpenSearch tier (found right after a save? the index's lag)")
    args = parser.parse_args(argv)
    if args.search == "opensearch":
        return run_opensearch(args)
    sizes = [int(s) for s in args.sizes.split(",")]
    questions = ["What does the user like?", "Where does she live?", "How old is he?", "What are their plans?",
                 "Who is in the family?", "我适合高才通吗？"]
    report: dict[str, Any] = {"sizes": {}, "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as scratch:
        data_dir = Path(scratch)
        for size in sizes:
            tenant, user = f"bench-{uuid.uuid4().hex[:8]}", f"loop-{size}"
            samples = Samples()
            with stack(args.url, data_dir) as url:
                client = Http(url, tenant)
                log(f"{size} memories: importing")
                seed(client, user, texts(size))
                full = client.call("GET", f"/v1/users/{user}/memories?limit=100")  # warm the read path
                for question in questions:  # untimed: the index built, models loaded
                    inject(client, user, question)
                    search(client, user, question)
                log(f"{size} memories: {args.turns} turns")
                loop(client, user, args.turns, questions, samples)
                client.close()
            del full
            if not args.no_restarts and not args.url:
                log(f"{size} memories: new processes")
                new_process(data_dir, tenant, user, questions[0], samples)
            rows = {name: samples.row(name) for name in samples.calls}
            report["sizes"][str(size)] = {"rows": rows, "ratios": {
                "inject after a save / warm, p50": ratio(rows, "inject, right after a save", "inject, warm", "p50_ms"),
                "inject after a save / warm, p95": ratio(rows, "inject, right after a save", "inject, warm", "p95_ms"),
                "search after a save / warm, p50": ratio(rows, "search, right after a save", "search, warm", "p50_ms"),
                "search after a save / warm, p95": ratio(rows, "search, right after a save", "search, warm", "p95_ms"),
                "new process after 50 writes / from a current snapshot, p50": ratio(
                    rows, "search, new process, 50 writes since the snapshot", "search, new process, current snapshot",
                    "p50_ms"),
            }}
            print_table(size, rows, report["sizes"][str(size)]["ratios"])
    report["load_average"] = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "agent_loop.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
    plot(report, RESULTS / "agent_loop.png")
    log(f"wrote {RESULTS / 'agent_loop.json'} and agent_loop.png")
    return 0


def print_table(size: int, rows: dict[str, dict[str, float]], ratios: dict[str, float | None]) -> None:
    print(f"\n{size:,} memories\n\n| call | runs | p50 ms | p95 ms | read units (p50) |\n|---|---:|---:|---:|---:|")
    for name, row in rows.items():
        if row:
            print(f"| {name} | {row['runs']} | {row['p50_ms']} | {row['p95_ms']} | {row['read_units_p50']} |")
    print()
    for name, value in ratios.items():
        print(f"- {name}: {value}×" if value is not None else f"- {name}: not measured")
    sys.stdout.flush()


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = ["inject, warm", "inject, right after a save", "search, warm", "search, right after a save"]
    sizes = list(report["sizes"])
    figure, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4), squeeze=False)
    for axis, size in zip(axes[0], sizes, strict=True):
        rows = report["sizes"][size]["rows"]
        p50 = [rows.get(n, {}).get("p50_ms", 0) for n in names]
        p95 = [rows.get(n, {}).get("p95_ms", 0) for n in names]
        positions = range(len(names))
        axis.bar([p - 0.2 for p in positions], p50, width=0.4, label="p50")
        axis.bar([p + 0.2 for p in positions], p95, width=0.4, label="p95")
        axis.set_xticks(list(positions), [n.replace(", ", "\n") for n in names], fontsize=8)
        axis.set_ylabel("ms")
        axis.set_title(f"{int(size):,} memories: warm vs right after a save")
        axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
