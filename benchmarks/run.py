"""Service-layer latency of save, extract and load_context (make bench).

Runs against AWS's DynamoDB Local when installed (make dynamodb-local), else moto. Prints a table
and writes benchmarks/results/latency.json. Both are local: the figures measure our code plus a
local store, not DynamoDB's network round trips (add ~5-10 ms per call in a Lambda). moto's
transactions deep-copy its tables, so on moto save latency grows with the table and says little.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.common import (
    add_backend_argument,
    corpus,
    dynamodb_client,
    offline_aws_credentials,
    percentile,
    progress,
)

RESULTS = Path(__file__).resolve().parent / "results"


def measure(fn: Callable[[int], object], runs: int, name: str = "") -> dict[str, float]:
    samples = []
    for i in progress(range(runs), desc=name, total=runs, unit="call"):
        started = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - started) * 1000)
    return {"runs": runs, "p50_ms": round(statistics.median(samples), 2), "p95_ms": round(percentile(samples, 0.95), 2),
            "max_ms": round(max(samples), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--sizes", default="100,700,1000", help="memories per user for search and load_context")
    add_backend_argument(parser)
    parser.add_argument("--skip-saves", action="store_true", help="only the search and load_context rows")
    parser.add_argument("--quick", action="store_true",
                        help="a first look in under a minute: 20 runs, one user of 100 memories")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.sizes = 20, "100"
    offline_aws_credentials()


    from agent_memory.api.search import SearchRequest, search_memories
    from agent_memory.bootstrap.services import build_services
    from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
    from agent_memory.ports import ConversationTurn
    from agent_memory.settings import Settings
    from benchmarks.inject import unique_texts
    from local.template import create_tables

    backend = args.backend
    rows: dict[str, dict[str, float]] = {}

    def row(name: str, fn: Callable[[int], object], runs: int) -> None:
        rows[name] = measure(fn, runs, name)

    with dynamodb_client(backend) as client:
        create_tables(client, {"MemoryTable": "bench"})
        services = build_services(Settings(memory_table_name="bench"), dynamodb_client=client)
        save_user = ScopeRef(tenant_id="bench", user_id="saver")
        if not args.skip_saves:
            row("save (new memory)", lambda i: services.save.save(
                save_user, NewMemory(memory_type=MemoryType.FACT, content=f"fact number {i}")), args.runs)
            row("save (supersede a field)", lambda i: services.save.save(
                save_user, NewMemory(memory_type=MemoryType.FACT, content=f"用户{i}岁", field="age")), args.runs)
            message = "我今年32岁，浙大计算机硕士毕业的，现在在杭州做前端开发，工作8年了，年薪大概80万"
            row("extract (offline, 8 fields)", lambda i: services.save.extract_and_save(
                ScopeRef(tenant_id="bench", user_id=f"x{i}"), ConversationTurn(user_message=message)),
                max(10, args.runs // 5))
        texts, questions, _ = corpus()
        # A question never asked before on every call: the embedder's query cache would answer a repeat.
        sizes = [int(s) for s in args.sizes.split(",")]
        queries = iter(unique_texts(questions, len(sizes) * (5 * max(20, args.runs) + 10)))
        for size in sizes:
            user = ScopeRef(tenant_id="bench", user_id=f"load-{size}")
            batch = [NewMemory(memory_type=MemoryType.FACT, content=texts[i % len(texts)] + ("" if i < len(texts)
                               else f" ({i})")) for i in range(size)]
            for start in range(0, size, 100):
                services.save.save_batch(user, batch[start : start + 100])
            runs = max(20, args.runs)
            for mode in ("hybrid", "keyword"):
                # warm the cache
                search_memories(services.search, user, SearchRequest(query=next(queries), search_mode=mode))
                row(f"search {mode} ({size} memories)", lambda i, user=user, mode=mode: search_memories(
                    services.search, user, SearchRequest(query=next(queries), search_mode=mode, limit=10,
                                                         min_relevance_score=0)), runs)

            def cold(i: int, user: ScopeRef = user, embedder: object = services.search._embedder()) -> object:
                fresh = build_services(Settings(memory_table_name="bench"), dynamodb_client=client,
                                       embedder=embedder)
                return search_memories(fresh.search, user, SearchRequest(query=next(queries), limit=10))

            row(f"search hybrid cold ({size} memories)", cold, max(5, runs // 10))
            row(f"load_context ({size} memories)",
                lambda i, user=user: services.load.load_context(user, next(queries), 20), runs)

    print(f"backend: {backend}")
    print(f"{'operation':<32} {'runs':>5} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
    for name, figures in rows.items():
        print(f"{name:<32} {figures['runs']:>5} {figures['p50_ms']:>9} {figures['p95_ms']:>9} {figures['max_ms']:>9}")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "latency.json"
    out.write_text(json.dumps({
        "measured_at": datetime.now(UTC).isoformat(), "backend": backend,
        "python": platform.python_version(), "machine": platform.machine(), "results": rows,
    }, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
