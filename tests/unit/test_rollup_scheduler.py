"""The weekly schedule's graph holds only the rollup queue: a plan sends one shard task per shard, and the
schedule's function builds its graph without loading the store, the search index, inject or a model."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime

from agent_memory.adapters.task_queue import SqsTaskQueue
from agent_memory.bootstrap.scheduler import build_rollup_scheduler
from agent_memory.settings import Settings
from benchmarks.scale import lambda_environment
from tests.fakes.sqs import FakeSqs

NOT_BUILT = ("agent_memory.bootstrap.services", "agent_memory.services.search", "agent_memory.services.inject",
             "agent_memory.adapters.in_process_index", "agent_memory.adapters.opensearch",
             "agent_memory.adapters.dynamodb.store", "agent_memory.adapters.llm", "opensearchpy", "anthropic",
             "numpy")
# The module Lambda imports (the one _HANDLER names), then the graph its handler builds on an invocation.
PROBE = f"""
import importlib, os, sys
module = importlib.import_module(os.environ["_HANDLER"].rsplit(".", 1)[0])
module.get_rollup_scheduler()
print(",".join(m for m in {NOT_BUILT!r} if m in sys.modules))
"""


def test_given_a_schedule_then_one_shard_task_per_shard_goes_to_the_rollup_queue():
    sqs = FakeSqs()
    scheduler = build_rollup_scheduler(Settings(rollup_shards=3), queue=SqsTaskQueue(queue_url="q", client=sqs))

    plan = scheduler.plan(datetime(2026, 11, 25, 1, tzinfo=UTC))

    assert (plan.week_start, plan.shard_tasks) == (date(2026, 11, 16), 3)
    assert [json.loads(body) for call in sqs.bodies for body in call] == [
        {"kind": "shard", "week": "2026-11-16", "shard": shard, "cursor": None} for shard in range(3)]


def test_the_schedules_function_builds_its_graph_without_the_store_search_inject_or_model_modules():
    env, task_root = lambda_environment("RollupFunction")
    env["OPENSEARCH_ENDPOINT"] = "http://127.0.0.1:9"  # the OpenSearch tier: the services would open its client

    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=task_root, capture_output=True, text=True,
                          timeout=120)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
