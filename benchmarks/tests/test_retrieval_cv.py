"""The leave-one-conversation-out validation that chooses the search defaults, on hand-made per-query results."""

from __future__ import annotations

from agent_memory.domain.search.relevance import RelevanceCalibration
from benchmarks.retrieval_cv import (
    Fold,
    QueryRow,
    calibrate,
    changed_top5,
    choose,
    floored_metrics,
    leave_one_out,
    objective,
)


def rows(hits: dict[str, tuple[float, float]], dataset: str = "d", mode: str = "plain") -> list[QueryRow]:
    """One query per conversation: conversation -> (hit@5, hit@10)."""
    return [QueryRow(Fold(dataset, conv, mode), {"hit@1": h5, "hit@5": h5, "hit@10": h10, "mrr@10": h5})
            for conv, (h5, h10) in hits.items()]


def every(rows_: list[QueryRow]) -> set[Fold]:
    return {r.fold for r in rows_}


def test_objective_weighs_every_dataset_the_same_whatever_its_size_and_number_of_save_modes():
    data = rows({"a": (1, 1), "b": (1, 1), "c": (1, 1)}, "big") + rows({"a": (1, 1)}, "big", "context") \
        + rows({"x": (0, 0)}, "small")
    assert objective(data, every(data)) == 0.5


def test_the_first_option_wins_a_tie():
    results = {0.0: rows({"a": (1, 1), "b": (0, 0)}), 0.5: rows({"a": (0, 0), "b": (1, 1)})}
    assert choose(results, every(results[0.0])) == 0.0


def test_each_conversation_is_reported_under_the_choice_made_without_it():
    # Option 1 is better on a and b, worse on c: held out a or b, the others still prefer it; held out c,
    # a and b choose it too, and c is reported under it (its worse figure).
    results = {0: rows({"a": (0, 0), "b": (0, 0), "c": (1, 1)}), 1: rows({"a": (1, 1), "b": (1, 1), "c": (0, 0)})}

    report = leave_one_out(results)

    assert [s["chosen"] for s in report["steps"]] == [0, 0, 1]  # held out a: b (1) vs c (0) ties, first wins
    assert report["default"] == 0
    assert report["held_out"]["d/plain"]["hit@5"] == 0.0  # a and b under 0, c under 1


def test_a_conversation_is_left_out_in_every_save_mode_at_once():
    results = {0: rows({"a": (0, 0), "b": (1, 1)}) + rows({"a": (1, 1), "b": (1, 1)}, mode="context"),
               1: rows({"a": (1, 1), "b": (0, 0)}) + rows({"a": (0, 0), "b": (0, 0)}, mode="context")}
    steps = leave_one_out(results)["steps"]
    assert [s["held_out"] for s in steps] == ["d/a", "d/b"]
    assert [s["chosen"] for s in steps] == [0, 0]


def test_a_floor_leaves_results_under_it_out_of_the_ranking():
    calibration = RelevanceCalibration(cosine_weight=10, keyword_weight=0, bias=-8)  # 0.5 at cosine 0.8
    row = QueryRow(Fold("d", "a", "plain"), {"hit@5": 1, "hit@10": 1},
                   results=[(False, 0.9, 0), (True, 0.7, 0), (False, 0.85, 0)])
    assert floored_metrics(row, calibration, 0.0) == {"hit@5": 1.0, "hit@10": 1.0}
    assert floored_metrics(row, calibration, 0.5) == {"hit@5": 0.0, "hit@10": 0.0}


def _three_conversations(answer, off_topic_kinds):
    """Ten questions in each of three conversations: an answered one (`answer(i)`: its results) and, per
    (kind, results(i)) of `off_topic_kinds`, one off-topic question of that kind."""
    on_topic, off_topic = [], []
    for conv in ("a", "b", "c"):
        fold = Fold("d", conv, "plain")
        for i in range(10):
            on_topic.append(QueryRow(fold, {"hit@5": 1.0, "hit@10": 1.0}, results=answer(i)))
            off_topic += [QueryRow(fold, {"hit@5": 0.0, "hit@10": 0.0}, kind=kind, results=results(i))
                          for kind, results in off_topic_kinds]
    return on_topic, off_topic


def test_calibration_separates_answers_from_off_topic_results_and_reports_held_out_folds():
    on_topic, off_topic = _three_conversations(
        lambda i: [(True, 0.85 + i / 1000, 0.5), (False, 0.8, 0.1)],
        [("other", lambda i: [(False, 0.7 + i / 1000, 0.0), (False, 0.68, 0.0)])])

    report = calibrate(on_topic, off_topic)

    assert report["calibration"]["cosine_weight"] > 0
    held = report["held_out"]["d/plain"]
    assert held["hit@5"] == 1.0 and held["off_topic_empty"] == 1.0


def test_changed_top5_compares_sets_not_order():
    fold = Fold("d", "a", "plain")
    first = [QueryRow(fold, {}, top5=("x", "y")), QueryRow(fold, {}, top5=("x", "y"))]
    second = [QueryRow(fold, {}, top5=("y", "x")), QueryRow(fold, {}, top5=("x", "z"))]
    assert changed_top5(first, second) == 1


def test_off_topic_queries_are_another_conversations_the_users_own_unanswerable_and_out_of_domain_ones():
    from benchmarks.datasets import BenchQuery, BenchUser
    from benchmarks.retrieval_cv import off_topic_questions

    transcript = [BenchUser("c1", queries=[BenchQuery("q1", "when did Caroline move?", frozenset({"d1"}))]),
                  BenchUser("c2", queries=[BenchQuery("q2", "what does Mel paint?", frozenset({"d2"}))])]
    short = BenchUser("sf-1", queries=[BenchQuery("s1", "where does she live?", frozenset({"m1"}))],
                      unanswerable=[BenchQuery("n1", "what's her blood type?", frozenset(), "never_mentioned")])
    users = [(Fold("locomo", u.user_id, "plain"), u, None, {}) for u in transcript] + [
        (Fold("short_facts", "sf-1", "plain"), short, None, {})]

    questions = off_topic_questions(users, ["notes on the Krebs cycle"])

    asked = questions(users[0][0], transcript[0])
    assert [(q.text, q.category) for q in asked] == [("what does Mel paint?", "other"),
                                                     ("notes on the Krebs cycle", "out_of_domain")]
    assert all(not q.relevant for q in asked)
    own = questions(users[2][0], short)
    assert [(q.text, q.category) for q in own] == [("where does she live?", "other"),
                                                   ("what's her blood type?", "never_mentioned")]


def test_the_held_out_report_counts_each_off_topic_kind_apart():
    on_topic, off_topic = _three_conversations(
        lambda i: [(True, 0.85 + i / 1000, 0.5, 1.0, 1.0), (False, 0.8, 0.1, 0.0, 1.0)],
        [("out_of_domain", lambda i: [(False, 0.6 + i / 1000, 0.0, 0.0, 0.0)]),
         ("never_mentioned", lambda i: [(False, 0.85 + i / 1000, 0.5, 1.0, 1.0)])])  # as close as an answer

    held = calibrate(on_topic, off_topic)["held_out"]["d/plain"]

    assert held["empty out_of_domain"] == 1.0 and held["empty never_mentioned"] == 0.0
    assert held["off_topic_empty"] == 0.5
