"""The local stack's container pool: concurrent invocations of one function run at once in two containers, and
wait for one container, keeping it warm."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from local.runtime import LocalFunctions
from local.template import FunctionDef

# The container pool ---------------------------------------------------------------------------------------

SLOW_HANDLER = '''
import threading, time
STATE = {"calls": 0}
def handler(event, context):
    STATE["calls"] += 1
    time.sleep(event["sleep"])
    return {"container": id(STATE), "calls": STATE["calls"]}
'''


@pytest.fixture
def slow_function(tmp_path: Path) -> dict[str, FunctionDef]:
    (tmp_path / "app.py").write_text(SLOW_HANDLER, encoding="utf-8")
    return {"SlowFunction": FunctionDef("SlowFunction", str(tmp_path), "app.handler", timeout=5)}


def run_concurrently(functions: LocalFunctions, count: int, sleep: float) -> tuple[list[Any], float]:
    results: list[Any] = [None] * count

    def call(i: int) -> None:
        results[i] = functions.invoke("SlowFunction", {"sleep": sleep})

    threads = [threading.Thread(target=call, args=(i,)) for i in range(count)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.monotonic() - started


def test_given_two_containers_then_concurrent_invocations_of_one_function_run_at_once(slow_function):
    functions = LocalFunctions(containers_per_function=2, definitions=slow_function)
    results, elapsed = run_concurrently(functions, 4, 0.4)
    assert elapsed < 1.2  # two rounds of 0.4 s, not four
    assert len({r["container"] for r in results}) == 2  # each container its own module state
    assert functions.containers("SlowFunction") == 2


def test_given_one_container_then_invocations_wait_for_it_and_keep_it_warm(slow_function):
    functions = LocalFunctions(containers_per_function=1, definitions=slow_function)
    results, elapsed = run_concurrently(functions, 3, 0.2)
    assert elapsed >= 0.6
    assert sorted(r["calls"] for r in results) == [1, 2, 3]  # one warm container served all three


# SnapStart ------------------------------------------------------------------------------------------------

SNAPSHOTTED_HANDLER = '''
STATE = {"phases": []}
try:  # as the handlers do: the module is Lambda's
    from snapshot_restore_py import register_after_restore, register_before_snapshot
    register_before_snapshot(lambda: STATE["phases"].append("before snapshot"))
    register_after_restore(lambda: STATE["phases"].append("after restore"))
except ImportError:
    pass
def handler(event, context):
    return list(STATE["phases"])
'''


@pytest.fixture
def snapshotted(tmp_path: Path) -> dict[str, FunctionDef]:
    (tmp_path / "snapped.py").write_text(SNAPSHOTTED_HANDLER, encoding="utf-8")
    return {"Snapped": FunctionDef("Snapped", str(tmp_path), "snapped.handler", snap_start=True),
            "Plain": FunctionDef("Plain", str(tmp_path), "snapped.handler")}


def test_with_snap_start_a_container_runs_the_hooks_its_module_registered_before_its_first_invocation(snapshotted):
    functions = LocalFunctions(definitions=snapshotted, snap_start=True)

    assert functions.prewarm() == ["Snapped"]  # only the function with SnapStart in the template
    assert functions.containers("Snapped") == 1 and functions.containers("Plain") == 0
    assert functions.invoke("Snapped", {}) == ["before snapshot", "after restore"]
    assert functions.containers("Snapped") == 1  # the prewarmed container served it
    assert functions.invoke("Plain", {}) == []  # no SnapStart: its hooks never run


def test_without_snap_start_no_hook_runs_and_nothing_is_prewarmed(snapshotted):
    plain = LocalFunctions(definitions=snapshotted)

    assert plain.prewarm() == []
    assert plain.invoke("Snapped", {}) == []


def test_the_template_marks_the_functions_it_publishes_with_snap_start():
    from local.template import functions

    assert {name for name, f in functions().items() if f.snap_start} >= {"SaveFunction", "LoadFunction",
                                                                         "InjectFunction"}
