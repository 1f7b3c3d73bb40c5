"""The as-of benchmark end to end on a small user (in-process moto, keyword scoring): both searches timed warm,
after a write and in a new container from snapshots, the ratio computed, every as-of result of the version valid
at its instant, the table and the JSON written."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.as_of import main


def test_given_a_small_user_then_both_searches_are_timed_and_as_of_answers_only_the_versions_valid_then(
        tmp_path: Path, capsys):
    output = tmp_path / "asof.json"

    main(["--memories", "12", "--runs", "6", "--cold-rounds", "2", "--embedder", "none", "--backend", "moto",
          "--output", str(output)])

    result = json.loads(output.read_text())
    assert result["versions_stored"] == 36 and result["versions_per_memory"] == 3
    assert {name: row["runs"] for name, row in result["rows"].items()} == {
        "search (current)": 6, "search as_of": 6, "search as_of now": 6}
    assert result["ratio_as_of_now"]["p50"] > 0
    assert result["ratio"]["p50"] > 0 and result["as_of_results_checked"] > 0
    for cold in ("after_a_write", "cold_container_from_snapshot"):  # the new container's loads are checked inside
        assert {name: row["runs"] for name, row in result[cold].items()} == {"search (current)": 2, "search as_of": 2}
    assert result["as_of_results_of_another_version"] == 0
    assert "| as_of / current |" in capsys.readouterr().out
