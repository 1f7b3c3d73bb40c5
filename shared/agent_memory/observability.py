"""Powertools logger, tracer and metrics shared by every function.

Memory content is user data: nothing here logs request or response bodies.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, overload

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit as MetricUnit  # re-exported: the services' metrics use it

SERVICE = "agent-memory"


class LazyTracer:
    """Powertools' Tracer, built on first use instead of at import.

    Building it imports the X-Ray SDK and, in Lambda with tracing on, patches every library the SDK
    supports (botocore, httpx, ...): ~165 ms that every cold start paid while importing the handler. Now a
    handler wrapped by `capture_lambda_handler` builds it at the start of its first invocation, before the
    handler's own code runs (or `warm()` builds it earlier, e.g. before a SnapStart snapshot). From then on
    the handler is the Tracer's own `capture_lambda_handler` wrapper: the same segment, the ColdStart and
    Service annotations, the same response and error capture. Any other attribute (`put_annotation`,
    `provider`, ...) builds the Tracer and is its own.

    What moves: the patching now happens at the first invocation, not at import. botocore, requests and
    httplib are patched on their classes, so clients made earlier are traced too; httpx is patched by
    replacing `httpx.Client`, which only reaches clients (and subclasses, such as the Anthropic SDK's)
    created after it, and importing the handlers imports no httpx (tests/unit/test_handler_imports.py)."""

    def __init__(self, *, service: str, build: Callable[[], Tracer] | None = None) -> None:
        self._build = build or (lambda: Tracer(service=service))
        self._tracer: Tracer | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._tracer is not None

    def warm(self) -> Tracer:
        """The Tracer, built (X-Ray SDK imported, libraries patched) on the first call."""
        tracer = self._tracer
        if tracer is None:
            with self._lock:
                if self._tracer is None:
                    self._tracer = self._build()
                tracer = self._tracer
        return tracer

    # Typed as it is used, a decorator with or without arguments: what it wraps keeps its signature (the
    # wrapper passes event, context and keyword arguments through and returns what the handler returns).
    @overload
    def capture_lambda_handler[H: Callable[..., Any]](self, lambda_handler: H, capture_response: bool | None = None,
                                                      capture_error: bool | None = None) -> H: ...

    @overload
    def capture_lambda_handler[H: Callable[..., Any]](self, lambda_handler: None = None,
                                                      capture_response: bool | None = None,
                                                      capture_error: bool | None = None) -> Callable[[H], H]: ...

    def capture_lambda_handler(self, lambda_handler: Callable[..., Any] | None = None,
                               capture_response: bool | None = None,
                               capture_error: bool | None = None) -> Callable[..., Any]:
        """`Tracer.capture_lambda_handler`, as a decorator with or without arguments."""
        if lambda_handler is None:
            return functools.partial(self.capture_lambda_handler, capture_response=capture_response,
                                     capture_error=capture_error)
        handler = lambda_handler
        traced: list[Callable[..., Any]] = []  # the Tracer's wrapper, made on the first invocation

        @functools.wraps(handler)
        def decorate(event: Any, context: Any, **kwargs: Any) -> Any:
            if not traced:
                traced.append(self.warm().capture_lambda_handler(
                    handler, capture_response=capture_response, capture_error=capture_error))
            return traced[0](event, context, **kwargs)

        return decorate

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not the Tracer's: e.g. copy probing an instance without its fields
            raise AttributeError(name)
        return getattr(self.warm(), name)


logger = Logger(service=SERVICE)
tracer = LazyTracer(service=SERVICE)
metrics = Metrics(namespace="AgentMemory", service=SERVICE)


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
