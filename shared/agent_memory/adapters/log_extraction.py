"""The log's work queue, the producing side (SQS): logged user messages queued for extraction, and
logged messages queued for embedding.

Sent after the log's transaction succeeded, in `SendMessageBatch` calls of at most 10 entries and
200 KB (SQS's limits are 10 entries and 256 KB per call). A refused entry is reported, not raised:
the messages are already logged, and the caller can send them again to queue them.
"""

from __future__ import annotations

from typing import Any

from agent_memory.domain.layers import EmbeddingJob, ExtractionJob
from agent_memory.observability import logger

MAX_ENTRIES = 10
MAX_BATCH_BYTES = 200 * 1024


class SqsExtractionQueue:
    def __init__(self, *, queue_url: str, client: Any) -> None:
        self._queue_url = queue_url
        self._client = client

    def enqueue(self, jobs: list[ExtractionJob]) -> list[str]:
        failed: list[str] = []
        for chunk in _chunks([job.model_dump_json() for job in jobs]):
            entries = [{"Id": str(index), "MessageBody": body} for index, body in chunk]
            try:
                response = self._client.send_message_batch(QueueUrl=self._queue_url, Entries=entries)
            except Exception:  # the log is stored; report what was not queued instead of failing the write
                logger.warning("could not queue log extractions", exc_info=True, extra={"count": len(entries)})
                failed += [jobs[index].message_id for index, _ in chunk]
                continue
            refused = response.get("Failed") or []
            if refused:
                logger.warning("SQS refused log extractions", extra={"codes": sorted({f["Code"] for f in refused})})
            failed += [jobs[int(f["Id"])].message_id for f in refused]
        return failed


    def enqueue_embedding(self, job: EmbeddingJob) -> bool:
        try:
            self._client.send_message(QueueUrl=self._queue_url, MessageBody=job.model_dump_json())
        except Exception:  # the log is stored; the caller embeds the messages itself instead
            logger.warning("could not queue log embeddings", exc_info=True, extra={"count": len(job.messages)})
            return False
        return True


def _chunks(bodies: list[str]) -> list[list[tuple[int, str]]]:
    chunks: list[list[tuple[int, str]]] = []
    size = 0
    for index, body in enumerate(bodies):
        length = len(body.encode("utf-8"))
        if not chunks or len(chunks[-1]) == MAX_ENTRIES or size + length > MAX_BATCH_BYTES:
            chunks.append([])
            size = 0
        chunks[-1].append((index, body))
        size += length
    return chunks
