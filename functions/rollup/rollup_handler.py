"""Rollup function: the weekly schedule's target (Monday 01:00 in the rollup's timezone).

A fan-out, never a loop over scopes: it sends one shard task per active-scope shard to the rollup
queue, and the rollup worker takes it from there. It builds only the queue (get_rollup_scheduler): no store,
search index or model. A failure raises, so the schedule's retry policy
(then its dead-letter queue) takes over; sending the shard tasks again is harmless.
"""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_rollup_scheduler
from agent_memory.domain.models import utcnow
from agent_memory.observability import logger, metrics, tracer
from agent_memory.services.rollup_schedule import ScheduleRequest


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = ScheduleRequest.model_validate(event)
    plan = get_rollup_scheduler().plan(request.time or utcnow(), week=request.week)
    logger.info("rollup planned", extra={"week_start": plan.week_start.isoformat(), "timezone": plan.timezone,
                                         "shard_tasks": plan.shard_tasks, "week_override": request.week is not None})
    metrics.add_metric(name="RollupShardTasks", unit=MetricUnit.Count, value=plan.shard_tasks)
    result: dict[str, Any] = plan.model_dump(mode="json")
    return result
