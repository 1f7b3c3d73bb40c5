"""The embedding-cost benchmark on two short lengths: each row timed and costed, the worst request worked out from
the budget, the table and the JSON written."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.embedding_cost import main


def test_given_two_lengths_then_each_is_timed_and_the_worst_request_is_worked_out_from_the_budget(tmp_path: Path,
                                                                                               capsys):
    output = tmp_path / "cost.json"

    main(["--lengths", "16,64", "--rounds", "1", "--output", str(output)])

    result = json.loads(output.read_text())
    assert [(r["language"], r["tokens"] > 0) for r in result["rows"]] == [("en", True), ("zh", True)] * 2
    assert all(r["cpu_seconds_per_text"] > 0 and r["budget_units_per_text"] > 0 for r in result["rows"])
    assert result["worst_request_cpu_seconds"] == round(
        result["budget_units"] * result["worst"]["cpu_ms_per_unit"] / 1000, 2)
    assert "| CPU ms per unit |" in capsys.readouterr().out
