"""Concurrent invocations of one function through the local runtime each publish their own metrics: powertools'
buffer is one per process, and a flush of one invocation used to empty it under another ("Must contain at least
one metric", a 502) or publish its metrics under another's dimensions."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from local.runtime import LocalFunctions
from local.template import FunctionDef

METRICS_HANDLER = """
import time

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.observability import metrics


@metrics.log_metrics
def handler(event, context):
    n = event["n"]
    metrics.add_dimension(name="invocation", value=str(n))
    for _ in range(3):
        metrics.add_metric(name="Work", unit=MetricUnit.Count, value=n)
        time.sleep(0.001)
    return {"n": n}
"""


def test_given_concurrent_invocations_of_one_function_then_each_flushes_its_own_metrics(tmp_path: Path, capsys: Any):
    (tmp_path / "app.py").write_text(METRICS_HANDLER, encoding="utf-8")
    functions = LocalFunctions(
        containers_per_function=8,
        definitions={"MetricsFunction": FunctionDef("MetricsFunction", str(tmp_path), "app.handler", timeout=5)},
    )
    errors: list[BaseException] = []

    def call(first: int) -> None:
        for n in range(first, first + 25):
            try:
                functions.invoke("MetricsFunction", {"n": n})
            except Exception as error:  # the failure under test: counted, not raised in the thread
                errors.append(error)

    threads = [threading.Thread(target=call, args=(first,)) for first in range(0, 200, 25)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    published = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert errors == []
    assert len(published) == 200
    for blob in published:  # each invocation's three values under its own dimension
        assert blob["Work"] == [float(blob["invocation"])] * 3, blob
