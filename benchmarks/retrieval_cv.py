"""The search defaults, chosen by leave-one-conversation-out validation on the retrieval benchmarks' dev data.

Every LoCoMo conversation, every MADial user and every short-fact user (benchmarks/data/short_facts/dev.json)
is one fold. For each fold in turn, each choice below is made on all the other folds (the mean over datasets
and save modes of hit@1, hit@5 and hit@10: what a caller sees first counts beside what the first page holds)
and reported on the fold left out: the figures to publish are those held-out ones, pooled over the folds. One
choice serves every dataset and save mode: there are no per-dataset switches. The default of each lever is the
value most folds chose (on a tie, the one nearer to the lever switched off), so a lever is only turned up as
far as the folds agree it pays.

Save modes: LoCoMo's turns are saved the ways clients save them, each under its own user: `plain`
(content and created_at), `context` (each turn with the turn before it as `context`) and
`conversation_context` (the session as `conversation_id`, plus `context`). MADial's memories and the short
facts are standalone: `plain` only.

What is chosen:
1. The search levers (settings; see docs/configuration.md), every combination of:
   - MEMORY_SEARCH_LEXICAL_SHARE: BM25's share of text similarity in hybrid mode (the rest is the vector);
   - MEMORY_SEARCH_NEIGHBOUR_SHARE: the share of a conversation neighbour's keyword score a turn adds;
   - MEMORY_SEARCH_TIME_CUE_WEIGHT: time's weight when the query names a period;
   - MEMORY_SEARCH_DIVERSITY: maximal marginal relevance over the best 20;
   - MEMORY_SEARCH_TOPIC_WEIGHT: the weight of a memory naming an everyday topic the query names.
   `--levers` varies only the levers it names, the others at their settings.
   Usage is off here (interaction weight 0), so one pass over the questions is the whole story.
2. MEMORY_SEARCH_INTERACTION_WEIGHT, at the chosen levers, for a user of long standing: each question is
   asked once (its results' access statistics current at the next search, as when a container refreshes
   them at every search), then all of them again; the second pass is scored. Top-5 sets that changed
   between the passes are counted.
3. The absolute relevance calibration (MEMORY_RELEVANCE_*) and the default floor on it: a logistic model
   of an answering memory against the other top-20 results of its own query and the top-20 results of
   off-topic queries of three kinds, fitted on the tuning folds: `other` (another conversation's questions
   asked of this user), `never_mentioned` (a short-fact user's questions about what they never said) and
   `out_of_domain` (the short facts' out-of-domain queries, asked of every user);
   the floor is the highest that costs no dataset's tuning folds more than 0.01 of hit@5. Held out: hit@5 and hit@10
   at that floor, and the share of off-topic queries of each kind that return nothing. A floor's effect is computed on
   the floor-free rankings (results under it left out).

Memories are imported through the save service's batch path on DynamoDB Local; query embeddings are
computed once and reused. Writes benchmarks/results/retrieval_cv.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import add_backend_argument, dynamodb_client, offline_aws_credentials, progress
from benchmarks.datasets import LOADERS, BenchDataset, BenchMemory, BenchUser, load, load_short_facts
from benchmarks.retrieval import TENANT, fit_query, machine_info, ranking_metrics

RESULTS = Path(__file__).resolve().parent / "results"
# Each lever's values, the lever switched off (or the previous default) first: on a tie the first wins.
LEVERS: dict[str, tuple[float, ...]] = {
    "memory_search_lexical_share": (0.35, 0.5),
    "memory_search_neighbour_share": (0.0, 0.5, 1.0),
    "memory_search_time_cue_weight": (0.0, 0.4),
    "memory_search_diversity": (0.0, 0.4),
    "memory_search_topic_weight": (0.0, 0.1, 0.2, 0.3),
    "memory_search_absolute_weight": (0.0, 0.15, 0.3),
}
DATASETS = (*LOADERS, "short_facts")
INTERACTION_WEIGHTS = (0.0, 0.05, 0.2)
SAVE_MODES = ("plain", "context", "conversation_context")
SCORED = ("hit@5", "hit@10")  # what a floor may cost
OBJECTIVE = ("hit@1", "hit@5", "hit@10")  # what a lever is chosen by
DEPTH = 10
FEATURE_DEPTH = 20  # results per query the calibration learns from
# 0 .. 0.3 by 0.01, then by 0.05 to 0.95
FLOOR_GRID = (*(round(0.01 * i, 2) for i in range(31)), *(round(0.05 * i, 2) for i in range(7, 20)))
FLOOR_COST = 0.01  # the most hit@5 a default floor may cost the tuning folds
OFF_TOPIC_PER_USER = 40  # off-topic questions asked of each user


@dataclass(frozen=True)
class Fold:
    """One conversation (LoCoMo) or user (MADial), in one save mode."""

    dataset: str
    conversation: str
    mode: str

    @property
    def user_id(self) -> str:
        return f"{self.mode}-{self.conversation}"


@dataclass
class QueryRow:
    fold: Fold
    metrics: dict[str, float]
    # (is an answer, cosine margin over the background, term coverage, topic match, the query names a topic)
    # of the top FEATURE_DEPTH results
    results: list[tuple[bool, float, float, float, float]] = field(default_factory=list)
    top5: tuple[str, ...] = ()
    kind: str = "on_topic"  # or the off-topic kind: other, never_mentioned, out_of_domain


def new_memory(memory: BenchMemory, mode: str, previous: BenchMemory | None) -> Any:
    """A memory as a client saving in `mode` sends it."""
    from agent_memory.domain.models import MemoryType, NewMemory

    same_session = previous is not None and previous.conversation_id == memory.conversation_id
    context = previous.content if same_session and previous is not None and mode != "plain" else None
    return NewMemory(memory_type=MemoryType(memory.memory_type), content=memory.content, created_at=memory.created_at,
                     context=context,
                     conversation_id=memory.conversation_id if mode == "conversation_context" else None)


def import_user(services: Any, user: Any, bench_user: BenchUser, mode: str) -> dict[str, frozenset[str]]:
    """Saves in batches of 100; memory key -> the source ids it stands for (identical content is stored once)."""
    sources: dict[str, set[str]] = {}
    memories = bench_user.memories
    for start in range(0, len(memories), 100):
        part = memories[start:start + 100]
        batch = [new_memory(m, mode, memories[start + i - 1] if start + i > 0 else None) for i, m in enumerate(part)]
        for memory, result in zip(part, services.save.save_batch(user, batch), strict=True):
            sources.setdefault(result.memory.memory_key, set()).add(memory.source_id)
    return {key: frozenset(ids) for key, ids in sources.items()}


# --- choosing ------------------------------------------------------------------------------------


def mean_by_dataset(rows: Sequence[QueryRow], folds: set[Fold], metrics: Sequence[str] = SCORED
                    ) -> dict[str, dict[str, float]]:
    """Mean metrics per dataset and save mode ("locomo/plain") over the queries of the given folds."""
    groups: dict[str, list[dict[str, float]]] = {}
    for row in rows:
        if row.fold in folds:
            groups.setdefault(f"{row.fold.dataset}/{row.fold.mode}", []).append(row.metrics)
    return {name: {m: round(statistics.fmean(r[m] for r in group), 4) for m in metrics}
            for name, group in sorted(groups.items())}


def objective(rows: Sequence[QueryRow], folds: set[Fold]) -> float:
    """The mean over datasets of the scored metrics, each dataset's save modes averaged first: every dataset
    counts the same, whatever its size or number of save modes."""
    by_dataset: dict[str, list[float]] = {}
    for name, scores in mean_by_dataset(rows, folds, OBJECTIVE).items():
        by_dataset.setdefault(name.split("/")[0], []).append(statistics.fmean(scores[m] for m in OBJECTIVE))
    return statistics.fmean(statistics.fmean(v) for v in by_dataset.values())


def conversation_folds(rows: Sequence[QueryRow]) -> dict[tuple[str, str], set[Fold]]:
    """(dataset, conversation) -> its folds in every save mode: what one held-out step leaves out."""
    grouped: dict[tuple[str, str], set[Fold]] = {}
    for row in rows:
        grouped.setdefault((row.fold.dataset, row.fold.conversation), set()).add(row.fold)
    return grouped


def choose[K](results: dict[K, Sequence[QueryRow]], folds: set[Fold]) -> K:
    """The option with the best objective on the folds; the first in order on a tie."""
    best, best_score = None, -1.0
    for option, rows in results.items():
        score = objective(rows, folds)
        if score > best_score + 1e-12:
            best, best_score = option, score
    assert best is not None
    return best


def leave_one_out[K](results: dict[K, Sequence[QueryRow]]) -> dict[str, Any]:
    """Each conversation held out in turn: the option chosen on the others, its figures on the held-out one;
    the default is the option most held-out steps chose (the first in order on a tie)."""
    everything = next(iter(results.values()))
    groups = conversation_folds(everything)
    all_folds = set().union(*groups.values())
    steps, chosen_rows = [], []
    for (dataset, conversation), held in sorted(groups.items()):
        chosen = choose(results, all_folds - held)
        steps.append({"held_out": f"{dataset}/{conversation}", "chosen": chosen})
        chosen_rows.extend(r for r in results[chosen] if r.fold in held)
    votes = Counter(step["chosen"] for step in steps)
    order = list(results)
    default = max(votes, key=lambda option: (votes[option], -order.index(option)))
    return {"steps": steps, "default": default,
            "held_out": mean_by_dataset(chosen_rows, all_folds, ("hit@1", "hit@5", "hit@10", "mrr@10")),
            # every option over every fold (in-sample: what the choice weighed, not a figure to quote)
            "options": {str(option): mean_by_dataset(rows, all_folds, ("hit@1", "hit@5", "hit@10"))
                        for option, rows in results.items()},
            "held_out_spread": spread(chosen_rows),
            "baseline_off": mean_by_dataset(results[order[0]], all_folds)}


def spread(rows: Sequence[QueryRow]) -> dict[str, dict[str, float]]:
    """Per dataset and save mode: the lowest and highest conversation's hit@5."""
    per: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        per.setdefault(f"{row.fold.dataset}/{row.fold.mode}", {}).setdefault(row.fold.conversation, []).append(
            row.metrics["hit@5"])
    return {name: {"min_hit@5": round(min(statistics.fmean(v) for v in convs.values()), 4),
                   "max_hit@5": round(max(statistics.fmean(v) for v in convs.values()), 4)}
            for name, convs in sorted(per.items())}


# --- the calibration and its floor ---------------------------------------------------------------


def floored_metrics(row: QueryRow, calibration: Any, floor: float) -> dict[str, float]:
    """hit@5 and hit@10 when results under the floor are left out of the floor-free ranking."""
    kept = [answer for answer, *features in row.results if calibration.score(*features) >= floor]
    return {f"hit@{k}": 1.0 if any(kept[:k]) else 0.0 for k in (5, 10)}


def empty_share(off_topic: Sequence[QueryRow], calibration: Any, floor: float) -> float:
    """The share of off-topic queries with no result at or over the floor."""
    if not off_topic:
        return 0.0
    return statistics.fmean(
        0.0 if any(calibration.score(*features) >= floor for _, *features in row.results) else 1.0
        for row in off_topic)


def calibrate(rows: Sequence[QueryRow], off_topic: Sequence[QueryRow], *, negatives: str = "off_topic"
              ) -> dict[str, Any]:
    """Leave one conversation out: fit on the others, choose the floor on them, report on the held-out one.
    `negatives`: what an answer is told from: `off_topic` (the results of another conversation's questions:
    what a floor is for) or `all` (those and the other results of its own question)."""
    from agent_memory.domain.search.relevance import fit_calibration

    def fitted(folds: set[Fold]) -> Any:
        own = [r for r in rows if r.fold in folds]
        results = [result for r in own for result in r.results if result[0] or negatives == "all"]
        results += [result for r in off_topic if r.fold in folds for result in r.results]
        return fit_calibration([features for _, *features in results], [answer for answer, *_ in results])

    def floor_for(calibration: Any, folds: set[Fold]) -> float:
        """The highest floor that costs no dataset's tuning folds more than FLOOR_COST of hit@5."""
        by_dataset: dict[str, list[QueryRow]] = {}
        for row in rows:
            if row.fold in folds:
                by_dataset.setdefault(row.fold.dataset, []).append(row)
        best = 0.0
        for floor in FLOOR_GRID:
            cost = max(statistics.fmean(r.metrics["hit@5"] - floored_metrics(r, calibration, floor)["hit@5"]
                                        for r in tuning) for tuning in by_dataset.values())
            if cost <= FLOOR_COST:
                best = floor
        return best

    groups = conversation_folds(rows)
    all_folds = set().union(*groups.values())
    steps, floors = [], []
    held_rows: list[tuple[QueryRow, dict[str, float]]] = []
    held_off: list[tuple[QueryRow, bool]] = []
    for (dataset, conversation), held in sorted(groups.items()):
        tuning = all_folds - held
        calibration = fitted(tuning)
        floor = floor_for(calibration, tuning)
        floors.append(floor)
        steps.append({"held_out": f"{dataset}/{conversation}", "calibration": calibration.__dict__, "floor": floor})
        held_rows.extend((r, floored_metrics(r, calibration, floor)) for r in rows if r.fold in held)
        held_off.extend((r, empty_share([r], calibration, floor) == 1.0) for r in off_topic if r.fold in held)
    by_name: dict[str, dict[str, list[float]]] = {}
    for row, floored in held_rows:
        cell = by_name.setdefault(f"{row.fold.dataset}/{row.fold.mode}", {})
        for metric in SCORED:
            cell.setdefault(metric, []).append(floored[metric])
            cell.setdefault(f"{metric} no floor", []).append(row.metrics[metric])
    for row, empty in held_off:
        cell = by_name.setdefault(f"{row.fold.dataset}/{row.fold.mode}", {})
        for name in ("off_topic_empty", f"empty {row.kind}"):
            cell.setdefault(name, []).append(float(empty))
    overall = fitted(all_folds)
    return {"negatives": negatives, "steps": steps, "calibration": overall.__dict__,
            "floor": Counter(floors).most_common(1)[0][0] if floors else 0.0,
            "held_out": {name: {m: round(statistics.fmean(v), 4) for m, v in cells.items()}
                         for name, cells in sorted(by_name.items())}}


# --- running -------------------------------------------------------------------------------------


class DocumentCache:
    """An embedder that embeds each distinct memory text once: the save modes store the same texts."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._vectors: dict[str, Any] = {}

    def embed_documents(self, texts: Sequence[str]) -> list[Any]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            self._vectors.update(zip(missing, self._inner.embed_documents(missing), strict=True))
        return [self._vectors[t] for t in texts]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class UsageOverlay:
    """A search index whose candidates carry access statistics kept here: a long-standing user's history,
    current at every search, without touching the shared table between settings."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._counts: Counter[tuple[str, str]] = Counter()
        self._last: dict[tuple[str, str], datetime] = {}

    def record(self, user: Any, keys: list[str]) -> None:
        now = datetime.now(UTC)
        for key in keys:
            self._counts[(user.user_id, key)] += 1
            self._last[(user.user_id, key)] = now

    def candidates(self, user: Any, query: Any) -> list[Any]:
        found = self._inner.candidates(user, query)
        for candidate in found:
            slot = (user.user_id, candidate.memory.memory_key)
            if slot in self._counts:
                candidate.memory = candidate.memory.model_copy(update={
                    "access_count": self._counts[slot], "last_accessed_at": self._last[slot]})
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@dataclass
class Bench:
    services_for: Callable[..., Any]
    embedder: Any
    users: list[tuple[Fold, BenchUser, Any, dict[str, frozenset[str]]]]
    out_of_domain: list[str] = field(default_factory=list)  # asked of every user without unanswerable questions

    def run(self, search: Any, *, features: bool = False, passes: int = 1,
            questions: Callable[[Fold, BenchUser], Sequence[Any]] | None = None) -> list[list[QueryRow]]:
        """Every fold's questions, in order, `passes` times over: each pass's rows."""
        from agent_memory.api.search import SearchRequest, search_memories

        out: list[list[QueryRow]] = [[] for _ in range(passes)]
        for number in range(passes):
            for fold, bench_user, user, sources in self.users:
                for query in (questions(fold, bench_user) if questions else bench_user.queries):
                    text = fit_query(query.text)
                    output = search_memories(search, user, SearchRequest(query=text, search_mode="hybrid",
                                                               limit=FEATURE_DEPTH if features else DEPTH,
                                                               min_relevance_score=0.0))
                    ranked = [sources.get(r.memory_key, frozenset()) for r in output.results]
                    row = QueryRow(fold, ranking_metrics(ranked[:DEPTH], query.relevant or {"-"}),
                                   top5=tuple(r.memory_key for r in output.results[:5]),
                                   kind=query.category if questions else "on_topic")
                    if features:
                        row.results = self._features(search, user, text, output.results, ranked, query.relevant)
                    out[number].append(row)
        return out

    def _features(self, search: Any, user: Any, text: str, results: Sequence[Any], ranked: Sequence[frozenset[str]],
                  relevant: frozenset[str]) -> list[tuple[bool, float, float]]:
        import numpy as np

        from agent_memory.domain.text.topics import topics_of

        vectors = search._index.vectors(user, [r.memory_key for r in results])
        query = np.asarray(self.embedder.embed_query(text))
        background = search._background(self.embedder, query)
        topical = 1.0 if topics_of(text) else 0.0
        return [(bool(ids & relevant),
                 float(vectors[r.memory_key] @ query) - background if r.memory_key in vectors else -1.0,
                 r.score_breakdown.term_coverage, r.score_breakdown.topic, topical)
                for r, ids in zip(results, ranked, strict=True)]


def off_topic_questions(users: Sequence[tuple[Fold, BenchUser, Any, Any]], out_of_domain: Sequence[str] = ()
                        ) -> Callable[[Fold, BenchUser], list[Any]]:
    """Another conversation's questions (the next one of the same dataset), asked of this user (`other`); the
    user's own unanswerable questions (a short-fact user's `never_mentioned` and `out_of_domain` ones); and for
    every other user the `out_of_domain` queries."""
    from benchmarks.datasets import BenchQuery

    by_dataset: dict[str, list[BenchUser]] = {}
    for fold, bench_user, _, _ in users:
        if bench_user not in by_dataset.setdefault(fold.dataset, []):
            by_dataset[fold.dataset].append(bench_user)

    def questions(fold: Fold, bench_user: BenchUser) -> list[Any]:
        others = by_dataset[fold.dataset]
        other = others[(others.index(bench_user) + 1) % len(others)]
        step = max(1, len(other.queries) // OFF_TOPIC_PER_USER)
        asked = [BenchQuery(q.query_id, q.text, frozenset(), "other")
                 for q in other.queries[::step][:OFF_TOPIC_PER_USER]]
        if bench_user.unanswerable:
            return asked + list(bench_user.unanswerable)
        return asked + [BenchQuery(f"ood{i}", text, frozenset(), "out_of_domain")
                        for i, text in enumerate(out_of_domain)]

    return questions


def changed_top5(first: Sequence[QueryRow], second: Sequence[QueryRow]) -> int:
    return sum(1 for a, b in zip(first, second, strict=True) if set(a.top5) != set(b.top5))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(DATASETS), help=f"comma-separated, of: {', '.join(DATASETS)}")
    parser.add_argument("--levers", default=",".join(LEVERS),
                        help="the levers to vary (comma-separated); the others stay at their settings")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--modes", default=",".join(SAVE_MODES))
    parser.add_argument("--no-interaction", dest="interaction", action="store_false",
                        help="keep MEMORY_SEARCH_INTERACTION_WEIGHT at its setting (skips the three-pass usage runs)")
    parser.add_argument("--only-relevance", action="store_true",
                        help="only the calibration and its floor, at the current settings' levers")
    parser.add_argument("--refit", type=Path, metavar="JSON",
                        help="fit the calibration and its floor again from the result features of an earlier run")
    add_backend_argument(parser)
    parser.add_argument("--output", type=Path, default=RESULTS / "retrieval_cv.json")
    args = parser.parse_args(argv)
    if args.refit:
        on_topic, off_topic = features_from_json(json.loads(args.refit.read_text(encoding="utf-8")))
        relevance = {n: calibrate(on_topic, off_topic, negatives=n) for n in ("off_topic", "all")}
        print(format_report({"relevance": relevance}))
        return
    offline_aws_credentials()
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if unknown := [n for n in names if n not in DATASETS]:
        parser.error(f"unknown dataset: {', '.join(unknown)}")
    varied = {name: LEVERS[name] for name in (n.strip() for n in args.levers.split(",")) if name}
    try:
        datasets = [dev_set(name, args.limit_conversations) for name in names]
    except OSError as error:
        sys.exit(f"benchmark data not found ({error}); set BENCH_DATA_DIR")

    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.adapters.embeddings.query_cache import QueryCachingEmbedder
    from agent_memory.bootstrap.services import build_services
    from agent_memory.domain.models import ScopeRef
    from agent_memory.settings import Settings
    from local.template import create_tables

    settings = Settings(memory_table_name="bench-retrieval-cv", search_access_refresh_seconds=0.0)
    inner = build_embedder(settings)
    embedder = DocumentCache(QueryCachingEmbedder(inner, max_queries=100_000)) if inner is not None else None
    started = time.perf_counter()
    report: dict[str, Any] = {}
    with dynamodb_client(args.backend) as client:
        create_tables(client, {"MemoryTable": settings.memory_table_name})
        services = build_services(settings, dynamodb_client=client, embedder=embedder)
        users = []
        for dataset in datasets:
            for bench_user in progress(dataset.users, desc=f"{dataset.name}: import", unit="user"):
                for mode in (modes if dataset.name == "locomo" else ("plain",)):
                    fold = Fold(dataset.name, bench_user.user_id, mode)
                    user = ScopeRef(tenant_id=TENANT, user_id=fold.user_id)
                    users.append((fold, bench_user, user, import_user(services, user, bench_user, mode)))
        import_s = time.perf_counter() - started
        bench = Bench(lambda **kw: build_services(settings.model_copy(update=kw), dynamodb_client=client,
                                                  embedder=embedder), embedder, users,
                      out_of_domain=[q.text for d in datasets for u in d.users for q in u.unanswerable
                                     if q.category == "out_of_domain"])

        if args.only_relevance:
            on_topic, off_topic = relevance_features(bench, bench.services_for().search, users)
            report["relevance"] = {n: calibrate(on_topic, off_topic, negatives=n) for n in ("off_topic", "all")}
            report["features"] = features_json(on_topic, off_topic)
            return finish(args, report, datasets, modes, started, import_s)
        levers: dict[tuple[float, ...], list[QueryRow]] = {}
        for combination in progress(list(itertools.product(*varied.values())), desc="levers", unit="setting"):
            search = bench.services_for(**dict(zip(varied, combination, strict=True))).search
            levers[combination] = bench.run(search)[0]
        lever_report = leave_one_out(levers)
        chosen = dict(zip(varied, lever_report["default"], strict=True))
        report["levers"] = {**lever_report, "default": chosen,
                            "steps": [{**s, "chosen": dict(zip(varied, s["chosen"], strict=True))}
                                      for s in lever_report["steps"]]}

        usage: dict[float, list[QueryRow]] = {}
        stability: dict[str, Any] = {}
        weights = INTERACTION_WEIGHTS if args.interaction else (settings.memory_search_interaction_weight,)
        for weight in progress(weights, desc="interaction weights", unit="weight"):
            varied = bench.services_for(**chosen, memory_search_interaction_weight=weight)
            overlay = UsageOverlay(varied.search._index)
            varied.search._index, varied.search._on_access = overlay, overlay.record
            fresh, long_standing, third = bench.run(varied.search, passes=3)
            usage[weight] = long_standing
            stability[str(weight)] = {"fresh": mean_by_dataset(fresh, {r.fold for r in fresh}),
                                      "long_standing": mean_by_dataset(long_standing, {r.fold for r in fresh}),
                                      "top5_changed_1_2": changed_top5(fresh, long_standing),
                                      "top5_changed_2_3": changed_top5(long_standing, third),
                                      "questions": len(fresh)}
        usage_report = leave_one_out(usage)
        report["interaction"] = {**usage_report, "passes": stability}

        search = bench.services_for(**chosen, memory_search_interaction_weight=usage_report["default"]).search
        on_topic, off_topic = relevance_features(bench, search, users)
        report["relevance"] = {n: calibrate(on_topic, off_topic, negatives=n) for n in ("off_topic", "all")}
        report["features"] = features_json(on_topic, off_topic)
    finish(args, report, datasets, modes, started, import_s)


def dev_set(name: str, limit: int | None) -> BenchDataset:
    """A dev set by name: the short facts' dev split, or a retrieval benchmark's (the limit is its conversations)."""
    return load_short_facts(split="dev", limit_users=limit) if name == "short_facts" else load(
        name, limit_conversations=limit)


def relevance_features(bench: Bench, search: Any, users: Sequence[Any]) -> tuple[list[QueryRow], list[QueryRow]]:
    """Each fold's questions and off-topic ones, with the features (QueryRow.results) of their top results."""
    return (bench.run(search, features=True)[0],
            bench.run(search, features=True, questions=off_topic_questions(users, bench.out_of_domain))[0])


def features_json(on_topic: Sequence[QueryRow], off_topic: Sequence[QueryRow]) -> dict[str, Any]:
    """Every query's result features, so that another calibration can be fitted without a rerun."""
    return {kind: [[r.fold.dataset, r.fold.conversation, r.fold.mode, r.metrics, r.results, r.kind] for r in rows]
            for kind, rows in (("on_topic", on_topic), ("off_topic", off_topic))}


def features_from_json(saved: dict[str, Any]) -> tuple[list[QueryRow], list[QueryRow]]:
    """The rows `features_json` wrote."""
    features = saved["report"]["features"]
    return tuple(  # type: ignore[return-value]
        [QueryRow(Fold(dataset, conversation, mode), metrics, results=[tuple(r) for r in results], kind=row_kind)
         for dataset, conversation, mode, metrics, results, row_kind in features[kind]]
        for kind in ("on_topic", "off_topic"))


def varied_levers(args: Any) -> dict[str, tuple[float, ...]]:
    names = [n.strip() for n in getattr(args, "levers", ",".join(LEVERS)).split(",") if n.strip()]
    return {name: LEVERS[name] for name in names}


def finish(args: Any, report: dict[str, Any], datasets: Sequence[Any], modes: Sequence[str], started: float,
           import_s: float) -> None:
    report["total_s"] = round(time.perf_counter() - started, 1)
    print(format_report(report), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "measured_at": datetime.now(UTC).isoformat(), "machine": machine_info(), "backend": args.backend,
        "datasets": {d.name: d.sizes() for d in datasets}, "save_modes": modes, "levers": varied_levers(args),
        "interaction_weights": INTERACTION_WEIGHTS, "scored": SCORED, "import_s": round(import_s, 1),
        "report": report,
    }, ensure_ascii=False, default=str))
    print(f"\nwrote {args.output}")


def format_report(report: dict[str, Any]) -> str:
    lines = ["", "leave one conversation out (choose on the others, report on the one left out):"]
    if "levers" in report:
        lines += _lever_lines(report)
    for negatives, relevance in report["relevance"].items():
        lines += ["", f"3. absolute relevance and its default floor (an answer told from {negatives} results)",
                  f"  calibration on all dev: {relevance['calibration']}; default floor {relevance['floor']}"]
        for step in relevance["steps"]:
            lines.append(f"  held out {step['held_out']:<18} floor {step['floor']}  {step['calibration']}")
        lines.append("  held out: hit@5 / hit@10 at the floor (without it); off-topic queries answered with nothing")
        for name, row in relevance["held_out"].items():
            kinds = "  ".join(f"{k.removeprefix('empty ')} {v:.1%}" for k, v in row.items() if k.startswith("empty "))
            lines.append(f"    {name:<28} {row.get('hit@5', 0):.3f}/{row.get('hit@10', 0):.3f} "
                         f"({row.get('hit@5 no floor', 0):.3f}/{row.get('hit@10 no floor', 0):.3f})  "
                         f"off-topic empty: {kinds}")
    return "\n".join(lines)


def _lever_lines(report: dict[str, Any]) -> list[str]:
    lines = ["", "1. search levers"]
    for step in report["levers"]["steps"]:
        lines.append(f"  held out {step['held_out']:<18} chose {step['chosen']}")
    lines.append(f"  default (the most chosen): {report['levers']['default']}")
    lines.append("  every option, all folds (in-sample): hit@1 / hit@5 / hit@10")
    for option, cells in report["levers"].get("options", {}).items():
        lines.append(f"    {option}: " + "  ".join(f"{name} {c['hit@1']:.3f}/{c['hit@5']:.3f}/{c['hit@10']:.3f}"
                                              for name, c in cells.items()))
    lines.append(_table(report["levers"]["held_out"], report["levers"]["baseline_off"], "levers off"))
    usage = report["interaction"]
    lines += ["", "2. interaction weight, a user of long standing (second pass scored)"]
    for weight, row in usage["passes"].items():
        lines.append(f"  weight {weight:<5} top-5 sets changed: pass 1->2 {row['top5_changed_1_2']}, "
                     f"2->3 {row['top5_changed_2_3']} of {row['questions']}")
        for name, scores in row["long_standing"].items():
            fresh = row["fresh"][name]
            lines.append(f"    {name:<28} fresh {fresh['hit@5']:.3f}/{fresh['hit@10']:.3f}"
                         f"  long-standing {scores['hit@5']:.3f}/{scores['hit@10']:.3f}")
    lines.append(f"  default (the most chosen): {usage['default']}")
    return lines


def _table(held: dict[str, dict[str, float]], baseline: dict[str, dict[str, float]], label: str) -> str:
    rows = ["  held out, pooled:   hit@1   hit@5  hit@10  mrr@10   (" + label + ": hit@5 / hit@10)"]
    for name, row in held.items():
        base = baseline.get(name, {})
        rows.append(f"    {name:<28} {row['hit@1']:.3f}  {row['hit@5']:.3f}  {row['hit@10']:.3f}  {row['mrr@10']:.3f}"
                    f"   ({base.get('hit@5', 0):.3f} / {base.get('hit@10', 0):.3f})")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
