"""Rollup function: the weekly schedule's target. A logged no-op until its issue lands."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    logger.info("rollup invoked; not implemented yet", extra={"source": event.get("source")})
    metrics.add_metric(name="RollupSkipped", unit=MetricUnit.Count, value=1)
    return {"status": "not_implemented", "feature": "rollup"}
