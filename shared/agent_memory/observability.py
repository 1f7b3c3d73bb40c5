"""Powertools logger, tracer and metrics shared by every function.

Memory content is user data: nothing here logs request or response bodies.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger(service="agent-memory")
tracer = Tracer(service="agent-memory")
metrics = Metrics(namespace="AgentMemory", service="agent-memory")


def record_request_outcome(route: str, status_code: int) -> None:
    """One outcome metric per route: success, client_error or server_error."""
    outcome = "success" if status_code < 400 else "client_error" if status_code < 500 else "server_error"
    metrics.add_dimension(name="route", value=route)
    metrics.add_dimension(name="outcome", value=outcome)
    metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
