"""Rollup worker: the rollup queue's tasks. A shard task fans out to one scope task per scope active
that week; a scope task writes the week's report, refreshes hot memory (LLM only) and removes the
expired log.

Partial batch failures are reported: a failing scope (the LLM down, the store throttled) puts only its
own record in `batchItemFailures`, SQS redelivers it, and after three receives it goes to the DLQ.
"""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_rollup_worker
from agent_memory.observability import logger, metrics, tracer

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    batch = get_rollup_worker().batch(remaining_seconds=lambda: context.get_remaining_time_in_millis() / 1000)

    def run(record: SQSRecord) -> None:
        try:
            result = batch.run(record.body)
        except Exception as error:  # reported as this record's failure: SQS redelivers it, then the DLQ
            logger.warning("rollup task failed", extra={"message_id": record.message_id,
                                                        "error": type(error).__name__})
            raise
        logger.info("rollup task done", extra={"kind": result.kind, "outcome": result.outcome,
                                               "message_id": record.message_id})
        metrics.add_metric(name=f"Rollup{result.kind.title()}{result.outcome.title().replace('_', '')}",
                           unit=MetricUnit.Count, value=1)

    return process_partial_response(event=event, record_handler=run, processor=processor, context=context)
