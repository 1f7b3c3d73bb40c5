"""The weekly schedule's graph: the rollup queue and the shard count. No search index, inject pools, store or
model: the schedule only sends one shard task per shard (services/rollup_schedule.py)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from agent_memory.errors import InvalidInput
from agent_memory.services.rollup_schedule import RollupScheduler
from agent_memory.settings import Settings

if TYPE_CHECKING:  # a name for the type only: the ports module imports numpy
    from agent_memory.ports import TaskQueue


def build_rollup_scheduler(settings: Settings, *, queue: TaskQueue | None = None) -> RollupScheduler:
    """The schedule's planner; tests pass a queue, production the SQS one (made on the first plan)."""
    return RollupScheduler(shards=settings.rollup_shards, timezone=settings.rollup_timezone,
                           queue=rollup_queue(settings) if queue is None else lambda: queue)


def rollup_queue(settings: Settings) -> Callable[[], TaskQueue]:
    """The rollup's work queue, which the schedule and the worker both send to, made on first use."""

    @cache
    def queue() -> TaskQueue:
        if not settings.rollup_queue_url:
            raise InvalidInput("the rollup needs its work queue", details=[{"field": "ROLLUP_QUEUE_URL"}])
        import boto3

        from agent_memory.adapters.task_queue import SqsTaskQueue

        return SqsTaskQueue(queue_url=settings.rollup_queue_url, client=boto3.client("sqs"))

    return queue
