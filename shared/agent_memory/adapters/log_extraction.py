"""The log's work queue, the producing side (SQS): logged user messages queued for extraction, and
logged messages queued for embedding.

Sent after the log's transaction succeeded, in `SendMessageBatch` calls (`sqs_batches`). A refused entry
is reported, not raised:
the messages are already logged, and the caller can send them again to queue them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.adapters.sqs_batches import batches, send_batch
from agent_memory.domain.tiers.memory_layers import EmbeddingJob, ExtractionJob
from agent_memory.observability import logger

if TYPE_CHECKING:
    from types_boto3_sqs.client import SQSClient


class SqsExtractionQueue:
    def __init__(self, *, queue_url: str, client: SQSClient) -> None:
        self._queue_url = queue_url
        self._client = client

    def enqueue(self, jobs: list[ExtractionJob]) -> list[str]:
        failed: list[str] = []
        for batch in batches([job.model_dump_json() for job in jobs]):
            try:
                refused = send_batch(self._client, self._queue_url, batch)
            except Exception:  # the log is stored; report what was not queued instead of failing the write
                logger.warning("could not queue log extractions", exc_info=True, extra={"count": len(batch)})
                failed += [jobs[index].message_id for index, _ in batch]
                continue
            if refused:
                logger.warning("SQS refused log extractions", extra={"codes": sorted({r.code for r in refused})})
            failed += [jobs[r.index].message_id for r in refused]
        return failed


    def enqueue_embedding(self, job: EmbeddingJob) -> bool:
        try:
            self._client.send_message(QueueUrl=self._queue_url, MessageBody=job.model_dump_json())
        except Exception:  # the log is stored; the caller embeds the messages itself instead
            logger.warning("could not queue log embeddings", exc_info=True, extra={"count": len(job.messages)})
            return False
        return True

