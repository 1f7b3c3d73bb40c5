"""What Lambda's DynamoDB stream event source does, for the local stack's workers: read the table's stream
on DynamoDB Local shard by shard, in order, invoke the function with batches of records (as Lambda
shapes them), and resume after the last record a batch finished.

Where each shard was left is kept in a checkpoint file under the data dir, so a restart neither loses
nor repeats records (DynamoDB Local keeps a stream's records for 24 hours, as DynamoDB does). A batch
whose function fails, or reports item failures, is retried from the first failed record, up to the
event's MaximumRetryAttempts (-1: no limit) and while its oldest record is younger than MaximumRecordAgeInSeconds
(-1: no limit), waiting longer after each failure, up to RETRY_MAX_SECONDS; then a note of it goes to the
on-failure queue and the shard moves on.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from local.template import StreamEventSource

POLL_SECONDS = 1.0
RETRY_SECONDS = 1.0
RETRY_MAX_SECONDS = 10.0


def lambda_record(record: dict[str, Any], stream_arn: str) -> dict[str, Any]:
    """A GetRecords record as Lambda's event carries it: binary values as base64, times as epoch seconds."""
    shaped = _lambda_json(record)
    created = record["dynamodb"].get("ApproximateCreationDateTime")
    if isinstance(created, datetime):
        shaped["dynamodb"]["ApproximateCreationDateTime"] = created.timestamp()
    shaped["eventSourceARN"] = stream_arn
    return dict(shaped)


def _lambda_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"B"}:
            return {"B": base64.b64encode(bytes(value["B"])).decode()}
        if set(value) == {"BS"}:
            return {"BS": [base64.b64encode(bytes(v)).decode() for v in value["BS"]]}
        return {k: _lambda_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lambda_json(v) for v in value]
    return value


@dataclass
class StreamPoller:
    source: StreamEventSource
    table_name: str
    functions: Any  # LocalFunctions, or a stand-in with invoke()
    dynamodb: Any
    streams: Any
    checkpoint_path: Path
    stopping: threading.Event
    on_failure: Any = None  # (sqs client, queue url) for batches given up on
    busy: bool = False
    caught_up: bool = False
    batches: int = 0
    thread: threading.Thread | None = field(default=None, repr=False)
    _positions: dict[str, str] = field(default_factory=dict, repr=False)  # shard id -> last sequence done

    def start(self) -> None:
        if self.checkpoint_path.exists():
            self._positions = json.loads(self.checkpoint_path.read_text(encoding="utf-8"))
        self.thread = threading.Thread(target=self._run, name=f"stream-{self.source.function}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        iterators: dict[str, str | None] = {}  # shard id -> iterator; None once a closed shard is read to its end
        while not self.stopping.is_set():
            try:
                stream_arn = self.dynamodb.describe_table(TableName=self.table_name)["Table"].get("LatestStreamArn")
                if not stream_arn:
                    self.caught_up = True
                    self.stopping.wait(POLL_SECONDS)
                    continue
                shards = self.streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"]
                got_any = False
                for shard in shards:  # listed parents first: a child's records come after its parent's
                    shard_id = shard["ShardId"]
                    if shard_id in iterators and iterators[shard_id] is None:
                        continue
                    if shard_id not in iterators:
                        iterators[shard_id] = self._iterator(stream_arn, shard_id)
                    got_any |= self._read(stream_arn, shard_id, iterators)
                    if self.stopping.is_set():
                        return
                self.caught_up = not got_any
                if not got_any:
                    self.stopping.wait(POLL_SECONDS)
            except Exception as error:  # keep polling, as the event source mapping would
                if not self.stopping.is_set():
                    sys.stderr.write(f"{self.source.function} stream poller: {error!r}\n")
                    iterators.clear()  # iterators expire; take them again from the checkpoints
                    self.stopping.wait(POLL_SECONDS)

    def _iterator(self, stream_arn: str, shard_id: str, at: str | None = None) -> str:
        kwargs: dict[str, Any] = {"StreamArn": stream_arn, "ShardId": shard_id}
        if at is not None:
            kwargs.update(ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=at)
        elif shard_id in self._positions:
            kwargs.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=self._positions[shard_id])
        else:
            kwargs.update(ShardIteratorType=self.source.starting_position)
        return str(self.streams.get_shard_iterator(**kwargs)["ShardIterator"])

    def _read(self, stream_arn: str, shard_id: str, iterators: dict[str, str | None]) -> bool:
        """One GetRecords on the shard, delivered; whether it had records."""
        response = self.streams.get_records(ShardIterator=iterators[shard_id], Limit=self.source.batch_size)
        iterators[shard_id] = response.get("NextShardIterator")
        records = response.get("Records", [])
        if not records:
            return False
        self.busy = True
        try:
            self._deliver(stream_arn, shard_id, [lambda_record(r, stream_arn) for r in records])
        finally:
            self.busy = False
        return True

    def _deliver(self, stream_arn: str, shard_id: str, records: list[dict[str, Any]]) -> None:
        attempts = 0
        while records:
            failed_at = self._invoke(records)
            done = records if failed_at is None else records[:failed_at]
            if done:
                self._checkpoint(shard_id, done[-1]["dynamodb"]["SequenceNumber"])
            if failed_at is None:
                self.batches += 1
                return
            records = records[failed_at:]
            attempts += 1
            if self._exhausted(attempts, records[0]):
                self._give_up(stream_arn, shard_id, records)
                self._checkpoint(shard_id, records[-1]["dynamodb"]["SequenceNumber"])
                return
            if self.stopping.wait(min(RETRY_SECONDS * 2 ** (attempts - 1), RETRY_MAX_SECONDS)):
                return  # stopping: the checkpoint says where to resume

    def _exhausted(self, attempts: int, oldest: dict[str, Any]) -> bool:
        limit, max_age = self.source.maximum_retry_attempts, self.source.maximum_record_age_seconds
        if limit >= 0 and attempts > limit:
            return True
        created = oldest["dynamodb"].get("ApproximateCreationDateTime")
        return max_age >= 0 and created is not None and time.time() - float(created) > max_age

    def _invoke(self, records: list[dict[str, Any]]) -> int | None:
        """Index of the first record to retry, or None when the whole batch succeeded."""
        try:
            result = self.functions.invoke(self.source.function, {"Records": records}) or {}
        except Exception as error:  # a function error: the whole batch is retried
            sys.stderr.write(f"{self.source.function} failed: {error!r}\n")
            return 0
        failures = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
        for index, record in enumerate(records):
            if record["dynamodb"]["SequenceNumber"] in failures:
                return index
        return None

    def _checkpoint(self, shard_id: str, sequence_number: str) -> None:
        self._positions[shard_id] = sequence_number
        self.checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.checkpoint_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self._positions), encoding="utf-8")
        temporary.replace(self.checkpoint_path)  # atomic: a crash never leaves half a checkpoint

    def _give_up(self, stream_arn: str, shard_id: str, records: list[dict[str, Any]]) -> None:
        note = {"requestContext": {"condition": "RetryAttemptsExhausted", "functionArn": self.source.function},
                "DDBStreamBatchInfo": {"shardId": shard_id, "streamArn": stream_arn, "batchSize": len(records),
                                       "startSequenceNumber": records[0]["dynamodb"]["SequenceNumber"],
                                       "endSequenceNumber": records[-1]["dynamodb"]["SequenceNumber"]},
                "timestamp": time.time()}
        sys.stderr.write(f"{self.source.function}: gave up on {len(records)} records of {shard_id}\n")
        if self.on_failure is not None:
            sqs, queue_url = self.on_failure
            sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps(note))
