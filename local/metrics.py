"""Metrics of concurrent local invocations kept apart.

powertools keeps one metrics buffer per process (class-level dicts shared by every `Metrics`), which is right in
Lambda, where a process runs one invocation at a time. The local runtime runs several at once on threads of
one process: one invocation's flush emptied the buffer under another's, which then failed to serialise
("Must contain at least one metric": a 502), and metrics were published with another request's dimensions.
Here each thread gets its own powertools provider (buffer, dimensions, metadata), and `log_metrics` flushes the
provider of the thread the invocation runs on.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider


class PerThreadMetricsProvider:
    """A powertools metrics provider whose state is the calling thread's own."""

    def __init__(self, namespace: str | None, service: str | None) -> None:
        self._namespace = namespace
        self._service = service
        self._local = threading.local()

    def current(self) -> AmazonCloudWatchEMFProvider:
        provider: AmazonCloudWatchEMFProvider | None = getattr(self._local, "provider", None)
        if provider is None:
            provider = AmazonCloudWatchEMFProvider(
                namespace=self._namespace,
                service=self._service,
                metric_set={},
                dimension_set={},
                metadata_set={},
                default_dimensions={},
            )
            self._local.provider = provider
        return provider

    def log_metrics(self, lambda_handler: Callable[..., Any] | None = None, **options: Any) -> Any:
        """powertools' decorator, bound at each invocation to the provider of the thread running it."""
        if lambda_handler is None:
            return functools.partial(self.log_metrics, **options)
        handler = lambda_handler

        @functools.wraps(handler)
        def decorate(event: Any, context: Any, *args: Any, **kwargs: Any) -> Any:
            return self.current().log_metrics(lambda_handler=handler, **options)(event, context, *args, **kwargs)

        return decorate

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.current(), name)


def keep_metrics_per_thread() -> None:
    """Give the layer's `metrics` a provider per thread; call before any handler module is loaded (its
    `log_metrics` decorator binds the provider it finds). Calling again changes nothing."""
    from agent_memory.observability import metrics

    if not isinstance(metrics.provider, PerThreadMetricsProvider):
        per_thread = PerThreadMetricsProvider(metrics.provider.namespace, metrics.provider.service)
        metrics.provider = per_thread  # type: ignore[assignment]  # the provider's interface, not its class
