"""Access-statistics worker: SQS batches from the read path -> access_count / last_accessed_at.

Partial batch failures are reported, so only the failed messages are retried (then the DLQ).
"""

import json
from datetime import datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_services
from agent_memory.domain.models import ScopeRef
from agent_memory.observability import logger, metrics, tracer

processor = BatchProcessor(event_type=EventType.SQS)


def record_access(record: SQSRecord) -> None:
    body = json.loads(record.body)
    user = ScopeRef(tenant_id=body["tenant_id"], user_id=body["user_id"])
    keys = list(body["memory_keys"])
    accessed_at = datetime.fromisoformat(body["accessed_at"])  # when the read was queued
    if get_services().erasure.dropped(user, accessed_at):  # the user was erased since: nothing to count
        return
    get_services().store.record_access(user, keys, accessed_at)
    metrics.add_metric(name="AccessesRecorded", unit=MetricUnit.Count, value=len(keys))


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=record_access, processor=processor, context=context)
