"""The scale benchmark's pure parts: verdicts against the targets, the printed tables, the plot."""

from __future__ import annotations

from pathlib import Path

from benchmarks.scale import IMPORTS, SCENARIOS, format_tables, import_row, lambda_environment, plot, verdict


def result(size: int, p95: float, snapshot_bytes: int | None) -> dict:
    row = {"runs": 3, "p50_ms": p95 / 2, "p95_ms": p95, "max_ms": p95 + 1}
    return {"memories": size, "seed_s": 1.0, "rows": {scenario: row for scenario in SCENARIOS},
            "snapshot": {"bytes": snapshot_bytes, "chunks": 1 if snapshot_bytes else None,
                         "loaded_by_cold_searches": 3, "loaded_by_cold_injects": 3, "cold_runs": 3},
            "rss_mb": 150.0, "index_rss_mb": 8.0}


def test_given_a_target_then_the_verdict_says_whether_p95_meets_it_and_without_one_there_is_none():
    assert verdict("search cold (snapshot)", 1000, 150.0) == ("150", "yes")
    assert verdict("search cold (snapshot)", 10000, 501.0) == ("500", "NO")
    assert verdict("search warm", 1000, 1.0) == ("-", "-")


def test_given_results_then_every_scenario_and_size_is_a_row_and_sizes_have_their_footprint():
    tables = format_tables({1000: result(1000, 120.0, 850_000), 10000: result(10000, 600.0, None)})

    assert "| search cold (snapshot) | 1,000 | 3 | 60.0 | 120.0 | 121.0 | 150 | yes |" in tables
    assert "| search cold (snapshot) | 10,000 | 3 | 300.0 | 600.0 | 601.0 | 500 | NO |" in tables
    assert "| 1,000 | 1.0 | 830 | 1 | 3/3 | 150 | 8 |" in tables and "| 10,000 | 1.0 | - | - |" in tables


def test_given_results_then_the_plot_is_written_as_a_png(tmp_path: Path):
    path = tmp_path / "docs" / "scale.png"

    plot({100: result(100, 40.0, 80_000), 1000: result(1000, 120.0, 850_000)}, path, "test")

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_given_import_rows_then_they_follow_the_scenarios_judged_on_the_median():
    imports = {"import, load handler": {"runs": 9, "p50_ms": 240.0, "p95_ms": 320.0, "max_ms": 330.0},
               "import, inject handler": {"runs": 9, "p50_ms": 301.0, "p95_ms": 310.0, "max_ms": 320.0}}

    tables = format_tables({1000: result(1000, 120.0, 850_000)}, imports)

    assert "| import, load handler | - | 9 | 240.0 | 320.0 | 330.0 | 300 (p50) | yes |" in tables
    assert "| import, inject handler | - | 9 | 301.0 | 310.0 | 320.0 | 300 (p50) | NO |" in tables
    assert tables.index("inject cold (snapshot)") < tables.index("import, load handler")


def test_the_import_rows_environment_is_lambdas_with_tracing_on():
    for logical_id in IMPORTS.values():
        env, task_root = lambda_environment(logical_id)

        module = env["_HANDLER"].rsplit(".", 1)[0]
        assert env["LAMBDA_TASK_ROOT"] == str(task_root) and (task_root / f"{module}.py").is_file()
        assert env["PYTHONPATH"].split(":")[0] == str(task_root)
        assert "POWERTOOLS_TRACE_DISABLED" not in env and env["AWS_XRAY_DAEMON_ADDRESS"]
        assert env["MEMORY_TABLE_NAME"] and env["POWERTOOLS_SERVICE_NAME"] == "agent-memory"


def test_an_import_row_imports_the_handler_in_fresh_processes():
    row = import_row("InjectFunction", runs=1)

    assert row["runs"] == 1 and row["p50_ms"] > 0
