"""The near-duplicate thresholds (MEMORY_DEDUP_MIN_COSINE, MEMORY_DEDUP_MIN_OVERLAP), chosen by cross-validation
on labelled pairs of memories, Chinese and English (tests/data/near_duplicates.jsonl).

Each pair is two memory texts and whether a save of the second should merge into the first: restatements
(subject, copula, case, punctuation, closing particles, contractions, light rephrasings) against memories on the
same topic that say something else (another value, a negation, another number or date, person, place or name).
Both texts are embedded by the bundled embedder as a save embeds them; the domain's rule
(`agent_memory.domain.lifecycle.duplicates.restates`) classifies each pair at every grid point.

Five folds, stratified by language and label. On each fold's training part the thresholds are the loosest that
keep precision at least 0.97 (the most recall; on a tie the higher precision, then the lower thresholds); the
figures to publish are the held-out ones, pooled over the folds. The defaults are chosen the same way on all the
pairs. The same is done with the words alone (cosine 0: what a deployment without embeddings would get).
Writes benchmarks/results/near_duplicates.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PAIRS = Path(__file__).resolve().parents[1] / "tests" / "data" / "near_duplicates.jsonl"
RESULTS = Path(__file__).resolve().parent / "results" / "near_duplicates.json"
FOLDS = 5
SEED = 7
MIN_PRECISION = 0.97
COSINES = (0.0, *(round(0.80 + 0.01 * i, 2) for i in range(20)))
OVERLAPS = tuple(round(0.05 * i, 2) for i in range(21))
FLOORS = (0.0, 0.9, 0.95, 0.97, 0.98)  # cosine floors shown beside the chosen overlap


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    duplicate: bool
    lang: str
    kind: str
    cosine: float


@dataclass(frozen=True)
class Score:
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def __add__(self, other: Score) -> Score:
        return Score(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)


def load_pairs(path: Path = PAIRS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def embedded(rows: list[dict[str, Any]]) -> list[Pair]:
    """Each pair with the cosine of its texts' embeddings (the bundled embedder, as a save embeds them)."""
    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.settings import Settings

    embedder = build_embedder(Settings(embedding_provider="local"))
    if embedder is None:
        raise SystemExit("the bundled embedder is not available")
    vectors = embedder.embed_documents([text for row in rows for text in (row["a"], row["b"])])
    return [Pair(row["a"], row["b"], bool(row["duplicate"]), row["lang"], row["kind"],
                 float(vectors[2 * i] @ vectors[2 * i + 1])) for i, row in enumerate(rows)]


def predict(pair: Pair, min_cosine: float, min_overlap: float) -> bool:
    from agent_memory.domain.lifecycle.duplicates import DuplicateRule, restates

    return restates(DuplicateRule(min_cosine=min_cosine, min_overlap=min_overlap), pair.first, pair.second,
                    pair.cosine)


def score(pairs: Sequence[Pair], min_cosine: float, min_overlap: float) -> Score:
    predicted = [(predict(p, min_cosine, min_overlap), p.duplicate) for p in pairs]
    return Score(tp=sum(1 for guess, truth in predicted if guess and truth),
                 fp=sum(1 for guess, truth in predicted if guess and not truth),
                 fn=sum(1 for guess, truth in predicted if not guess and truth))


def choose(pairs: Sequence[Pair], cosines: Sequence[float] = COSINES) -> tuple[float, float, Score]:
    """The loosest thresholds with precision >= MIN_PRECISION on `pairs`: the most recall, then the most
    precision, then the lowest thresholds."""
    best: tuple[tuple[float, float, float, float], float, float, Score] | None = None
    for min_cosine in cosines:
        for min_overlap in OVERLAPS:
            if min_cosine == 0 and min_overlap == 0:
                continue  # off
            found = score(pairs, min_cosine, min_overlap)
            if found.precision < MIN_PRECISION or found.tp == 0:
                continue
            key = (found.recall, found.precision, -min_cosine, -min_overlap)
            if best is None or key > best[0]:
                best = (key, min_cosine, min_overlap, found)
    if best is None:
        raise SystemExit(f"no thresholds reach precision {MIN_PRECISION}")
    return best[1], best[2], best[3]


def folds(pairs: Sequence[Pair]) -> list[list[int]]:
    """FOLDS folds of pair indexes, stratified by language and label."""
    rng = random.Random(SEED)
    assigned: list[list[int]] = [[] for _ in range(FOLDS)]
    strata: dict[tuple[str, bool], list[int]] = {}
    for i, pair in enumerate(pairs):
        strata.setdefault((pair.lang, pair.duplicate), []).append(i)
    offset = 0
    for key in sorted(strata):
        members = strata[key]
        rng.shuffle(members)
        for j, i in enumerate(members):
            assigned[(j + offset) % FOLDS].append(i)
        offset += len(members)
    return assigned


def cross_validate(pairs: Sequence[Pair], cosines: Sequence[float]) -> dict[str, Any]:
    rows, pooled = [], Score(0, 0, 0)
    for number, held in enumerate(folds(pairs), start=1):
        held_set = set(held)
        train = [p for i, p in enumerate(pairs) if i not in held_set]
        test = [pairs[i] for i in held]
        min_cosine, min_overlap, trained = choose(train, cosines)
        found = score(test, min_cosine, min_overlap)
        pooled += found
        rows.append({"fold": number, "min_cosine": min_cosine, "min_overlap": min_overlap,
                     "train_precision": round(trained.precision, 3), "train_recall": round(trained.recall, 3),
                     "held_out_pairs": len(test), "held_out_precision": round(found.precision, 3),
                     "held_out_recall": round(found.recall, 3), "tp": found.tp, "fp": found.fp, "fn": found.fn})
    return {"folds": rows, "held_out_precision": round(pooled.precision, 3),
            "held_out_recall": round(pooled.recall, 3), "tp": pooled.tp, "fp": pooled.fp, "fn": pooled.fn}


def quantiles(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {name: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)
            for name, q in (("min", 0.0), ("p10", 0.1), ("p50", 0.5), ("p90", 0.9), ("max", 1.0))}


def breakdown(pairs: Sequence[Pair], min_cosine: float, min_overlap: float) -> dict[str, Any]:
    """At the chosen thresholds, on all the pairs: by language, by kind, and the pairs it gets wrong."""
    by_lang = {lang: score([p for p in pairs if p.lang == lang], min_cosine, min_overlap)
               for lang in sorted({p.lang for p in pairs})}
    errors = [{"a": p.first, "b": p.second, "duplicate": p.duplicate, "kind": p.kind, "cosine": round(p.cosine, 3)}
              for p in pairs if predict(p, min_cosine, min_overlap) != p.duplicate]
    kinds = sorted({(p.duplicate, p.kind) for p in pairs})
    return {
        "by_language": {lang: {"precision": round(s.precision, 3), "recall": round(s.recall, 3)}
                        for lang, s in by_lang.items()},
        "by_kind": {f"{'duplicate' if dup else 'distinct'}/{kind}": {
            "pairs": sum(1 for p in pairs if p.duplicate == dup and p.kind == kind),
            "merged": sum(1 for p in pairs if p.duplicate == dup and p.kind == kind
                          and predict(p, min_cosine, min_overlap))} for dup, kind in kinds},
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    from agent_memory.domain.lifecycle.duplicates import DEFAULT_MIN_COSINE, DEFAULT_MIN_OVERLAP

    started = time.perf_counter()
    rows = load_pairs()
    pairs = embedded(rows)
    validated = cross_validate(pairs, COSINES)
    words_only = cross_validate(pairs, (0.0,))
    min_cosine, min_overlap, on_all = choose(pairs)
    result = {
        "pairs": len(pairs), "duplicates": sum(p.duplicate for p in pairs), "folds": FOLDS,
        "min_training_precision": MIN_PRECISION, "grid": {"min_cosine": COSINES, "min_overlap": OVERLAPS},
        "cross_validated": validated, "cross_validated_words_only": words_only,
        "chosen": {"min_cosine": min_cosine, "min_overlap": min_overlap, "precision": round(on_all.precision, 3),
                   "recall": round(on_all.recall, 3)},
        "cosine_floors": {f"{floor:.2f}": {"precision": round(found.precision, 3), "recall": round(found.recall, 3)}
                          for floor in FLOORS for found in [score(pairs, floor, min_overlap)]},
        "cosines": {"duplicates": quantiles([p.cosine for p in pairs if p.duplicate]),
                    "distinct": quantiles([p.cosine for p in pairs if not p.duplicate])},
        "defaults": {"min_cosine": DEFAULT_MIN_COSINE, "min_overlap": DEFAULT_MIN_OVERLAP},
        "at_defaults": breakdown(pairs, DEFAULT_MIN_COSINE, DEFAULT_MIN_OVERLAP),
        "seconds": round(time.perf_counter() - started, 1),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print_table(result)
    print(f"\nwrote {args.output}")
    return 0


def print_table(result: dict[str, Any]) -> None:
    print(f"{result['pairs']} labelled pairs ({result['duplicates']} duplicates), {result['folds']}-fold "
          f"cross-validation; thresholds chosen on each training part at precision >= {MIN_PRECISION}\n")
    print(f"{'fold':>4}  {'min_cosine':>10}  {'min_overlap':>11}  {'train P':>7}  {'train R':>7}  "
          f"{'held-out P':>10}  {'held-out R':>10}")
    for row in result["cross_validated"]["folds"]:
        print(f"{row['fold']:>4}  {row['min_cosine']:>10.2f}  {row['min_overlap']:>11.2f}  "
              f"{row['train_precision']:>7.3f}  {row['train_recall']:>7.3f}  {row['held_out_precision']:>10.3f}  "
              f"{row['held_out_recall']:>10.3f}")
    for label, key in (("pooled", "cross_validated"), ("words only", "cross_validated_words_only")):
        pooled = result[key]
        print(f"{label:>17}: held-out precision {pooled['held_out_precision']:.3f}, recall "
              f"{pooled['held_out_recall']:.3f} (tp {pooled['tp']}, fp {pooled['fp']}, fn {pooled['fn']})")
    chosen, defaults = result["chosen"], result["defaults"]
    print(f"\nchosen on all pairs: min_cosine {chosen['min_cosine']:.2f}, min_overlap {chosen['min_overlap']:.2f} "
          f"(precision {chosen['precision']:.3f}, recall {chosen['recall']:.3f})")
    same = chosen["min_cosine"] == defaults["min_cosine"] and chosen["min_overlap"] == defaults["min_overlap"]
    print(f"defaults in agent_memory.domain.lifecycle.duplicates: min_cosine {defaults['min_cosine']:.2f}, min_overlap "
          f"{defaults['min_overlap']:.2f}" + ("" if same else "  <- differ from the chosen values"))
    floors = ", ".join(f"{floor}: P {f['precision']:.3f} R {f['recall']:.3f}" for floor, f in
                       result["cosine_floors"].items())
    print(f"cosine floors at min_overlap {chosen['min_overlap']:.2f} (all pairs): {floors}")
    print(f"embeddings' cosine: restatements {result['cosines']['duplicates']}, "
          f"distinct {result['cosines']['distinct']}")
    at = result["at_defaults"]
    print("at the defaults, all pairs:")
    for lang, figures in at["by_language"].items():
        print(f"  {lang}: precision {figures['precision']:.3f}, recall {figures['recall']:.3f}")
    for error in at["errors"]:
        label = "missed" if error["duplicate"] else "merged"
        print(f"  {label} ({error['kind']}, cosine {error['cosine']:.3f}): {error['a']!r} / {error['b']!r}")


if __name__ == "__main__":
    sys.exit(main())
