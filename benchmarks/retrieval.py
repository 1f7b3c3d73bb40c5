"""Retrieval quality of search on real data: LoCoMo (English) and MADial-Bench (Chinese).

Reads ../shared/bench (BENCH_DATA_DIR overrides; see its README), imports every memory through
the save service's batch path, then runs each question through the search service in three modes:
"keyword" (plain BM25), "semantic" (plain dense, the configured embedder) and "hybrid" (ours).
Prints a table per dataset with the README's reference figures beside it and writes
benchmarks/results/retrieval.json.

Metrics, all at depth 10: hit@k (an answering memory in the top k), full@10 (every answering memory
in the top 10), MRR@10, and search latency (wall clock around each call). Identical content in one
conversation is stored once; such a memory stands for all its turns, and is a hit when any is
relevant. Nothing is tuned to these questions: each is a plain query, limit 10, no score floor.

Runs on DynamoDB Local when installed (make dynamodb-local), else moto, like benchmarks/run.py.
Before timing, one untimed search per user and mode warms the embedder and the per-container cache
(its cost is reported as warm_up_s), so the latencies are those of a warm container.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import add_backend_argument, dynamodb_client, offline_aws_credentials, percentile, progress
from benchmarks.datasets import LOADERS, BenchDataset, BenchMemory, data_dir, load

RESULTS = Path(__file__).resolve().parent / "results"
MODES = ("keyword", "semantic", "hybrid")
DEFAULT_MODE = "hybrid"  # the service's default: the one whose relevance floor is calibrated
KS = (1, 3, 5, 10)
DEPTH = 10
CHUNK = 100
MAX_QUERY_CHARS = 2000  # SearchRequest's limit: a longer query keeps its end (the latest turns)
TENANT = "bench"

# The README's figures on all 10 LoCoMo conversations (1,536 questions) with plain methods.
REFERENCE: dict[str, list[tuple[str, dict[str, float]]]] = {
    "locomo": [
        ("reference: BM25 (all 10 convs)",
         {"hit@1": 0.25, "hit@3": 0.41, "hit@5": 0.48, "hit@10": 0.56, "mrr@10": 0.35}),
        ("reference: dense MiniLM (all 10 convs)",
         {"hit@1": 0.18, "hit@3": 0.32, "hit@5": 0.40, "hit@10": 0.51, "mrr@10": 0.27}),
        ("reference: hybrid 0.5/0.5 (all 10 convs)",
         {"hit@1": 0.29, "hit@3": 0.47, "hit@5": 0.55, "hit@10": 0.65, "mrr@10": 0.40}),
    ],
}
MODE_LABELS = {"keyword": "keyword (BM25)", "semantic": "semantic (dense)", "hybrid": "hybrid (ours)"}


# --- metrics (pure, tested on hand-made cases) ----------------------------------------------------


def ranking_metrics(ranked: Sequence[Collection[str]], relevant: Collection[str], *,
                    ks: Iterable[int] = KS, depth: int = DEPTH) -> dict[str, float]:
    """One query's metrics. `ranked` lists, best first, the source ids each result stands for
    (several when duplicates were stored once); `relevant` the ids that answer the query."""
    wanted = set(relevant)
    if not wanted:
        raise ValueError("a query needs at least one relevant id")
    ks = tuple(ks)
    if any(k < 1 or k > depth for k in ks):
        raise ValueError(f"every k must be within 1..{depth}")
    top = [set(ids) for ids in ranked[:depth]]
    first = next((rank for rank, ids in enumerate(top) if ids & wanted), None)
    found = set().union(*top) & wanted if top else set()
    metrics = {f"hit@{k}": 1.0 if first is not None and first < k else 0.0 for k in ks}
    metrics[f"full@{depth}"] = 1.0 if found == wanted else 0.0
    metrics[f"mrr@{depth}"] = 1.0 / (first + 1) if first is not None else 0.0
    return metrics


def mean_metrics(rows: Sequence[dict[str, float]], digits: int = 4) -> dict[str, float]:
    """The mean of each metric over queries (an empty list gives an empty dict)."""
    if not rows:
        return {}
    return {name: round(statistics.fmean(row[name] for row in rows), digits) for name in rows[0]}


def latency_summary(samples_ms: Sequence[float]) -> dict[str, float]:
    if not samples_ms:
        return {}
    return {"p50_ms": round(statistics.median(samples_ms), 2), "p95_ms": round(percentile(samples_ms, 0.95), 2),
            "mean_ms": round(statistics.fmean(samples_ms), 2), "max_ms": round(max(samples_ms), 2)}


def fit_query(text: str, limit: int = MAX_QUERY_CHARS) -> str:
    """A query within the request's length limit: the end is kept (the latest turns of a dialogue)."""
    text = text.strip()
    return text if len(text) <= limit else text[-limit:].strip()


# --- import and search ----------------------------------------------------------------------------


def to_new_memory(memory: BenchMemory) -> Any:
    from agent_memory.domain.models import MemoryType, NewMemory

    return NewMemory(memory_type=MemoryType(memory.memory_type), content=memory.content, source="benchmark",
                     conversation_id=memory.conversation_id, metadata=dict(memory.metadata),
                     created_at=memory.created_at)


def import_memories(services: Any, user: Any, memories: Sequence[BenchMemory],
                    chunk: int = CHUNK) -> tuple[dict[str, frozenset[str]], int]:
    """Saves in batches of `chunk`; returns memory key -> the source ids it stands for, and the
    number of items stored once already (duplicate content)."""
    from agent_memory.domain.models import SaveOutcome

    sources: dict[str, set[str]] = defaultdict(set)
    duplicates = 0
    for start in range(0, len(memories), chunk):
        part = memories[start:start + chunk]
        results = services.save.save_batch(user, [to_new_memory(m) for m in part])
        if len(results) != len(part):
            raise RuntimeError(f"save_batch returned {len(results)} results for {len(part)} memories")
        for memory, result in zip(part, results, strict=True):
            sources[result.memory.memory_key].add(memory.source_id)
            duplicates += result.outcome is SaveOutcome.DUPLICATE
    return {key: frozenset(ids) for key, ids in sources.items()}, duplicates


def run_dataset(services: Any, dataset: BenchDataset, modes: Sequence[str],
                after_import: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """`after_import(user)`: what must happen before a user's memories are searchable (the OpenSearch tier's
    indexing, which the table's stream does when deployed)."""
    from agent_memory.api.search import SearchRequest, search_memories
    from agent_memory.domain.models import ScopeRef

    def request(text: str, mode: str) -> Any:
        return SearchRequest(query=fit_query(text), search_mode=mode, limit=DEPTH, min_relevance_score=0.0)

    per_mode: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    # The default mode's ranked lists with each result's relevance: a score floor's effect, offline.
    floors: list[dict[str, Any]] = []
    by_category: dict[str, dict[str, list[dict[str, float]]]] = {m: defaultdict(list) for m in modes}
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    stored, duplicates, import_s, warm_up_s, truncated = 0, 0, 0.0, 0.0, 0
    for bench_user in progress(dataset.users, desc=f"{dataset.name}: import and search", unit="user"):
        user = ScopeRef(tenant_id=TENANT, user_id=bench_user.user_id)
        started = time.perf_counter()
        sources, dups = import_memories(services, user, bench_user.memories)
        if after_import is not None:
            after_import(user)
        import_s += time.perf_counter() - started
        stored += len(sources)
        duplicates += dups
        truncated += sum(1 for q in bench_user.queries if len(q.text.strip()) > MAX_QUERY_CHARS)
        if not bench_user.queries:
            continue
        started = time.perf_counter()
        for mode in modes:
            search_memories(services.search, user, request(bench_user.queries[0].text, mode))
        warm_up_s += time.perf_counter() - started
        for mode in modes:
            for query in bench_user.queries:
                search_request = request(query.text, mode)
                started = time.perf_counter()
                output = search_memories(services.search, user, search_request)
                latencies[mode].append((time.perf_counter() - started) * 1000)
                ranked = [sources.get(r.memory_key, frozenset()) for r in output.results]
                row = ranking_metrics(ranked, query.relevant)
                per_mode[mode].append(row)
                if mode == DEFAULT_MODE:
                    floors.append({"user": bench_user.user_id, "ranked": [
                        (bool(ids & query.relevant), r.score_breakdown.relevance)
                        for ids, r in zip(ranked, output.results, strict=True)]})
                if query.category:
                    by_category[mode][query.category].append(row)
    results = {}
    for mode in modes:
        results[mode] = {"queries": len(per_mode[mode]), **mean_metrics(per_mode[mode]),
                         **latency_summary(latencies[mode])}
        if by_category[mode]:
            results[mode]["by_category"] = {
                name: {"queries": len(rows), **mean_metrics(rows)} for name, rows in sorted(by_category[mode].items())}
    return {
        "sizes": {**dataset.sizes(), "memories_stored": stored, "duplicates_stored_once": duplicates,
                  "queries_truncated": truncated},
        "import_s": round(import_s, 2),
        "import_memories_per_s": round(dataset.memory_count / import_s, 1) if import_s else None,
        "warm_up_s": round(warm_up_s, 2),
        "modes": results,
        "floors": floors,
    }


# --- the relevance floor, chosen by cross-validation -----------------------------------------------

FLOOR_GRID = tuple(round(0.025 * i, 3) for i in range(33))  # 0 .. 0.8
FLOOR_KEEP = 0.98  # the highest floor that keeps hit@5 within 2% of no floor at all


def hit_with_floor(rows: Sequence[dict[str, Any]], floor: float, k: int = 5) -> float:
    """hit@k when results under `floor` (relevance) are left out, from rankings made without a floor."""
    if not rows:
        return 0.0
    hits = [any(hit for hit, relevance in [r for r in row["ranked"] if r[1] >= floor][:k]) for row in rows]
    return sum(hits) / len(hits)


def choose_floor(datasets: dict[str, Sequence[dict[str, Any]]]) -> float:
    """The highest floor that keeps every dataset's hit@5 within FLOOR_KEEP of no floor."""
    chosen = 0.0
    for floor in FLOOR_GRID:
        if all(hit_with_floor(rows, floor) >= FLOOR_KEEP * hit_with_floor(rows, 0.0) for rows in datasets.values()):
            chosen = floor
    return chosen


def cross_validate_floor(datasets: dict[str, Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """Two folds by user (conversation): choose the floor on one, report hit@5 at it on the other,
    then swap. The default is the lower of the two folds' choices."""
    folds = []
    for tune_part in (0, 1):
        def part(rows: Sequence[dict[str, Any]], which: int) -> list[dict[str, Any]]:
            users = sorted({row["user"] for row in rows})
            chosen = set(users[which::2])
            return [row for row in rows if row["user"] in chosen]

        tune = {name: part(rows, tune_part) for name, rows in datasets.items()}
        held = {name: part(rows, 1 - tune_part) for name, rows in datasets.items()}
        floor = choose_floor(tune)
        folds.append({"floor": floor, "held_out": {name: {
            "hit@5 no floor": round(hit_with_floor(rows, 0.0), 4),
            "hit@5 at floor": round(hit_with_floor(rows, floor), 4)} for name, rows in held.items()}})
    return {"grid": [FLOOR_GRID[0], FLOOR_GRID[-1]], "keep": FLOOR_KEEP, "folds": folds,
            "default": min(f["floor"] for f in folds),
            "all_dev_at_default": {name: round(hit_with_floor(rows, min(f["floor"] for f in folds)), 4)
                                   for name, rows in datasets.items()}}


# --- report ---------------------------------------------------------------------------------------

_COLUMNS = ("hit@1", "hit@3", "hit@5", "hit@10", f"full@{DEPTH}", f"mrr@{DEPTH}", "p50_ms", "p95_ms")


def format_table(name: str, result: dict[str, Any]) -> str:
    sizes = result["sizes"]
    lines = [f"\n{name}: {sizes['users']} users, {sizes['memories']} memories "
             f"({sizes['memories_stored']} stored), {sizes['queries']} queries; "
             f"import {result['import_s']} s, warm-up {result['warm_up_s']} s"]
    width = 42
    lines.append(f"{'mode':<{width}}" + "".join(f"{c:>9}" for c in _COLUMNS))

    def cell(row: dict[str, float], column: str) -> str:
        value = row.get(column)
        if value is None:
            return f"{'-':>9}"
        return f"{value:>9.1f}" if column.endswith("_ms") else f"{value:>9.3f}"

    for mode, row in result["modes"].items():
        lines.append(f"{MODE_LABELS.get(mode, mode):<{width}}" + "".join(cell(row, c) for c in _COLUMNS))
    for label, row in REFERENCE.get(name, []):
        lines.append(f"{label:<{width}}" + "".join(cell(row, c) for c in _COLUMNS))
    return "\n".join(lines)


def machine_info() -> dict[str, Any]:
    return {"python": platform.python_version(), "machine": platform.machine(), "platform": platform.platform(),
            "processor": platform.processor() or None, "cpus": os.cpu_count(),
            # Other work on the machine inflates latency (p95 first): the 1/5/15-minute load when written.
            "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None}


@contextmanager
def search_tier(tier: str, settings: Any, dynamodb: Any) -> Iterator[tuple[Any, Callable[[Any], None] | None]]:
    """(the SearchIndex to search, what makes a user's saved memories searchable): None for the serverless tier;
    for the OpenSearch tier, an index on a real node that each user's current memories are written to after their
    import, as the table's stream would, then refreshed (the benchmark asks at once; the adapter never refreshes)."""
    if tier == "serverless":
        yield None, None
        return
    import tempfile
    import uuid

    from opensearchpy import OpenSearch

    from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.adapters.opensearch.admin import ensure_index
    from agent_memory.adapters.opensearch.documents import with_current_embeddings
    from agent_memory.adapters.opensearch.index import OpenSearchIndex
    from local.opensearch_node import OpenSearchNode

    embedder = build_embedder(settings)
    store = DynamoMemoryStore(table_name=settings.memory_table_name, client=dynamodb)
    with ExitStack() as stack:
        url = os.environ.get("OPENSEARCH_URL") or stack.enter_context(
            OpenSearchNode(Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-os-"))))).url
        client = OpenSearch(hosts=[url], timeout=60)
        alias = f"bench-retrieval-{uuid.uuid4().hex[:8]}"
        ensure_index(client, alias, embedder.dimension if embedder else None)
        index = OpenSearchIndex(client=client, alias=alias)

        def index_user(user: Any) -> None:
            memories = store.all_current(user)
            for start in range(0, len(memories), 200):
                index.bulk_upsert(with_current_embeddings(memories[start:start + 200], embedder))
            client.indices.refresh(index=alias)

        try:
            yield index, index_user
        finally:
            client.indices.delete(index=f"{alias}-v*")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(LOADERS), help=f"comma-separated, of: {', '.join(LOADERS)}")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated search modes")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N",
                        help="quick run: the first N LoCoMo conversations and the first N MADial users")
    add_backend_argument(parser)
    parser.add_argument("--data-dir", type=Path, default=None, help=f"default: {data_dir()}")
    parser.add_argument("--output", type=Path, default=None,
                        help="default: benchmarks/results/retrieval.json (retrieval_opensearch.json for that tier)")
    parser.add_argument("--tier", choices=["serverless", "opensearch"], default="serverless",
                        help="the search tier: in the function, or a real local OpenSearch node (OPENSEARCH_URL "
                             "names one already running)")
    args = parser.parse_args(argv)
    if args.output is None:
        args.output = RESULTS / ("retrieval.json" if args.tier == "serverless" else "retrieval_opensearch.json")
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if unknown := [n for n in names if n not in LOADERS] + [m for m in modes if m not in MODES]:
        parser.error(f"unknown dataset or mode: {', '.join(unknown)}")
    root = args.data_dir or data_dir()
    if not root.is_dir():
        sys.exit(f"benchmark data not found at {root} (set BENCH_DATA_DIR or --data-dir)")
    offline_aws_credentials()
    datasets = [load(name, root, limit_conversations=args.limit_conversations) for name in names]


    from agent_memory.bootstrap.services import build_services
    from agent_memory.settings import Settings
    from local.template import create_tables

    try:
        import agent_memory.services.search  # noqa: F401  (fail early and clearly)
    except ImportError as error:
        sys.exit(f"the search service is not importable yet: {error}")

    backend = args.backend
    settings = Settings(memory_table_name="bench-retrieval")
    results: dict[str, Any] = {}
    with dynamodb_client(backend) as client, search_tier(args.tier, settings, client) as (index, after_import):
        create_tables(client, {"MemoryTable": settings.memory_table_name})
        services = build_services(settings, dynamodb_client=client, index=index)
        if getattr(services, "search", None) is None:
            sys.exit("build_services() has no search service yet")
        for dataset in datasets:
            print(f"{dataset.name}: {dataset.memory_count} memories, {dataset.query_count} queries ...", flush=True)
            results[dataset.name] = run_dataset(services, dataset, modes, after_import)
            print(format_table(dataset.name, results[dataset.name]), flush=True)
    floors = {name: result.pop("floors") for name, result in results.items()}
    floor = cross_validate_floor({name: rows for name, rows in floors.items() if rows})
    print(f"\nrelevance floor (min_relevance_score), 2-fold cross-validated by user: {json.dumps(floor)}")

    config = {
        "backend": backend, "tier": args.tier, "modes": modes, "limit_conversations": args.limit_conversations,
        "depth": DEPTH,
        "ks": list(KS), "import_chunk": CHUNK, "min_relevance_score": 0.0, "tenant": TENANT,
        "data_dir": str(root),
        "settings": {name: getattr(settings, name, None) for name in (
            "embedding_provider", "embedding_model", "search_tier", "memory_search_keyword_weight",
            "memory_search_text_similarity_weight", "memory_search_time_decay_weight",
            "memory_search_half_life_days", "memory_extraction_enable_synonym_expansion")},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "measured_at": datetime.now(UTC).isoformat(), "config": config, "machine": machine_info(),
        "reference": {name: dict(rows) for name, rows in REFERENCE.items()}, "datasets": results,
        "relevance_floor": floor,
    }, indent=2, ensure_ascii=False))
    print(f"\nbackend: {backend}\nwrote {args.output}")


if __name__ == "__main__":
    main()
