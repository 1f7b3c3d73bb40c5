"""A Lambda-like runtime for the local stack and the tests: env from template.yaml, handlers
loaded from functions/<name>/<name>_handler.py, API Gateway HTTP API (payload 2.0) events.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType, SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl

from local.metrics import keep_metrics_per_thread
from local.template import FunctionDef, Route, functions, resolve_environment, routes

LOCAL_TABLE_PREFIX = "agent-memory-local"

# What `sam local` would pass with --parameter-overrides, plus local-only settings.
LOCAL_PARAMETERS = {"LlmProvider": "offline", "JwtIssuer": "https://local.invalid", "JwtAudience": "local"}
LOCAL_ENVIRONMENT = {
    "TENANT_SOURCE": "header",  # no authorizer locally: X-Tenant-Id (default "default")
    "POWERTOOLS_TRACE_DISABLED": "true",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


@dataclass
class LambdaContext:
    function_name: str
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/local"
    log_stream_name: str = "local"
    timeout_ms: int = 29_000
    _started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:000000000000:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self.timeout_ms - int((time.monotonic() - self._started) * 1000))


def table_names() -> dict[str, str]:
    from local.template import dynamodb_tables

    return {logical_id: f"{LOCAL_TABLE_PREFIX}-{logical_id}" for logical_id in dynamodb_tables()}


def function_environment(
    function: FunctionDef, parameters: dict[str, str] | None = None, queues: dict[str, str] | None = None
) -> dict[str, str]:
    parameters = {**LOCAL_PARAMETERS, **(parameters or {})}
    env = resolve_environment(function, physical_ids={**table_names(), **(queues or {})}, parameters=parameters)
    return {**env, **LOCAL_ENVIRONMENT}


def create_local_resources(dynamodb: Any, sqs: Any) -> dict[str, str]:
    """The template's tables and queues on a local AWS (moto); returns the queue URLs by logical id."""
    from local.template import create_queues, create_tables

    create_tables(dynamodb, table_names())
    return create_queues(sqs, LOCAL_TABLE_PREFIX)


class _SnapshotHooks:
    """What Lambda's `snapshot_restore_py` module records: the hooks a handler's module registers while it loads,
    to run before the snapshot is taken and after a restore. Installed for the local runtime only where that module
    is not importable (everywhere but Lambda)."""

    def __init__(self) -> None:
        self._loading = threading.local()

    def install(self) -> None:
        try:
            import snapshot_restore_py  # noqa: F401  (Lambda's own)
        except ImportError:
            sys.modules["snapshot_restore_py"] = SimpleNamespace(  # type: ignore[assignment]
                register_before_snapshot=lambda hook, *a, **k: self._record("before", hook, a, k),
                register_after_restore=lambda hook, *a, **k: self._record("after", hook, a, k))

    def _record(self, phase: str, hook: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        hooks = getattr(self._loading, "hooks", None)
        if hooks is not None:
            hooks.append((phase, hook, args, kwargs))

    def load(self, load: Any) -> list[tuple[str, Any, tuple[Any, ...], dict[str, Any]]]:
        """Call `load` (a module's load), returning the hooks it registered."""
        self._loading.hooks = []
        try:
            load()
            return list(self._loading.hooks)
        finally:
            self._loading.hooks = None


_SNAPSHOT_HOOKS = _SnapshotHooks()


class LocalFunctions:
    """Runs each function's handler as Lambda would: in warm containers, created on first use, up to
    `containers_per_function` per function. A container is one load of the handler's module (its own
    module state, such as its resolver); concurrent invocations of one function run in different
    containers at once, and more wait for one to be free. The layer (`agent_memory`) is shared by the
    containers of a process, as it is by the invocations of one Lambda container."""

    def __init__(self, containers_per_function: int = 1, definitions: dict[str, FunctionDef] | None = None, *,
                 snap_start: bool = False) -> None:
        """`snap_start`: a function with SnapStart in the template runs the hooks its module registers before a
        snapshot, and after a restore, as each of its containers is started (Lambda runs them once, when a
        version is published; each container then starts from that snapshot): the model loads and service
        wiring they do are no first invocation's. `prewarm` starts a container of each such function."""
        if containers_per_function < 1:
            raise ValueError("containers_per_function must be at least 1")
        self._defs = definitions if definitions is not None else functions()
        self.containers_per_function = containers_per_function
        self._slots = {name: threading.BoundedSemaphore(containers_per_function) for name in self._defs}
        self._idle: dict[str, list[ModuleType]] = {name: [] for name in self._defs}
        self._started: dict[str, int] = dict.fromkeys(self._defs, 0)
        self._lock = threading.Lock()
        self._snap_start = snap_start
        if snap_start:
            _SNAPSHOT_HOOKS.install()
        keep_metrics_per_thread()  # invocations run at once on threads: each flushes its own metrics

    def names(self) -> list[str]:
        return list(self._defs)

    def containers(self, logical_id: str) -> int:
        """How many containers of the function have been started."""
        return self._started[logical_id]

    def container(self, logical_id: str) -> ModuleType:
        """A warm container of the function (started if there is none), left idle for the next invocation:
        tests reach into its module state through it."""
        with self._slots[logical_id]:
            module = self._checkout(logical_id)
            with self._lock:
                self._idle[logical_id].append(module)
            return module

    def _load(self, logical_id: str, number: int) -> ModuleType:
        definition = self._defs[logical_id]
        spec = importlib.util.spec_from_file_location(f"lambda_{logical_id}_{number}", definition.handler_file)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        if not (self._snap_start and definition.snap_start):
            spec.loader.exec_module(module)
            return module
        hooks = _SNAPSHOT_HOOKS.load(lambda: spec.loader.exec_module(module))
        for phase in ("before", "after"):
            for _, hook, args, kwargs in (h for h in hooks if h[0] == phase):
                hook(*args, **kwargs)
        return module

    def prewarm(self) -> list[str]:
        """With `snap_start`, a container of each function with SnapStart, started and left idle, as a published
        version's first invocation finds one restored from its snapshot. The functions so started."""
        started = []
        for logical_id, definition in self._defs.items():
            if self._snap_start and definition.snap_start and not self._started[logical_id]:
                self.container(logical_id)
                started.append(logical_id)
        return started

    def _checkout(self, logical_id: str) -> ModuleType:
        with self._lock:
            if self._idle[logical_id]:
                return self._idle[logical_id].pop()  # the most recently used: the warmest
            self._started[logical_id] += 1
            number = self._started[logical_id]
        try:
            return self._load(logical_id, number)  # a cold start, outside the lock: others keep running
        except BaseException:
            with self._lock:
                self._started[logical_id] -= 1
            raise

    def invoke(self, logical_id: str, event: dict[str, Any]) -> Any:
        if logical_id not in self._defs:
            raise KeyError(f"no function {logical_id} in template.yaml; have {', '.join(self._defs)}")
        definition = self._defs[logical_id]
        handler_name = definition.handler.rsplit(".", 1)[1]
        with self._slots[logical_id]:
            container = self._checkout(logical_id)
            try:
                return getattr(container, handler_name)(
                    event, LambdaContext(function_name=logical_id, timeout_ms=definition.timeout * 1000))
            finally:
                with self._lock:
                    self._idle[logical_id].append(container)


def local_environment(parameters: dict[str, str] | None = None, queues: dict[str, str] | None = None
                      ) -> dict[str, str]:
    """Every function's environment merged: one process serves them all (each function's own
    variables, such as a queue URL, only add settings the others ignore)."""
    merged: dict[str, str] = {}
    for definition in functions().values():
        merged.update(function_environment(definition, parameters, queues))
    return merged


def apply_local_environment(parameters: dict[str, str] | None = None, queues: dict[str, str] | None = None) -> None:
    os.environ.update(local_environment(parameters, queues))


def match_route(method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    for route in routes():
        params = route.match(method, path)
        if params is not None:
            return route, params
    return None


def http_api_event(
    *,
    route: Route,
    path_parameters: dict[str, str],
    method: str,
    path: str,
    query: str = "",
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> dict[str, Any]:
    """An API Gateway HTTP API payload 2.0 event, as `sam local start-api` builds it."""
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    now = datetime.now(UTC)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route.route_key,
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": headers.get("host", "127.0.0.1"),
            "domainPrefix": "local",
            "http": {
                "method": method.upper(),
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": route.route_key,
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": False,
    }
    if path_parameters:
        event["pathParameters"] = path_parameters
    if query:
        params: dict[str, str] = {}
        for key, value in parse_qsl(query, keep_blank_values=True):
            params[key] = f"{params[key]},{value}" if key in params else value
        event["queryStringParameters"] = params
    if body:
        try:
            event["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            event["body"] = base64.b64encode(body).decode()
            event["isBase64Encoded"] = True
    return event


def response_parts(result: Any) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body from a handler result (payload 2.0 rules)."""
    if not isinstance(result, dict) or "statusCode" not in result:
        return 200, {"content-type": "application/json"}, json.dumps(result).encode()
    body = result.get("body") or ""
    raw = base64.b64decode(body) if result.get("isBase64Encoded") else body.encode("utf-8")
    headers = {k: str(v) for k, v in (result.get("headers") or {}).items()}
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers[name] = ", ".join(str(v) for v in values)
    return int(result["statusCode"]), headers, raw
