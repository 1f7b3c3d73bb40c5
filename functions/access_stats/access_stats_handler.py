"""Access-statistics worker: SQS batches from the read path -> access_count / last_accessed_at.

A batch is merged per user before anything is written: each memory it names is updated once, by how many reads
counted it, to the latest read's time. A user whose update fails has all its messages reported, so only they are
retried (then the DLQ).
"""

import json
from collections import defaultdict
from datetime import datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_access_stats
from agent_memory.domain.models import ScopeRef
from agent_memory.observability import logger, metrics, tracer


def _reads_by_user(records: list[dict[str, Any]]) -> tuple[dict[ScopeRef, list[tuple[str, list[str], datetime]]],
                                                            list[str]]:
    """Each user's reads, (message id, memory keys, read at), the erased users' left out; and the messages that
    are not access statistics at all (reported failed: the DLQ keeps them for a look)."""
    by_user: dict[ScopeRef, list[tuple[str, list[str], datetime]]] = defaultdict(list)
    malformed: list[str] = []
    for record in records:
        try:
            body = json.loads(record["body"])
            user = ScopeRef(tenant_id=body["tenant_id"], user_id=body["user_id"])
            read = (record["messageId"], [str(key) for key in body["memory_keys"]],
                    datetime.fromisoformat(body["accessed_at"]))  # when the read was queued
        except (ValueError, KeyError, TypeError):
            logger.warning("access statistics message unreadable", message_id=record.get("messageId"))
            malformed.append(record["messageId"])
            continue
        by_user[user].append(read)
    counted: dict[ScopeRef, list[tuple[str, list[str], datetime]]] = {}
    for user, reads in by_user.items():  # a user erased since the reads: nothing to count
        dropped = get_access_stats().erasure.dropper(user)  # its tombstone read once for the batch
        if kept := [read for read in reads if not dropped(read[2])]:
            counted[user] = kept
    return counted, malformed


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    by_user, failed = _reads_by_user(event.get("Records", []))
    recorded = 0
    for user, reads in by_user.items():
        keys = [key for _, read_keys, _ in reads for key in read_keys]
        try:
            get_access_stats().store.record_access(user, keys, max(at for _, _, at in reads))
        except Exception:
            logger.exception("access statistics not recorded: retried", messages=len(reads))
            failed += [message_id for message_id, _, _ in reads]
            continue
        recorded += len(keys)
    metrics.add_metric(name="AccessesRecorded", unit=MetricUnit.Count, value=recorded)
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}
