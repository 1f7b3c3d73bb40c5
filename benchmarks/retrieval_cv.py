"""The search defaults, chosen by two-fold cross-validation on the retrieval benchmarks' dev data.

Each dataset's users (LoCoMo conversations, MADial users) are split in two halves by sorted user id
(even / odd positions). Every combination of the levers below is run over every question once; then, for
each half in turn, the combination with the best score on that half (the mean over datasets of hit@5 and
hit@10) is chosen and reported on the other half. One choice serves every dataset: there are no
per-dataset switches. The default of each lever is the value both folds chose, or, when they disagree,
the one nearer to the lever switched off (the smaller), so a lever is only turned up as far as both
halves agree it pays.

Levers (each a setting; see docs/configuration.md):
- MEMORY_SEARCH_LEXICAL_SHARE: BM25's share of text similarity in hybrid mode (the rest is the vector);
- MEMORY_SEARCH_NEIGHBOUR_SHARE: the share of a conversation neighbour's keyword score a turn adds;
- MEMORY_SEARCH_TIME_CUE_WEIGHT: time's weight when the query names a period (closeness to it, not recency);
- MEMORY_SEARCH_DIVERSITY: the weight of a result's similarity to the results above it (maximal marginal
  relevance over the best 20).

Memories are imported once through the save service's batch path (as benchmarks/retrieval.py does), on
DynamoDB Local; each combination is a search service with those settings over the same index. Query
embeddings are computed once and reused by every combination. Writes benchmarks/results/retrieval_cv.json
with every query's metrics per combination, so another choice rule can be checked without a rerun.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import add_backend_argument, dynamodb_client, offline_aws_credentials, progress
from benchmarks.datasets import LOADERS, load
from benchmarks.retrieval import DEPTH, TENANT, fit_query, import_memories, machine_info, ranking_metrics

RESULTS = Path(__file__).resolve().parent / "results"
# Each lever's values, the lever switched off (or the previous default) first: on a tie the first wins.
LEVERS: dict[str, tuple[float, ...]] = {
    "memory_search_lexical_share": (0.5, 0.45, 0.4, 0.35),
    "memory_search_neighbour_share": (0.0, 0.3, 0.5, 0.7, 1.0),
    "memory_search_time_cue_weight": (0.0, 0.2, 0.4),
    "memory_search_diversity": (0.0, 0.2, 0.4, 0.6),
}
SCORED = ("hit@5", "hit@10")


@dataclass(frozen=True)
class QueryRow:
    dataset: str
    user: str
    metrics: dict[str, float]


def halves(users: Sequence[str]) -> tuple[set[str], set[str]]:
    """The two folds of a dataset's users: even and odd positions in sorted order."""
    ordered = sorted(set(users))
    return set(ordered[0::2]), set(ordered[1::2])


def fold_score(rows: Sequence[QueryRow], fold: dict[str, set[str]]) -> dict[str, dict[str, float]]:
    """Mean metrics per dataset over the queries of the fold's users (fold: dataset -> users)."""
    scores: dict[str, dict[str, float]] = {}
    for dataset, users in fold.items():
        chosen = [r.metrics for r in rows if r.dataset == dataset and r.user in users]
        if chosen:
            scores[dataset] = {m: round(statistics.fmean(row[m] for row in chosen), 4) for m in chosen[0]}
    return scores


def objective(scores: dict[str, dict[str, float]]) -> float:
    """The mean over datasets of the scored metrics: every dataset counts the same, whatever its size."""
    return statistics.fmean(statistics.fmean(s[m] for m in SCORED) for s in scores.values())


def choose(results: dict[tuple[float, ...], Sequence[QueryRow]], fold: dict[str, set[str]]) -> tuple[float, ...]:
    """The combination with the best objective on the fold; the first in grid order on a tie."""
    best, best_score = None, -1.0
    for combination, rows in results.items():
        score = objective(fold_score(rows, fold))
        if score > best_score + 1e-12:
            best, best_score = combination, score
    assert best is not None
    return best


def agreed_default(choices: Sequence[tuple[float, ...]]) -> tuple[float, ...]:
    """Per lever, the folds' common choice, or the smaller value when they differ."""
    return tuple(min(values) for values in zip(*choices, strict=True))


def cross_validate(results: dict[tuple[float, ...], Sequence[QueryRow]]) -> dict[str, Any]:
    any_rows = next(iter(results.values()))
    by_dataset: dict[str, list[str]] = {}
    for row in any_rows:
        by_dataset.setdefault(row.dataset, []).append(row.user)
    split = {name: halves(users) for name, users in by_dataset.items()}
    folds, choices = [], []
    for tune in (0, 1):
        tuning = {name: parts[tune] for name, parts in split.items()}
        held = {name: parts[1 - tune] for name, parts in split.items()}
        chosen = choose(results, tuning)
        choices.append(chosen)
        baseline = next(iter(results))
        folds.append({
            "tuned_on": {name: sorted(users) for name, users in tuning.items()},
            "chosen": dict(zip(LEVERS, chosen, strict=True)),
            "tuning": fold_score(results[chosen], tuning),
            "held_out": fold_score(results[chosen], held),
            "held_out_baseline": fold_score(results[baseline], held),
        })
    default = agreed_default(choices)
    everyone = {name: set(users) for name, users in by_dataset.items()}
    return {"folds": folds, "default": dict(zip(LEVERS, default, strict=True)),
            "all_dev_at_default": fold_score(results[default], everyone),
            "all_dev_baseline": fold_score(results[next(iter(results))], everyone),
            "per_lever": per_lever(results, default, split)}


def per_lever(results: dict[tuple[float, ...], Sequence[QueryRow]], default: tuple[float, ...],
              split: dict[str, tuple[set[str], set[str]]]) -> dict[str, list[dict[str, Any]]]:
    """Each lever's values with the others at the default: both halves' scores, to see what each one buys."""
    table: dict[str, list[dict[str, Any]]] = {}
    for position, (lever, values) in enumerate(LEVERS.items()):
        table[lever] = []
        for value in values:
            combination = (*default[:position], value, *default[position + 1:])
            rows = results.get(combination)
            if rows is None:  # a partial grid
                continue
            table[lever].append({"value": value, **{f"half {i}": fold_score(rows, {n: p[i] for n, p in split.items()})
                                                    for i in (0, 1)}})
    return table


def run_combination(search: Any, users: list[tuple[str, Any, Any, dict[str, frozenset[str]]]]) -> list[QueryRow]:
    from agent_memory.services.search import SearchRequest

    rows = []
    for dataset, bench_user, user, sources in users:
        for query in bench_user.queries:
            output = search.search(user, SearchRequest(query=fit_query(query.text), search_mode="hybrid",
                                                       limit=DEPTH, min_relevance_score=0.0))
            ranked = [sources.get(r.memory_key, frozenset()) for r in output.results]
            rows.append(QueryRow(dataset, bench_user.user_id, ranking_metrics(ranked, query.relevant)))
    return rows


def format_report(report: dict[str, Any]) -> str:
    lines = ["", "two-fold cross-validation by user (tune on one half, report on the other):"]
    for number, fold in enumerate(report["folds"]):
        lines.append(f"  fold {number}: chose {fold['chosen']}")
        for name, held in fold["held_out"].items():
            base = fold["held_out_baseline"][name]
            lines.append(f"    held out {name:<10} hit@5 {held['hit@5']:.3f} (baseline {base['hit@5']:.3f})"
                         f"  hit@10 {held['hit@10']:.3f} (baseline {base['hit@10']:.3f})")
    lines.append(f"  default (per lever, the folds' common or smaller choice): {report['default']}")
    for name, row in report["all_dev_at_default"].items():
        base = report["all_dev_baseline"][name]
        lines.append(f"    all dev {name:<10} hit@5 {row['hit@5']:.3f} (baseline {base['hit@5']:.3f})"
                     f"  hit@10 {row['hit@10']:.3f} (baseline {base['hit@10']:.3f})")
    lines.append("\neach lever, the others at the default (hit@5 / hit@10 on half 0 | half 1):")
    for lever, rows in report["per_lever"].items():
        lines.append(f"  {lever}")
        for row in rows:
            cells = []
            for half in ("half 0", "half 1"):
                cells.append("  ".join(f"{name} {s['hit@5']:.3f}/{s['hit@10']:.3f}" for name, s in row[half].items()))
            lines.append(f"    {row['value']:<5} " + "  |  ".join(cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(LOADERS), help=f"comma-separated, of: {', '.join(LOADERS)}")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    add_backend_argument(parser)
    parser.add_argument("--output", type=Path, default=RESULTS / "retrieval_cv.json")
    args = parser.parse_args(argv)
    offline_aws_credentials()
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    if unknown := [n for n in names if n not in LOADERS]:
        parser.error(f"unknown dataset: {', '.join(unknown)}")
    try:
        datasets = [load(name, limit_conversations=args.limit_conversations) for name in names]
    except OSError as error:
        sys.exit(f"benchmark data not found ({error}); set BENCH_DATA_DIR")

    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.adapters.embeddings.query_cache import QueryCachingEmbedder
    from agent_memory.bootstrap import build_services
    from agent_memory.domain.models import ScopeRef
    from agent_memory.settings import Settings
    from local.template import create_tables

    settings = Settings(memory_table_name="bench-retrieval-cv")
    inner = build_embedder(settings)
    embedder = QueryCachingEmbedder(inner, max_queries=100_000) if inner is not None else None
    combinations = list(itertools.product(*LEVERS.values()))
    results: dict[tuple[float, ...], list[QueryRow]] = {}
    started = time.perf_counter()
    with dynamodb_client(args.backend) as client:
        create_tables(client, {"MemoryTable": settings.memory_table_name})
        services = build_services(settings, dynamodb_client=client, embedder=embedder)
        users = []
        for dataset in datasets:
            for bench_user in progress(dataset.users, desc=f"{dataset.name}: import", unit="user"):
                user = ScopeRef(tenant_id=TENANT, user_id=bench_user.user_id)
                sources, _ = import_memories(services, user, bench_user.memories)
                users.append((dataset.name, bench_user, user, sources))
        import_s = time.perf_counter() - started
        for combination in progress(combinations, desc="combinations", unit="setting"):
            varied = settings.model_copy(update=dict(zip(LEVERS, combination, strict=True)))
            search = build_services(varied, dynamodb_client=client, embedder=embedder).search
            results[combination] = run_combination(search, users)
    report = cross_validate(results)
    print(format_report(report), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "measured_at": datetime.now(UTC).isoformat(), "machine": machine_info(), "backend": args.backend,
        "datasets": {d.name: d.sizes() for d in datasets}, "levers": LEVERS, "scored": SCORED,
        "import_s": round(import_s, 1), "total_s": round(time.perf_counter() - started, 1), "report": report,
        "queries": {",".join(map(str, c)): [[r.dataset, r.user, r.metrics] for r in rows]
                    for c, rows in results.items()},
    }, ensure_ascii=False))
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
