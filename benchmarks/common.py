"""What every benchmark shares: percentiles and the realistic text corpus."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
