"""The DynamoDB read units one request consumed, as DynamoDB counts them (ReturnConsumedCapacity).

Inside `metered()`, every read of a client hooked with `meter_reads` (GetItem, BatchGetItem, Query, Scan) asks for
its consumed capacity and adds it to the request's meter, on any thread the request hands its context to. Outside
a meter nothing is asked: the calls are as they were. What a request costs in reads is what the cost of serving a
user grows with (a partition read per search is thousands of units at 10,000 memories).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

_READS = ("GetItem", "BatchGetItem", "Query", "Scan")


class ReadMeter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.read_units = 0.0
        self.calls = 0

    def add(self, units: float) -> None:
        with self._lock:
            self.read_units += units
            self.calls += 1


_meter: ContextVar[ReadMeter | None] = ContextVar("dynamodb_read_meter", default=None)


@contextmanager
def metered() -> Iterator[ReadMeter]:
    meter = ReadMeter()
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


def meter_reads(client: DynamoDBClient | None) -> None:
    """Hook the client's reads to the request's meter (registering again changes nothing)."""
    events = getattr(getattr(client, "meta", None), "events", None)
    if events is None:  # not a botocore client (a test's fake)
        return
    for operation in _READS:
        events.register(f"before-parameter-build.dynamodb.{operation}", _ask_for_capacity,
                        unique_id=f"agent-memory-capacity-{operation}")
        events.register(f"after-call.dynamodb.{operation}", _count_capacity,
                        unique_id=f"agent-memory-capacity-count-{operation}")


def _ask_for_capacity(params: dict[str, Any], **_: Any) -> None:
    if _meter.get() is not None:
        params.setdefault("ReturnConsumedCapacity", "TOTAL")


def _count_capacity(parsed: Any = None, **_: Any) -> None:
    meter = _meter.get()
    if meter is None or not isinstance(parsed, dict):
        return
    consumed = parsed.get("ConsumedCapacity")
    entries = consumed if isinstance(consumed, list) else [consumed] if consumed else []
    meter.add(sum(float(entry.get("CapacityUnits", entry.get("ReadCapacityUnits", 0)) or 0) for entry in entries))
