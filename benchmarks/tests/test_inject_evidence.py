"""The inject benchmark's evidence part, pure: summaries, the share's cross-validation, tables, the plot."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pytest

from benchmarks.inject import CachingEmbedder, _shares
from benchmarks.inject_evidence import (
    BEFORE,
    choose_share,
    cross_validate,
    folds,
    format_curve,
    format_folds,
    plot_curve,
    summarize,
)


def record(conversation: str, hit: bool, injected: int, full: int = 10_000,
           every: bool | None = None) -> dict[str, Any]:
    return {"conversation": conversation, "any": hit, "all": hit if every is None else every, "injected": injected,
            "memory_tokens": injected - 100, "full": full, "ms": 10.0}


def test_summarize_averages_the_per_question_ratio():
    rows = [record("c1", True, 500, full=10_000), record("c2", False, 300, full=20_000, every=False)]
    summary = summarize(rows)
    assert summary["evidence_any"] == 0.5 and summary["evidence_all"] == 0.5
    assert summary["injected_tokens"] == 400 and summary["injected_over_full"] == 0.0325  # (5% + 1.5%) / 2
    with pytest.raises(ValueError):
        summarize([])


def test_choose_share_takes_the_most_evidence_within_the_token_target():
    summaries = {0.02: {"evidence_any": 0.78, "injected_over_full": 0.03},
                 0.04: {"evidence_any": 0.83, "injected_over_full": 0.046},
                 0.06: {"evidence_any": 0.86, "injected_over_full": 0.065}}
    assert choose_share(summaries) == 0.04
    assert choose_share(summaries, token_target=0.07) == 0.06
    assert choose_share(summaries, token_target=0.01) == 0.02  # none within: the smallest
    tie = {0.03: {"evidence_any": 0.8, "injected_over_full": 0.03}, 0.04: {"evidence_any": 0.8,
                                                                           "injected_over_full": 0.04}}
    assert choose_share(tie) == 0.03


def test_folds_leave_one_conversation_out():
    assert folds(["c2", "c1", "c1"]) == [({"c2"}, {"c1"}), ({"c1"}, {"c2"})]


def test_each_conversation_is_reported_under_the_share_chosen_on_the_others():
    # c1 and c3 afford the larger share within 5%; c2 does not
    records = {
        0.02: [record("c1", False, 300), record("c2", True, 300), record("c3", False, 300)],
        0.04: [record("c1", True, 450), record("c2", True, 600), record("c3", True, 450)],
    }
    cv = cross_validate(records)
    by_held = {tuple(f["held_out"]): f for f in cv["folds"]}
    # without c1: c2 and c3 together inject (0.06 + 0.045) / 2 > 5% at 0.04: 0.02 is chosen
    assert by_held[("c1",)]["share"] == 0.02 and by_held[("c1",)]["held_out_result"]["evidence_any"] == 0.0
    assert by_held[("c2",)]["share"] == 0.04  # c1 and c3: within 5% and more evidence
    assert by_held[("c2",)]["held_out_result"]["injected_over_full"] == 0.06
    assert by_held[("c3",)]["share"] == 0.02
    assert cv["default"] == 0.02  # two of three folds
    assert cv["held_out_pooled"]["questions"] == 3
    assert "| c1, c3 | 0.04 |" in format_folds(cv)


def test_the_curve_table_shows_what_each_step_buys():
    rows = {BEFORE: summarize([record("c1", False, 700)]),
            "share 0.02": summarize([record("c1", False, 800), record("c1", True, 800)]),
            "share 0.04": summarize([record("c1", True, 1000), record("c1", True, 1000)])}
    table = format_curve(rows).splitlines()
    assert table[2].startswith("| before |") and table[2].endswith("| - |")
    assert table[4].endswith("| +25.00 pt |")  # +50 points of evidence for +200 tokens


def test_the_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    rows = {BEFORE: summarize([record("c1", False, 700)]), "share 0.02": summarize([record("c1", True, 800)]),
            "share 0.04": summarize([record("c1", True, 1000)])}
    path = plot_curve(rows, tmp_path / "curve.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_shares_are_parsed_sorted_and_bounded():
    assert _shares("0.04, 0.02,0.04") == (0.02, 0.04)
    for bad in ("", "0", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            _shares(bad)


class _Counting:
    model_id, dimension = "test/model:2", 2

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> Any:
        self.embedded += texts
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    def embed_query(self, text: str) -> Any:
        return np.array([0.0, 1.0], dtype=np.float32)


def test_the_document_memo_is_kept_on_disk_between_runs(tmp_path):
    first = _Counting()
    memo = CachingEmbedder(first, tmp_path)
    memo.embed_documents(["a", "bb", "a"])
    memo.save()

    second = _Counting()
    vectors = CachingEmbedder(second, tmp_path).embed_documents(["bb", "ccc"])

    assert first.embedded == ["a", "bb"] and second.embedded == ["ccc"]
    assert vectors.tolist() == [[2.0, 1.0], [3.0, 1.0]]
