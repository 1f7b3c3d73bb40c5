"""The cross-validation that chooses the search defaults, on hand-made per-query results."""

from __future__ import annotations

from benchmarks.retrieval_cv import LEVERS, QueryRow, agreed_default, choose, cross_validate, halves, objective


def rows(hits: dict[str, tuple[float, float]]) -> list[QueryRow]:
    """One query per user: user -> (hit@5, hit@10)."""
    return [QueryRow("d", user, {"hit@5": h5, "hit@10": h10}) for user, (h5, h10) in hits.items()]


def test_halves_alternate_over_sorted_users():
    assert halves(["c", "a", "b", "d", "a"]) == ({"a", "c"}, {"b", "d"})


def test_objective_weighs_every_dataset_the_same_whatever_its_size():
    scores = {"big": {"hit@5": 1.0, "hit@10": 1.0}, "small": {"hit@5": 0.0, "hit@10": 0.0}}
    assert objective(scores) == 0.5


def test_the_first_combination_wins_a_tie_and_a_better_one_wins_on_its_fold_only():
    fold = {"d": {"a", "c"}}
    results = {
        (0.0,): rows({"a": (0, 1), "b": (1, 1), "c": (0, 0), "d": (1, 1)}),
        (0.5,): rows({"a": (0, 1), "b": (0, 0), "c": (0, 0), "d": (0, 0)}),  # ties on a, c
        (1.0,): rows({"a": (1, 1), "b": (0, 0), "c": (1, 1), "d": (0, 0)}),
    }
    assert choose(dict(list(results.items())[:2]), fold) == (0.0,)
    assert choose(results, fold) == (1.0,)
    assert choose(results, {"d": {"b", "d"}}) == (0.0,)


def test_the_default_keeps_a_choice_both_folds_made_and_the_smaller_of_two_that_differ():
    assert agreed_default([(0.4, 0.5, 0.2), (0.45, 0.5, 0.0)]) == (0.4, 0.5, 0.0)


def test_cross_validation_reports_each_fold_on_the_half_it_did_not_tune_on():
    baseline = tuple(values[0] for values in LEVERS.values())
    better = tuple(values[1] for values in LEVERS.values())
    users = {"u1": (0, 0), "u2": (0, 0), "u3": (0, 0), "u4": (0, 0)}
    results = {combination: rows(users) for combination in [baseline, better]}
    results[better] = rows({"u1": (1, 1), "u2": (0, 1), "u3": (1, 1), "u4": (0, 0)})

    report = cross_validate(results)

    tuned_on_even, tuned_on_odd = report["folds"]
    assert tuned_on_even["tuned_on"] == {"d": ["u1", "u3"]}
    assert tuned_on_even["chosen"] == dict(zip(LEVERS, better, strict=True))
    assert tuned_on_even["held_out"]["d"] == {"hit@5": 0.0, "hit@10": 0.5}  # u2, u4
    assert tuned_on_odd["held_out"]["d"] == {"hit@5": 1.0, "hit@10": 1.0}  # u1, u3
    assert report["default"] == dict(zip(LEVERS, better, strict=True))
    assert report["all_dev_at_default"]["d"] == {"hit@5": 0.5, "hit@10": 0.75}
