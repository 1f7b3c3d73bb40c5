"""The log's worker: logged user messages queued by the save function -> memories (as save_info extracts
them), and logged messages -> their embeddings (written after the append, so an append costs its write).

Each message is extracted once however often SQS delivers it; a failed record is reported alone
(partial batch failure), retried, and after three receives lands in the dead-letter queue.
"""

import json
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_services
from agent_memory.domain.tiers.memory_layers import EmbeddingJob, ExtractionJob
from agent_memory.observability import logger, metrics, tracer

processor = BatchProcessor(event_type=EventType.SQS)


def handle(record: SQSRecord) -> None:
    if json.loads(record.body).get("kind") == "embed":
        embed(EmbeddingJob.model_validate_json(record.body))
    else:
        extract(ExtractionJob.model_validate_json(record.body))


def embed(job: EmbeddingJob) -> None:
    embedded = get_services().conversation_log.embed_logged(job)
    metrics.add_metric(name="LogEmbeddings", unit=MetricUnit.Count, value=embedded)


def extract(job: ExtractionJob) -> None:
    outcome = get_services().log_extraction.process(job)
    logger.info("log extraction", extra={"message_id": job.message_id, "status": outcome.status,
                                         "saved_count": outcome.saved_count})
    metrics.add_metric(name="LogExtractions", unit=MetricUnit.Count, value=1 if outcome.status == "extracted" else 0)
    metrics.add_metric(name="LogExtractionMemories", unit=MetricUnit.Count, value=outcome.saved_count)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=handle, processor=processor, context=context)
