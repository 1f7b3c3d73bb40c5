"""The access-statistics and rollup workers build graphs of their own: no search index, no inject, no OpenSearch
client even on the OpenSearch tier (so their functions carry neither the OpenSearch layer nor its policy)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks.scale import lambda_environment

NOT_BUILT = ("agent_memory.bootstrap.services", "agent_memory.services.search", "agent_memory.services.inject",
             "agent_memory.adapters.in_process_index", "agent_memory.adapters.opensearch", "opensearchpy")
# The module Lambda imports (the one _HANDLER names), then the graph its handler builds on an invocation; the
# modules the graph needs are printed after a blank line, for the failure message.
PROBE = """
import importlib, os, sys
module = importlib.import_module(os.environ["_HANDLER"].rsplit(".", 1)[0])
getattr(module, sys.argv[1])()
print(",".join(m for m in sys.argv[2].split(",") if m in sys.modules))
"""


@pytest.mark.parametrize(("logical_id", "getter", "built"), [
    ("AccessStatsFunction", "get_access_stats", "agent_memory.adapters.dynamodb.store"),
    ("RollupWorkerFunction", "get_rollup_worker", "agent_memory.services.rollup"),
])
def test_the_worker_builds_its_own_graph_without_search_inject_or_the_opensearch_client(logical_id, getter, built):
    env, task_root = lambda_environment(logical_id)
    env["OPENSEARCH_ENDPOINT"] = "http://127.0.0.1:9"  # the OpenSearch tier: the API's services would open it

    done = subprocess.run([sys.executable, "-c", PROBE, getter, ",".join((*NOT_BUILT, built))], env=env,
                          cwd=task_root, capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == built  # its own graph was built, and nothing of the API's
