"""Short extracted facts: the memories this product stores most, and the everyday questions an assistant asks of them.

Each user of benchmarks/data/short_facts/{dev,heldout}.json is 10-40 one-line facts, preferences and intents
(both packs, English and Chinese users), saved through the save service's batch path on DynamoDB Local as a
client that stores memories directly saves them. Every question is asked in English and in Chinese, so it is a
same-language or a cross-language question for its user, and is answered by the default search as a caller
gets it (mode, limit 5, floor): hit@1 is whether the first result shown answers it, hit@3 one of the first three.
"no floor" scores the same ranking with min_relevance_score 0, to tell the floor's cost from the ranking's.

What should come back empty, at the default floor: questions in the same register about things the user never
mentioned ("what's her blood type" for a user without one) and out-of-domain queries ("notes on the Krebs
cycle"). Reported per split, pack and direction; dev is what defaults may be tuned on, heldout is what they are
published on. Writes benchmarks/results/short_facts.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import add_backend_argument, dynamodb_client, offline_aws_credentials, progress
from benchmarks.datasets import BenchUser, load_short_facts
from benchmarks.retrieval import TENANT, import_memories, machine_info

RESULTS = Path(__file__).resolve().parent / "results"
SPLITS = ("dev", "heldout")


def ask(search: Any, user: Any, text: str, min_relevance: float | None) -> list[Any]:
    from agent_memory.api.search import SearchRequest, search_memories

    request = SearchRequest(query=text) if min_relevance is None else SearchRequest(query=text,
                                                                                      min_relevance_score=min_relevance)
    return search_memories(search, user, request).results


def score_user(search: Any, user: Any, bench_user: BenchUser, sources: dict[str, frozenset[str]]) -> dict[str, Any]:
    """Per question: hit@1 and hit@3 at the default floor and with none; per unanswerable query: empty or not."""
    questions = []
    for query in bench_user.queries:
        row: dict[str, Any] = {"id": query.query_id, "direction": query.category}
        for label, floor in (("", None), (" no floor", 0.0)):
            results = ask(search, user, query.text, floor)
            ranked = [sources.get(r.memory_key, frozenset()) for r in results]
            row[f"hit@1{label}"] = float(any(ids & query.relevant for ids in ranked[:1]))
            row[f"hit@3{label}"] = float(any(ids & query.relevant for ids in ranked[:3]))
            if not label:
                # Every result shown: (answers the question, relevance_score, absolute relevance).
                row["shown"] = [(bool(ids & query.relevant), r.relevance_score,
                                 round(r.score_breakdown.absolute_relevance, 4))
                                for ids, r in zip(ranked, results, strict=True)]
        questions.append(row)
    unanswerable = []
    for query in bench_user.unanswerable:
        results = ask(search, user, query.text, None)
        unanswerable.append({"id": query.query_id, "kind": query.category, "empty": float(not results),
                             "shown": [(False, r.relevance_score, round(r.score_breakdown.absolute_relevance, 4))
                                       for r in results]})
    return {"questions": questions, "unanswerable": unanswerable}


def summarize(users: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Means per group: all, each user's group (pack/language) and each direction; and the empty share per
    unanswerable kind."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for scored in users.values():
        for row in scored["questions"]:
            for name in ("all", scored["group"], row["direction"]):
                groups.setdefault(name, []).append(row)
    out = {name: {m: round(statistics.fmean(r[m] for r in rows), 4)
                  for m in ("hit@1", "hit@3", "hit@1 no floor", "hit@3 no floor")} | {"questions": len(rows)}
           for name, rows in groups.items()}
    kinds: dict[str, list[float]] = {}
    for scored in users.values():
        for row in scored["unanswerable"]:
            kinds.setdefault(row["kind"], []).append(row["empty"])
    out["unanswerable"] = {kind: round(statistics.fmean(v), 4) for kind, v in sorted(kinds.items())}
    out["scores"] = score_distribution(users)
    return out


SCORE_THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def score_distribution(users: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """What a threshold on the shown relevance_score keeps, per threshold: the share of answered questions whose
    best-placed answer scores at or above it, the share of shown results that do not answer their question, and
    of the results shown for unanswerable queries, that score at or above it; and the share of results at or
    above it that answer their question (the figures the tool prompt's guidance states)."""
    answers, others, off_topic = [], [], []
    for scored in users.values():
        for row in scored["questions"]:
            hits = [score for is_answer, score, _ in row["shown"] if is_answer]
            if hits:
                answers.append(hits[0])
            others += [score for is_answer, score, _ in row["shown"] if not is_answer]
        for row in scored["unanswerable"]:
            off_topic += [score for _, score, _ in row["shown"]]

    def share(values: list[float], threshold: float) -> float:
        return round(sum(v >= threshold for v in values) / len(values), 4) if values else 0.0

    out = {}
    for t in SCORE_THRESHOLDS:
        kept_answers = sum(v >= t for v in answers)
        kept = kept_answers + sum(v >= t for v in others) + sum(v >= t for v in off_topic)
        out[str(t)] = {"answers": share(answers, t), "other_results": share(others, t),
                       "unanswerable_results": share(off_topic, t),
                       "precision": round(kept_answers / kept, 4) if kept else 0.0}
    return out


def format_table(summary: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = ["| split | group | questions | hit@1 | hit@3 | hit@1 no floor | hit@3 no floor |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for split, groups in summary.items():
        for name, row in groups.items():
            if name in ("unanswerable", "scores"):
                continue
            lines.append(f"| {split} | {name} | {row['questions']} | {row['hit@1']:.3f} | {row['hit@3']:.3f} | "
                         f"{row['hit@1 no floor']:.3f} | {row['hit@3 no floor']:.3f} |")
    lines += ["", "| split | unanswerable kind | share answered with nothing |", "|---|---|---:|"]
    for split, groups in summary.items():
        for kind, share in groups["unanswerable"].items():
            lines.append(f"| {split} | {kind} | {share:.1%} |")
    lines += ["", "| split | relevance_score at least | answers | other results | unanswerable queries' results "
                  "| results that answer |", "|---|---:|---:|---:|---:|---:|"]
    for split, groups in summary.items():
        for threshold, row in groups.get("scores", {}).items():
            lines.append(f"| {split} | {threshold} | {row['answers']:.1%} | {row['other_results']:.1%} | "
                         f"{row['unanswerable_results']:.1%} | {row['precision']:.1%} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--splits", default=",".join(SPLITS))
    add_backend_argument(parser)
    parser.add_argument("--output", type=Path, default=RESULTS / "short_facts.json")
    args = parser.parse_args(argv)
    offline_aws_credentials()
    splits = [s.strip() for s in args.splits.split(",") if s.strip()]

    from agent_memory.bootstrap.services import build_services
    from agent_memory.domain.models import ScopeRef
    from agent_memory.settings import Settings
    from local.template import create_tables

    settings = Settings(memory_table_name="bench-short-facts", search_access_refresh_seconds=0.0)
    started = time.perf_counter()
    per_split: dict[str, dict[str, Any]] = {}
    summary: dict[str, dict[str, Any]] = {}
    with dynamodb_client(args.backend) as client:
        create_tables(client, {"MemoryTable": settings.memory_table_name})
        services = build_services(settings, dynamodb_client=client)
        for split in splits:
            dataset = load_short_facts(split=split)
            scored: dict[str, Any] = {}
            for bench_user in progress(dataset.users, desc=f"short facts {split}", unit="user"):
                user = ScopeRef(tenant_id=TENANT, user_id=f"{split}-{bench_user.user_id}")
                sources, _ = import_memories(services, user, bench_user.memories)
                scored[bench_user.user_id] = {**score_user(services.search, user, bench_user, sources),
                                              "group": bench_user.group, "stored": len(sources),
                                              "saved": len(bench_user.memories)}
            per_split[split] = scored
            summary[split] = summarize(scored)
    table = format_table(summary)
    print(table)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "measured_at": datetime.now(UTC).isoformat(), "machine": machine_info(), "backend": args.backend,
        "total_s": round(time.perf_counter() - started, 1), "summary": summary, "users": per_split,
    }, ensure_ascii=False, default=str))
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
