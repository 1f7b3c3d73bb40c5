"""The agent-loop benchmark's figures: per-call rows and the ratios to the warm call."""

from __future__ import annotations

from benchmarks.agent_loop import Call, Samples, ratio


def test_a_row_gives_the_median_the_95th_percentile_and_the_median_read_units():
    samples = Samples()
    for ms, units in ((10.0, 1.0), (30.0, 2.0), (20.0, 1.0)):
        samples.add("search, warm", Call(ms, units, {}))

    assert samples.row("search, warm") == {"runs": 3, "p50_ms": 20.0, "p95_ms": 30.0, "read_units_p50": 1.0}
    assert samples.row("never called") == {}


def test_a_ratio_is_of_the_same_percentile_and_none_when_either_call_is_missing():
    rows = {"after": {"p50_ms": 30.0}, "warm": {"p50_ms": 20.0}}

    assert ratio(rows, "after", "warm", "p50_ms") == 1.5
    assert ratio(rows, "after", "missing", "p50_ms") is None
