"""Metrics of concurrent local invocations kept apart.

powertools keeps one metrics buffer per process (class-level dicts shared by every `Metrics`), which is right in
Lambda, where a process runs one invocation at a time. The local runtime runs several at once on threads of
one process: one invocation's flush emptied the buffer under another's, which then failed to serialise
("Must contain at least one metric": a 502), and metrics were published with another request's dimensions.
Here each thread gets its own powertools provider (buffer, dimensions, metadata), and `log_metrics` flushes the
provider of the thread the invocation runs on.

Where the flushed lines go: on Lambda, stdout, which CloudWatch reads them from. The local stack's processes send
them where LOCAL_METRICS says (`send_metrics`): a file under the data dir by default, so the console shows the
stack's own lines and one line per request, not a JSON blob per invocation.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

METRICS_FILE = "metrics.log"  # under the data dir: one EMF line per flush
Destination = Literal["file", "console", "off"]
Write = Callable[[str], None]


class _EMFProvider(AmazonCloudWatchEMFProvider):
    """powertools' EMF provider, flushing to its owner's `write` when one is set (else to stdout, as on Lambda)."""

    def __init__(self, owner: PerThreadMetricsProvider, **options: Any) -> None:
        super().__init__(**options)
        self._owner = owner

    def flush_metrics(self, raise_on_empty_metrics: bool = False) -> None:
        write = self._owner.write
        if write is None or not self.metric_set or is_metrics_disabled():
            super().flush_metrics(raise_on_empty_metrics)
            return
        write(json.dumps(self.serialize_metric_set(), separators=(",", ":")))
        self.clear_metrics()


class PerThreadMetricsProvider:
    """A powertools metrics provider whose state is the calling thread's own."""

    def __init__(self, namespace: str | None, service: str | None) -> None:
        self._namespace = namespace
        self._service = service
        self._local = threading.local()
        self.write: Write | None = None  # where flushed lines go; None: stdout

    def current(self) -> AmazonCloudWatchEMFProvider:
        provider: AmazonCloudWatchEMFProvider | None = getattr(self._local, "provider", None)
        if provider is None:
            provider = _EMFProvider(
                self,
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


def keep_metrics_per_thread() -> PerThreadMetricsProvider:
    """Give the layer's `metrics` a provider per thread; call before any handler module is loaded (its
    `log_metrics` decorator binds the provider it finds). Calling again changes nothing."""
    from agent_memory.observability import metrics

    provider: object = metrics.provider
    if not isinstance(provider, PerThreadMetricsProvider):
        provider = PerThreadMetricsProvider(metrics.provider.namespace, metrics.provider.service)
        metrics.provider = provider  # type: ignore[assignment]  # the provider's interface, not its class
    return provider


class AppendToFile:
    """Lines appended to a file, whole (one write each, under a lock: the API's threads flush at once, and the
    workers' process appends to the same file)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")


def send_metrics(destination: Destination, data_dir: Path) -> None:
    """Where this process's flushed metrics go: `file` (data_dir/metrics.log), `console` (stdout, as on Lambda)
    or `off`."""
    write: Write | None = None
    if destination == "file":
        write = AppendToFile(data_dir / METRICS_FILE)
    elif destination == "off":
        write = _discard
    keep_metrics_per_thread().write = write


def _discard(_: str) -> None:
    return None
