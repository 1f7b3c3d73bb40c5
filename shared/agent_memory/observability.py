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


def error_fields(error: BaseException) -> dict[str, object]:
    """What a log may say about a failure without quoting user content: the error's type, where it was
    raised (file, line and function of each frame), and for a validation error which fields failed how.
    Exception messages and tracebacks are left out: pydantic's carry `input_value` slices of the input."""
    import traceback

    from pydantic import ValidationError

    frames = [f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} {frame.name}"
              for frame in traceback.extract_tb(error.__traceback__)]
    fields: dict[str, object] = {"error_type": type(error).__name__, "frames": frames[-8:]}
    if isinstance(error, ValidationError):
        fields["validation"] = [{"loc": ".".join(str(p) for p in e["loc"]), "type": e["type"]}
                                for e in error.errors(include_url=False, include_input=False, include_context=False)]
    return fields
