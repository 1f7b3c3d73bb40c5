"""As-of search beside a search of the current memories, in one run (make bench-asof).

One user with --memories fields (1,000), each stated three times (three versions: the first two superseded), so the
table holds 3,000 versions; saved through the save service's `enrich` (keywords) and the store's `save_many`, 100 a
call, with embeddings given (--distinct LoCoMo texts embedded once with the bundled model, memory i carrying text
i mod --distinct's vector), against AWS's DynamoDB Local (--backend moto for in-process moto). Version k of every
field is valid from day 100 k to day 100 (k + 1) after a fixed start.

Timed in the service layer, warm (the container's indexes built), hybrid, 10 results, each call a question not asked
before in the run (no query-embedding cache hit):
  search (current)   what a search without as_of costs: the serverless tier's cached index of the 1,000 current
  search as_of       the same questions as of an instant inside one of the three windows (in turn): the versions
                     valid then picked from the cached index of all 3,000, scored as an index of just those
  search as_of now   the same as of the moment of the call: the as-of tier's window of the current versions, so
                     the same memories ranked with the same recency as the current search (the windows above
                     rank other texts, and recency counts from their instant): as-of's own cost alone
The three take turns call by call (the order rotating every call), so load on the machine falls on all alike; the
ratio of their p50 and p95 to the current search's is the cost of as-of. Then --cold-rounds times: one memory saved,
and the first call of the first two after it (both indexes rebuilt from the partition), then their first call in a
new container once that version's snapshots are saved (both loaded from them; the model already loaded), the order
switching every round.
Also a check that every as-of result is of the version valid at its instant.
Prints a table and writes benchmarks/results/asof.json. All local: add DynamoDB's round trips (~5-10 ms per call)
in a Lambda, to both alike (each warm call reads the user's version counter once).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.common import (
    add_backend_argument,
    corpus,
    dynamodb_client,
    latency_row,
    offline_aws_credentials,
    progress,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
TENANT = "bench"
VERSIONS = 3
START = datetime(2024, 1, 1, tzinfo=UTC)
WINDOW = timedelta(days=100)  # version k is valid from START + k * WINDOW to START + (k + 1) * WINDOW


def version_text(text: str, field: int, version: int) -> str:
    """Version `version` of field `field`: a text of its own, its field and version readable at its end."""
    return f"{text} (#{field}.{version})"


def seed(services: Any, user: Any, fields: int, texts: Sequence[str], vectors: Any, model_id: str | None) -> float:
    """`fields` fields, each saved VERSIONS times (the later saves supersede the earlier); the seconds it took."""
    from agent_memory.domain.models import MemoryType, NewMemory, Origin
    from agent_memory.domain.search.vectors import encode_vector

    started = time.perf_counter()
    batches = [(version, start) for version in range(VERSIONS) for start in range(0, fields, 100)]
    for version, start in progress(batches, desc=f"saving {fields} x {VERSIONS} versions", unit="batch"):
        batch = []
        for field in range(start, min(fields, start + 100)):
            row = field * VERSIONS + version
            batch.append(NewMemory(memory_type=MemoryType.FACT, field=f"topic{field}", origin=Origin.IMPORT,
                                   content=version_text(texts[row % len(texts)], field, version),
                                   created_at=START + version * WINDOW + timedelta(seconds=field)))
        enriched = services.save.enrich(batch)  # services built without an embedder: keywords only
        if vectors is not None:
            enriched = [m.model_copy(update={"embedding": encode_vector(vectors[(start + j) % len(vectors)]),
                                             "embedding_model": model_id}) for j, m in enumerate(enriched)]
        services.store.save_many(user, enriched)
    return time.perf_counter() - started


def interleaved(runs: int, calls: dict[str, Callable[[int], Any]]) -> dict[str, list[float]]:
    """Each call `runs` times, in turn, the order rotating every run; milliseconds per call."""
    names = list(calls)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in progress(range(runs), desc="timing current and as_of searches", total=runs):
        for name in names[i % len(names):] + names[:i % len(names)]:
            started = time.perf_counter()
            calls[name](i)
            samples[name].append((time.perf_counter() - started) * 1000)
    return samples


def cold_paths(settings: Any, client: Any, services: Any, user: Any, search: Callable[..., Any],
               instants: Sequence[datetime], rounds: int, new_container: Callable[[], Any]
               ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """The two first calls that build an index, `rounds` times each, the order switching every round:
    after a write (this container's indexes are of the old version: both apply the change log's record of the
    write), and in a new container (its model already loaded) once snapshots are saved (both loaded from the
    newest snapshot, the changes since applied). Milliseconds."""
    from agent_memory.adapters.dynamodb.index_snapshots import DynamoIndexSnapshotStore
    from agent_memory.domain.models import MemoryType, NewMemory, Origin

    current = DynamoIndexSnapshotStore(table_name=settings.memory_table_name, client=client)
    every = DynamoIndexSnapshotStore(table_name=settings.memory_table_name, client=client, namespace="all#")
    names = ("search (current)", "search as_of")
    rebuilt: dict[str, list[float]] = {name: [] for name in names}
    loaded: dict[str, list[float]] = {name: [] for name in names}

    def timed(into: dict[str, list[float]], built: Any, round_: int) -> None:
        for name in (names if round_ % 2 == 0 else names[::-1]):
            began = time.perf_counter()
            search(round_, None if name == names[0] else instants[round_ % len(instants)], built)
            into[name].append((time.perf_counter() - began) * 1000)

    for round_ in progress(range(rounds), desc="first calls after a write and from snapshots", total=rounds):
        services.store.save_many(user, [NewMemory(memory_type=MemoryType.FACT, origin=Origin.IMPORT,
                                                  content=f"a note written between searches, round {round_}")])
        timed(rebuilt, services, round_)
        version = services.store.versions(user).content
        deadline = time.monotonic() + 120
        while current.newest(user, version) is None or every.newest(user, version) is None:  # saved off the request
            if time.monotonic() > deadline:
                raise SystemExit(f"no snapshot of version {version} within 120 s")
            time.sleep(0.2)
        container = new_container()
        search(round_, None, container, user.model_copy(update={"user_id": "nobody"}))  # its other first costs
        timed(loaded, container, round_)
        loads = container.index.stats.get("snapshot_loads", 0), container.as_of_index.stats.get("snapshot_loads", 0)
        if loads != (1, 1):
            raise SystemExit(f"the new container did not load both indexes from snapshots: {loads}")
    return rebuilt, loaded


def run(args: argparse.Namespace) -> dict[str, Any]:
    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.api.search import SearchRequest, search_memories
    from agent_memory.bootstrap.services import build_services
    from agent_memory.domain.models import ScopeRef
    from agent_memory.settings import Settings
    from benchmarks.inject import unique_texts
    from local.template import create_tables

    # Every version's snapshots saved at once, whatever the size asked for (the defaults wait a minute between a
    # user's snapshots, and save none under 100 memories).
    settings = Settings(memory_table_name="bench-asof", search_snapshot_min_interval_seconds=0,
                        search_snapshot_min_memories=1)
    texts, questions, _ = corpus()
    texts = unique_texts(texts, args.memories * VERSIONS)
    queries = iter(unique_texts(questions, 3 * args.runs + 5 * args.cold_rounds + 10))
    embedder = build_embedder(settings) if args.embedder == "bundled" else None
    started = time.perf_counter()
    vectors = embedder.embed_documents(list(texts[:args.distinct])) if embedder is not None else None
    print(f"embedded {args.distinct if embedder else 0} texts in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    user = ScopeRef(tenant_id=TENANT, user_id=f"asof-{args.memories}")
    with dynamodb_client(args.backend) as client:
        create_tables(client, {"MemoryTable": settings.memory_table_name})
        seed_s = seed(build_services(settings, dynamodb_client=client, embedder=None), user, args.memories, texts,
                      vectors, getattr(embedder, "model_id", None))
        services = build_services(settings, dynamodb_client=client, embedder=embedder)
        instants = [START + k * WINDOW + WINDOW / 2 for k in range(VERSIONS)]

        def search(i: int, as_of: datetime | None, built: Any = services, who: Any = user) -> Any:
            return search_memories(built.search, who, SearchRequest(query=next(queries), limit=10, as_of=as_of,
                                                                     min_relevance_score=0.0))

        services.search.warm_up()  # the model loaded, as in a container that has served before
        first: dict[str, float] = {}
        for name, as_of in (("search (current)", None), ("search as_of", instants[0])):
            began = time.perf_counter()
            search(0, as_of)  # the first call builds the index from the partition
            first[name] = round((time.perf_counter() - began) * 1000, 1)
        checked = wrong = 0
        answers: list[tuple[int, Any]] = []

        def as_of_call(i: int) -> None:
            version = i % VERSIONS
            answers.append((version, search(i, instants[version])))

        samples = interleaved(args.runs, {"search (current)": lambda i: search(i, None),
                                          "search as_of": as_of_call,
                                          "search as_of now": lambda i: search(i, datetime.now(UTC))})
        rebuilt, loaded = cold_paths(settings, client, services, user, search, instants, args.cold_rounds,
                                     new_container=lambda: build_services(settings, dynamodb_client=client,
                                                                          embedder=embedder))
        every = services.store.all_versions(user)
        version_of = {m.memory_key: int(m.content.rstrip(")").rsplit(".", 1)[1]) for m in every
                      if m.content.endswith(")")}  # not the notes cold_paths wrote (valid only from today)
        for version, output in answers:
            for result in output.results:
                checked += 1
                wrong += version_of[result.memory_key] != version
        stored = len(version_of)
    rows = {name: latency_row(values) for name, values in samples.items()}
    current, as_of_row = rows["search (current)"], rows["search as_of"]
    return {
        "measured_at": datetime.now(UTC).isoformat(), "backend": args.backend,
        "embedder": getattr(embedder, "model_id", None),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "memories": args.memories, "versions_per_memory": VERSIONS, "versions_stored": stored,
        "seed_seconds": round(seed_s, 1), "first_call_ms": first, "rows": rows,
        "after_a_write": {name: latency_row(values) for name, values in rebuilt.items()},
        "cold_container_from_snapshot": {name: latency_row(values) for name, values in loaded.items()},
        "ratio": {"p50": round(as_of_row["p50_ms"] / current["p50_ms"], 3),
                  "p95": round(as_of_row["p95_ms"] / current["p95_ms"], 3)},
        "ratio_as_of_now": {"p50": round(rows["search as_of now"]["p50_ms"] / current["p50_ms"], 3),
                            "p95": round(rows["search as_of now"]["p95_ms"] / current["p95_ms"], 3)},
        "as_of_results_checked": checked, "as_of_results_of_another_version": wrong,
    }


def table(result: dict[str, Any]) -> str:
    lines = [f"{result['memories']:,} memories x {result['versions_per_memory']} versions "
             f"({result['versions_stored']:,} stored), {result['backend']}, embedder {result['embedder']}", ""]
    for title, rows in (("warm", result["rows"]), ("first call after a write (indexes rebuilt from the partition)",
                                                   result["after_a_write"]),
                        ("first call in a new container (indexes loaded from snapshots)",
                         result["cold_container_from_snapshot"])):
        lines += [f"{title}:", "", "| search | runs | p50 ms | p95 ms | max ms |", "|---|---:|---:|---:|---:|"]
        for name, row in rows.items():
            lines.append(f"| {name} | {row['runs']} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | "
                         f"{row['max_ms']:.1f} |")
        current = rows["search (current)"]
        for name in [name for name in rows if name != "search (current)"]:
            p50, p95 = (rows[name][f"{q}_ms"] / current[f"{q}_ms"] for q in ("p50", "p95"))
            lines.append(f"| {name.removeprefix('search ')} / current | | {p50:.2f}x | {p95:.2f}x | |")
        lines.append("")
    lines.append(f"as-of results checked: {result['as_of_results_checked']}, of a version not valid at the instant: "
                 f"{result['as_of_results_of_another_version']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=1000, help="fields, each stated three times")
    parser.add_argument("--runs", type=int, default=200, help="calls of each search")
    parser.add_argument("--cold-rounds", type=int, default=5,
                        help="writes, each followed by the first calls after it and in a new container")
    parser.add_argument("--distinct", type=int, default=256, help="texts embedded; memories reuse their vectors")
    parser.add_argument("--embedder", choices=("bundled", "none"), default="bundled",
                        help="the bundled model (default), or none: keyword scoring only")
    add_backend_argument(parser)
    parser.add_argument("--output", type=Path, default=RESULTS / "asof.json")
    args = parser.parse_args(argv)
    if min(args.memories, args.runs, args.distinct) < 1:
        parser.error("--memories, --runs and --distinct must be >= 1")
    offline_aws_credentials()
    from benchmarks.retrieval import machine_info

    result = run(args)
    result["machine"] = machine_info()
    print(f"\n{result['machine']['cpus']} CPUs, load average {result['machine']['load_average']}\n")
    print(table(result))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
