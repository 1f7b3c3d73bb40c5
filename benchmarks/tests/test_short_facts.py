"""The short-fact benchmark's scoring: groups, directions and the empty share per unanswerable kind."""

from __future__ import annotations

from benchmarks.short_facts import format_table, summarize


def _row(direction: str, hit1: float, hit3: float) -> dict[str, object]:
    return {"id": "q", "direction": direction, "hit@1": hit1, "hit@3": hit3, "hit@1 no floor": hit1,
            "hit@3 no floor": 1.0, "shown": [(False, 0.45, 0.2), (True, 0.65, 0.9)]}


def test_summary_averages_per_pack_and_direction_and_counts_empty_answers_per_kind() -> None:
    users = {
        "a": {"group": "general/en", "questions": [_row("same_language", 1.0, 1.0), _row("cross_language", 0.0, 1.0)],
              "unanswerable": [{"kind": "never_mentioned", "empty": 1.0, "shown": []},
                               {"kind": "out_of_domain", "empty": 1.0, "shown": []}]},
        "b": {"group": "immigration/zh", "questions": [_row("same_language", 0.0, 0.0)],
              "unanswerable": [{"kind": "never_mentioned", "empty": 0.0, "shown": [(False, 0.55, 0.1)]}]},
    }
    summary = summarize(users)
    assert summary["all"]["hit@1"] == round(1 / 3, 4) and summary["all"]["questions"] == 3
    assert summary["same_language"]["hit@3"] == 0.5
    assert summary["cross_language"]["hit@1"] == 0.0
    assert summary["general/en"]["hit@3"] == 1.0 and summary["immigration/zh"]["hit@3 no floor"] == 1.0
    assert summary["unanswerable"] == {"never_mentioned": 0.5, "out_of_domain": 1.0}
    table = format_table({"heldout": summary})
    assert "| heldout | never_mentioned | 50.0% |" in table
    # Three answers at 0.65; three other results at 0.45; one unanswerable query's result at 0.55.
    assert summary["scores"]["0.5"] == {"answers": 1.0, "other_results": 0.0, "unanswerable_results": 1.0,
                                        "precision": 0.75}
    assert summary["scores"]["0.7"] == {"answers": 0.0, "other_results": 0.0, "unanswerable_results": 0.0,
                                        "precision": 0.0}
    assert "| heldout | 0.5 | 100.0% | 0.0% | 100.0% | 75.0% |" in table
