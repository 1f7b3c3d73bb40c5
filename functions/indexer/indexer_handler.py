"""Indexer function: the memory table's stream keeps the OpenSearch index in step with DynamoDB.

Partial batch failures: a failed record is reported, Lambda retries from it (bisecting the
batch), and after the retries the batch goes to the dead-letter queue; `make reindex` repairs.
"""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.adapters.opensearch.sync import apply_record
from agent_memory.bootstrap import get_indexer
from agent_memory.observability import logger, metrics, tracer

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def record_handler(record: DynamoDBRecord) -> str:
    action = apply_record(record.raw_event, get_indexer())
    metrics.add_metric(name=f"Index{action.value.capitalize()}", unit=MetricUnit.Count, value=1)
    return action.value


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
