"""The weekly rollup's schedule (Monday 01:00 in the rollup's timezone): one shard task per active-scope shard
on the rollup queue, where the worker takes over (services/rollup.py). Nothing here reads the layers, searches
or calls a model, so the schedule's function builds only its queue."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from agent_memory.domain.tiers.reports import rollup_week
from agent_memory.errors import InvalidInput

if TYPE_CHECKING:  # a name for the type only: the ports module imports numpy
    from agent_memory.ports import TaskQueue


class ShardTask(BaseModel):
    """Fan out one shard of the week's active scopes; `cursor` continues an earlier page."""

    kind: Literal["shard"] = "shard"
    week: date
    shard: int = Field(ge=0)
    cursor: dict[str, Any] | None = None


class ScheduleRequest(BaseModel):
    """The schedule's event. EventBridge Scheduler sends the template's input, with `time` set to the
    scheduled time; `week` (a Monday) asks for that week instead of the default, the week before `time`."""

    model_config = ConfigDict(extra="ignore")

    time: AwareDatetime | None = None
    week: date | None = None


class RollupPlan(BaseModel):
    week_start: date
    week_end: date
    timezone: str
    shard_tasks: int


class RollupScheduler:
    def __init__(self, *, shards: int, queue: Callable[[], TaskQueue], timezone: str = "UTC") -> None:
        self._shards = shards  # the active-scope markers' shards (the layer store spreads them over as many)
        self._queue = queue  # a provider: the SQS client is made on the first plan
        self._timezone = timezone

    def plan(self, now: datetime, week: date | None = None) -> RollupPlan:
        """One shard task per shard for the week (default: the previous week in the rollup's timezone)."""
        try:
            week_start = rollup_week(now, self._timezone, week)
        except ValueError as error:
            raise InvalidInput(str(error), details=[{"field": "week"}]) from error
        tasks = [ShardTask(week=week_start, shard=shard) for shard in range(self._shards)]
        self._queue().send([task.model_dump_json() for task in tasks])
        return RollupPlan(week_start=week_start, week_end=week_start + timedelta(days=6), timezone=self._timezone,
                          shard_tasks=len(tasks))
