"""The soak's pure parts: the slope of RSS over time, the flat-RSS verdict, the texts it saves."""

from __future__ import annotations

import pytest

from benchmarks.soak import MAX_LAST_THIRD_GROWTH, MAX_SLOPE_MIB_PER_MIN, flatness, slope_per_minute, text_for


def samples(duration_s: float, rss_at: object, every_s: float = 10.0) -> list[tuple[float, float]]:
    return [(t, rss_at(t)) for t in (i * every_s for i in range(int(duration_s / every_s) + 1))]  # type: ignore[operator]


def test_slope_is_mib_per_minute_of_a_least_squares_fit():
    assert slope_per_minute([(0, 500), (60, 502), (120, 504)]) == pytest.approx(2.0)
    assert slope_per_minute([(0, 500), (60, 510), (120, 500)]) == pytest.approx(0.0)
    assert slope_per_minute([(30, 500)]) is None and slope_per_minute([(30, 500), (30, 600)]) is None


def test_given_growth_only_during_the_warm_up_then_rss_is_flat():
    # 400 -> 600 MiB over the first 10 of 30 minutes, then level with some noise.
    points = samples(1800, lambda t: 400 + 200 * min(t, 600) / 600 + (3 if int(t) % 20 else -3))
    verdict = flatness(points, 1800)
    assert verdict["flat"] is True and abs(verdict["slope_mib_per_min"]) < 0.5
    assert verdict["warmup_s"] == 600


def test_given_a_steady_climb_after_the_warm_up_then_rss_is_not_flat():
    # 539 -> 703 MiB in five minutes, still rising: about 33 MiB/min.
    points = samples(300, lambda t: 539 + 164 * t / 300)
    verdict = flatness(points, 300)
    assert verdict["flat"] is False and verdict["slope_mib_per_min"] > MAX_SLOPE_MIB_PER_MIN


def test_given_a_slow_climb_under_the_slope_bound_then_a_late_step_still_fails_the_thirds():
    points = samples(1800, lambda t: 600 + (60 if t > 1700 else 0))
    verdict = flatness(points, 1800)
    assert verdict["growth"] > MAX_LAST_THIRD_GROWTH and verdict["flat"] is False


def test_given_too_few_samples_per_third_then_no_verdict():
    verdict = flatness([(0, 500), (40, 500), (80, 500)], 90)
    assert verdict["flat"] is None and verdict["growth"] is None


def test_texts_run_through_the_corpus_then_repeat_with_a_round_number():
    texts = ["a", "b"]
    assert [text_for(texts, n) for n in range(5)] == ["a", "b", "a (round 2)", "b (round 2)", "a (round 3)"]
