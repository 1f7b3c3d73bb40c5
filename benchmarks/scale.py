"""Scale: search, load_context and inject for one user with 100, 1,000 and 10,000 memories (make bench-scale).

Per size, in the service layer, against a table in AWS's DynamoDB Local (--backend moto for in-process moto):
  search warm                the container's index is built: embed the query, rank (hybrid, 10 results); every
                             timed call of every scenario asks a question not asked before in the run, so none is
                             answered from the query-embedding cache
  search cold (no snapshot)  fresh services per call (build_services; the embedder already loaded), snapshots
                             off: the whole partition is read and indexed, then the search runs
  search cold (snapshot)     the same with the snapshot of the current version saved: it is loaded instead
  load_context               warm, 20 memories
  inject warm / cold         the inject service (POST /v1/context/inject) with a realistic request and a new
                             message per call, so user_memory searches; cold = fresh services, with the snapshot
  RSS                        the process's resident set once the size's warm index is built, and what the
                             build added (one long-lived container serving the three users in turn)
  import, load / inject handler   a cold start's import of the handler module (functions/<name>/<name>_handler.py,
                             the module _HANDLER names): the median of --import-runs fresh processes (after one that
                             writes the bytecode, as the layer ships it) with the environment Lambda gives the
                             function: template.yaml's variables, LAMBDA_TASK_ROOT, tracing on (X-Ray daemon
                             address, no POWERTOOLS_TRACE_DISABLED); target on the median, not p95
Memories are LoCoMo turns (the dev conversations, cycled; a repeat gets a ` (#k)` suffix), saved through the
save service's `enrich` (keywords, conversation context) and the store's `save_many`, 100 a call, with their
embeddings given: --distinct texts are embedded once with the bundled model and memory i carries the vector of
text i mod --distinct. Embedding 10,000 texts would take ~7 minutes, and latency does not depend on which
vector a memory carries. Prints two tables, writes benchmarks/results/scale.json and plots docs/scale.png.
All local: add DynamoDB's network round trips (~5-10 ms per call) in a Lambda.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import add_backend_argument, corpus, dynamodb_client, latency_row, offline_aws_credentials

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PLOT = ROOT / "docs" / "scale.png"
TENANT = "bench"
# p95 targets (ms) by scenario and size.
TARGETS: dict[str, dict[int, float]] = {
    "search cold (snapshot)": {1000: 150.0, 10000: 500.0},
    "inject warm": {1000: 30.0},
    "inject cold (snapshot)": {1000: 200.0},
}
SCENARIOS = ("search warm", "search cold (no snapshot)", "search cold (snapshot)", "load_context", "inject warm",
             "inject cold (snapshot)")
# Import rows: the handler each imports, by the function's logical id; the target is on the median (ms).
IMPORTS = {"import, load handler": "LoadFunction", "import, inject handler": "InjectFunction"}
IMPORT_TARGET_MS = 300.0
# The module Lambda's runtime imports: the one _HANDLER names (`load_handler` of `load_handler.handler`).
IMPORT_PROBE = ("import importlib, os, time\nmodule = os.environ['_HANDLER'].rsplit('.', 1)[0]\n"
                "started = time.perf_counter()\nimportlib.import_module(module)\n"
                "print((time.perf_counter() - started) * 1000)")


def rss_mb() -> float:
    """The resident set now (Linux), else the peak so far."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Progress:
    """`label: done/total, elapsed, ETA` on stderr, at most once a second (and at the end); tqdm's bar instead
    when tqdm is installed."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self.started = self.shown = time.perf_counter()
        try:
            from tqdm import tqdm

            self._bar: Any = tqdm(total=total, desc=label, leave=False, file=sys.stderr)
        except ImportError:
            self._bar = None

    def step(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            if self.done >= self.total:
                self._bar.close()
            return
        now = time.perf_counter()
        if now - self.shown >= 1.0 or self.done >= self.total:
            self.shown = now
            elapsed = now - self.started
            eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
            print(f"\r{self.label}: {self.done}/{self.total}  {elapsed:5.0f} s  ETA {eta:4.0f} s", end="",
                  file=sys.stderr, flush=True)
            if self.done >= self.total:
                print(file=sys.stderr, flush=True)


def timed_runs(label: str, runs: int, call: Callable[[int], object]) -> dict[str, float]:
    progress, samples = Progress(label, runs), []
    for i in range(runs):
        started = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - started) * 1000)
        progress.step()
    return latency_row(samples)


def cold_runs(label: str, runs: int, container: Callable[[], Any], call: Callable[[Any, int], object]
              ) -> tuple[dict[str, float], int]:
    """`call` on a new container each time; the p95 row and how many of the containers loaded a snapshot.
    Each starts from a collected heap with nothing frozen, as a new Lambda container does: the garbage the
    previous simulated containers left would otherwise be collected (a full collection: ~0.1 s here) inside
    a timed call, or stay frozen (an index build freezes what the process holds) and pile up."""
    progress, samples, loads = Progress(label, runs), [], 0
    for i in range(runs):
        fresh = container()
        gc.unfreeze()
        gc.collect()
        started = time.perf_counter()
        call(fresh, i)
        samples.append((time.perf_counter() - started) * 1000)
        loads += fresh.index.stats.get("snapshot_loads", 0)
        shutdown(fresh)
        progress.step()
    return latency_row(samples), loads


def shutdown(services: Any) -> None:
    """A simulated container's threads: the inject executor's, and the index's once its saving is done."""
    services.inject._executor.shutdown(wait=False)
    services.inject.flush_cache_writes()
    flush = getattr(services.index, "flush", None)
    if flush is not None:
        flush()


def seed(services: Any, user: Any, size: int, texts: Sequence[str], vectors: Any, model_id: str | None) -> float:
    """`size` memories through enrich and save_many, each with a precomputed vector; the seconds it took."""
    from agent_memory.domain.models import MemoryType, NewMemory
    from agent_memory.domain.search.vectors import encode_vector
    from benchmarks.inject import unique_texts

    contents = unique_texts(texts, size)
    progress, started = Progress(f"saving {size} memories", size), time.perf_counter()
    for start in range(0, size, 100):
        batch = [NewMemory(memory_type=MemoryType.FACT, content=c, source="benchmark")
                 for c in contents[start:start + 100]]
        enriched = services.save.enrich(batch)  # services built without an embedder: keywords only
        if vectors is not None:
            enriched = [m.model_copy(update={"embedding": encode_vector(vectors[(start + j) % len(vectors)]),
                                             "embedding_model": model_id}) for j, m in enumerate(enriched)]
        services.store.save_many(user, enriched)
        progress.step(len(batch))
    return time.perf_counter() - started


def run_size(size: int, *, args: argparse.Namespace, client: Any, settings: Any, embedder: Any, warm: Any,
             texts: Sequence[str], queries: Iterator[str], vectors: Any) -> dict[str, Any]:
    from agent_memory.adapters.dynamodb.index_snapshots import CHUNK_BYTES, DynamoIndexSnapshotStore
    from agent_memory.api.inject import InjectionRequest, inject_context
    from agent_memory.api.search import SearchRequest, search_memories
    from agent_memory.bootstrap.services import build_services
    from agent_memory.domain.models import ScopeRef
    from benchmarks.inject import _quiet_metrics, caller_state, history, unique_texts

    user = ScopeRef(tenant_id=TENANT, user_id=f"scale-{size}")
    seed_s = seed(build_services(settings, dynamodb_client=client, embedder=None), user, size, texts, vectors,
                  getattr(embedder, "model_id", None))

    def fresh(snapshots: bool) -> Any:
        return build_services(settings.model_copy(update={"search_snapshots": snapshots}), dynamodb_client=client,
                              embedder=embedder)

    def search(services: Any, i: int) -> Any:
        return search_memories(services.search, user, SearchRequest(query=next(queries), limit=10))

    state, past = caller_state(int(time.time() * 1000)), history(unique_texts(texts, 20, start=len(texts) // 2), 10)

    def inject(services: Any) -> Any:
        _quiet_metrics()
        return inject_context(services.inject, user, InjectionRequest(
            user_id=user.user_id, conversation_id=f"scale-{size}", messages=past,
            current_user_message=next(queries), **state))

    rows: dict[str, dict[str, float]] = {}
    rss_before, started = rss_mb(), time.perf_counter()
    search(warm, 0)  # the warm container's first search: reads the partition and builds the index
    first_ms, rss_after = (time.perf_counter() - started) * 1000, rss_mb()
    warm.index.flush()  # its snapshot is saved in the background: not while the warm rows are timed
    rows["search warm"] = timed_runs(f"{size}: search warm", args.runs, lambda i: search(warm, i))
    rows["load_context"] = timed_runs(f"{size}: load_context", args.runs, lambda i: warm.load.load_context(
        user, next(queries), 20))
    rows["inject warm"] = timed_runs(f"{size}: inject warm", args.runs, lambda i: inject(warm))

    rows["search cold (no snapshot)"], _ = cold_runs(f"{size}: search cold, no snapshot", args.cold_runs,
                                                     lambda: fresh(False), search)
    primer = fresh(True)
    search(primer, 0)
    shutdown(primer)  # waits for the snapshot of the current version to be saved
    rows["search cold (snapshot)"], search_loads = cold_runs(f"{size}: search cold, snapshot", args.cold_runs,
                                                             lambda: fresh(True), search)
    rows["inject cold (snapshot)"], inject_loads = cold_runs(f"{size}: inject cold, snapshot", args.cold_runs,
                                                             lambda: fresh(True), lambda c, i: inject(c))
    payload = DynamoIndexSnapshotStore(table_name=settings.memory_table_name, client=client).get(
        user, warm.store.user_version(user))
    return {
        "memories": size, "seed_s": round(seed_s, 1), "first_warm_search_ms": round(first_ms, 1), "rows": rows,
        "snapshot": {"bytes": len(payload) if payload else None,
                     "chunks": math.ceil(len(payload) / CHUNK_BYTES) if payload else None,
                     "loaded_by_cold_searches": search_loads, "loaded_by_cold_injects": inject_loads,
                     "cold_runs": args.cold_runs},
        "rss_mb": round(rss_after, 1), "index_rss_mb": round(rss_after - rss_before, 1),
    }


def lambda_environment(logical_id: str) -> tuple[dict[str, str], Path]:
    """What Lambda gives the function at init (template.yaml's variables with their defaults, the runtime's
    own, tracing on) and the directory its handler is imported from."""
    from local.template import functions, resolve_environment, sqs_queues

    function = functions()[logical_id]
    task_root = ROOT / function.code_uri
    physical = {"MemoryTable": "bench-scale", **{q: f"https://sqs.us-east-1.amazonaws.com/0/{q}" for q in sqs_queues()}}
    env = resolve_environment(function, physical_ids=physical)
    env.update({
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": ":UTC",
        "PYTHONPATH": f"{task_root}:{ROOT / 'shared'}",  # /var/task, then the layer's /opt/python
        "LAMBDA_TASK_ROOT": str(task_root), "_HANDLER": function.handler,
        "AWS_LAMBDA_FUNCTION_NAME": f"agent-memory-{logical_id}", "AWS_LAMBDA_FUNCTION_VERSION": "1",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
        "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_XRAY_DAEMON_ADDRESS": "169.254.79.129:2000", "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
    })
    return env, task_root


def import_row(logical_id: str, runs: int) -> dict[str, float]:
    """Milliseconds to import the function's handler module in a fresh process, `runs` times (after one
    untimed run that compiles the bytecode): the latency row, its p50 the median the target is on."""
    env, task_root = lambda_environment(logical_id)

    def once() -> float:
        done = subprocess.run([sys.executable, "-c", IMPORT_PROBE], env=env, cwd=task_root, capture_output=True,
                              text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"importing {logical_id}'s handler failed:\n{done.stderr[-2000:]}")
        return float(done.stdout.strip().splitlines()[-1])

    once()
    return latency_row([once() for _ in range(runs)])


def import_rows(runs: int) -> dict[str, dict[str, float]]:
    rows = {}
    for name, logical_id in IMPORTS.items():
        rows[name] = import_row(logical_id, runs)
        print(f"{name}: median {rows[name]['p50_ms']:.0f} ms", file=sys.stderr)
    return rows


def verdict(scenario: str, size: int, p95: float) -> tuple[str, str]:
    target = TARGETS.get(scenario, {}).get(size)
    return ("-", "-") if target is None else (f"{target:.0f}", "yes" if p95 <= target else "NO")


def format_tables(sizes: dict[int, dict[str, Any]], imports: dict[str, dict[str, float]] | None = None) -> str:
    lines = ["| scenario | memories | runs | p50 ms | p95 ms | max ms | target p95 | meets |",
             "|---|---:|---:|---:|---:|---:|---:|:---:|"]
    for scenario in SCENARIOS:
        for size, result in sizes.items():
            row = result["rows"][scenario]
            target, meets = verdict(scenario, size, row["p95_ms"])
            lines.append(f"| {scenario} | {size:,} | {row['runs']} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | "
                         f"{row['max_ms']:.1f} | {target} | {meets} |")
    for name, row in (imports or {}).items():
        meets = "yes" if row["p50_ms"] <= IMPORT_TARGET_MS else "NO"
        lines.append(f"| {name} | - | {row['runs']} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | "
                     f"{row['max_ms']:.1f} | {IMPORT_TARGET_MS:.0f} (p50) | {meets} |")
    lines += ["", "| memories | saved in s | snapshot KB | chunks | cold searches from it | RSS MB | index adds MB |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    for size, result in sizes.items():
        snapshot = result["snapshot"]
        kb = f"{snapshot['bytes'] / 1024:,.0f}" if snapshot["bytes"] else "-"
        lines.append(f"| {size:,} | {result['seed_s']:.1f} | {kb} | {snapshot['chunks'] or '-'} | "
                     f"{snapshot['loaded_by_cold_searches']}/{snapshot['cold_runs']} | {result['rss_mb']:.0f} | "
                     f"{result['index_rss_mb']:.0f} |")
    return "\n".join(lines)


def plot(sizes: dict[int, dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = list(sizes)
    figure, (latency, memory) = plt.subplots(1, 2, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1.6, 1]})
    colors = {}
    for scenario in SCENARIOS:
        (line,) = latency.plot(xs, [sizes[x]["rows"][scenario]["p95_ms"] for x in xs], marker="o", label=scenario,
                               linewidth=2.4 if scenario in TARGETS else 1.4)
        colors[scenario] = line.get_color()
    for n, (scenario, targets) in enumerate(TARGETS.items()):
        latency.scatter(list(targets), list(targets.values()), marker="*", s=160, color=colors[scenario],
                        edgecolors="black", zorder=5, label=f"target p95: {scenario}")
        for x, y in targets.items():
            latency.annotate(f"target {y:.0f} ms", (x, y), textcoords="offset points", xytext=(9, -14 + 18 * n),
                             fontsize=8, color=colors[scenario])
    latency.set(xscale="log", yscale="log", xlabel="memories of the user", ylabel="p95 latency, ms (log)",
                title="Latency (p95) by partition size")
    latency.set_xticks(xs, [f"{x:,}" for x in xs])
    latency.grid(True, which="both", alpha=0.3)
    latency.legend(fontsize=8, loc="upper left")
    memory.plot(xs, [sizes[x]["index_rss_mb"] for x in xs], marker="o", label="RSS the warm index added")
    memory.plot(xs, [(sizes[x]["snapshot"]["bytes"] or 0) / 2**20 for x in xs], marker="s",
                label="snapshot size (stored)")
    memory.set(xscale="log", xlabel="memories of the user", ylabel="MB", title="Memory and snapshot size")
    memory.set_xticks(xs, [f"{x:,}" for x in xs])
    memory.grid(True, alpha=0.3)
    memory.legend(fontsize=8)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000", help="memories per user, comma-separated")
    parser.add_argument("--runs", type=int, default=50, help="calls per warm scenario")
    parser.add_argument("--cold-runs", type=int, default=20, help="calls per cold scenario (fresh services each)")
    parser.add_argument("--distinct", type=int, default=256, help="texts embedded; memories reuse their vectors")
    parser.add_argument("--import-runs", type=int, default=9,
                        help="fresh processes per handler import row (0: no import rows)")
    add_backend_argument(parser)
    parser.add_argument("--output", type=Path, default=RESULTS / "scale.json")
    parser.add_argument("--plot", type=Path, default=PLOT)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if min([*sizes, args.runs, args.cold_runs, args.distinct]) < 1 or args.import_runs < 0:
        parser.error("sizes, --runs, --cold-runs and --distinct must be >= 1, --import-runs >= 0")
    # Before anything else runs here: the imports are timed in processes of their own, on an idle machine.
    imports = import_rows(args.import_runs) if args.import_runs else {}
    offline_aws_credentials()

    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.bootstrap.services import build_services
    from agent_memory.settings import Settings
    from benchmarks.inject import unique_texts
    from benchmarks.retrieval import machine_info
    from local.template import create_tables

    settings = Settings(memory_table_name="bench-scale")
    texts, questions, _ = corpus()
    # Every timed call asks something not asked before in this process: the embedder's query cache (shared by
    # the simulated containers, as the loaded model is) would otherwise answer a repeat without embedding it.
    queries = iter(unique_texts(questions, len(sizes) * (3 * args.runs + 3 * args.cold_runs + 10)))
    started = time.perf_counter()
    embedder = build_embedder(settings)
    vectors = embedder.embed_documents(list(texts[:args.distinct])) if embedder is not None else None
    print(f"embedded {args.distinct} texts in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    results: dict[int, dict[str, Any]] = {}
    with dynamodb_client(args.backend) as client:
        create_tables(client, {"MemoryTable": settings.memory_table_name})
        warm = build_services(settings, dynamodb_client=client, embedder=embedder)
        for size in sizes:
            results[size] = run_size(size, args=args, client=client, settings=settings, embedder=embedder,
                                     warm=warm, texts=texts, queries=queries, vectors=vectors)
    machine = machine_info()
    print(f"\nbackend: {args.backend}; {machine['cpus']} CPUs, load average {machine['load_average']}\n")
    print(format_tables(results, imports))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "measured_at": datetime.now(UTC).isoformat(), "backend": args.backend, "machine": machine,
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "embedder": getattr(embedder, "model_id", None), "targets": {k: {str(s): t for s, t in v.items()}
                                                                    for k, v in TARGETS.items()},
        "sizes": {str(size): result for size, result in results.items()},
        "imports": imports, "import_target_p50_ms": IMPORT_TARGET_MS,
    }, indent=2, ensure_ascii=False))
    plot(results, args.plot, f"agent-memory serverless tier, {args.backend}, {machine['cpus']} CPUs "
                             f"({datetime.now(UTC):%Y-%m-%d})")
    print(f"\nwrote {args.output} and {args.plot}")


if __name__ == "__main__":
    main()
