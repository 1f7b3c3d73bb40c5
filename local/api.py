"""The local HTTP front door: what API Gateway's HTTP API does for the deployed functions (the template's
routes, payload 2.0 events, the 10 MB limit, a 502 for a crashed handler), as a WSGI app on werkzeug's
threaded server. Protocol faults get JSON errors: an unparsable request line, a bad Content-Length, an
oversized body (answered without reading it, and the connection closed, so its bytes are never taken
for a next request).

Local only: `/` redirects to the memory inspector (`/ui`), `GET /health` adds the stack's queues and workers to
the function's answer (local.health), and each request prints one line: method, path, status, milliseconds.

`python -m local.api --port N` runs it in its own process; `make run` starts it (see local.stack).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote, urlsplit

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from agent_memory.adapters.dynamodb.capacity import metered
from local.health import HEALTH_ROUTES, LocalParts
from local.memory_trim import start_trimming
from local.runtime import LocalFunctions, http_api_event, match_route, response_parts

MAX_REQUEST_BYTES = 10 * 1024 * 1024  # API Gateway HTTP API's own payload limit
# Local only, never in template.yaml: invoke a function with the body as its event (`make rollup`).
LOCAL_INVOKE_PREFIX = "/_local/invoke/"
HOME = "/ui"  # where `/` sends a browser: the memory inspector


def error_response(status: int, code: str, message: str, details: Any = None, *, close: bool = False) -> Response:
    response = Response(json.dumps({"error": {"code": code, "message": message, "details": details}}),
                        status=status, content_type="application/json")
    if close:  # the request's body was not read: the connection cannot carry another request
        response.headers["Connection"] = "close"
    return response


def too_large() -> Response:
    """The 413, answered without reading the body."""
    return error_response(413, "payload_too_large", "request exceeds 10 MB", {"limit_bytes": MAX_REQUEST_BYTES},
                          close=True)


class FrontDoor:
    """The WSGI app: one request in, one function invocation, its response out."""

    def __init__(self, functions: LocalFunctions, local_parts: LocalParts | None = None) -> None:
        self.functions = functions
        self.local_parts = local_parts  # the stack's queues and workers, for GET /health
        self._in_flight = 0
        self._idle = threading.Condition()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self._idle:
            self._in_flight += 1
        try:
            return self._respond(Request(environ))(environ, start_response)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait for the requests in flight to finish; False if some are still running at the timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout=timeout)

    def _respond(self, request: Request) -> Response:
        declared = request.environ.get("CONTENT_LENGTH") or ""
        if declared and not declared.isdigit():
            return error_response(400, "bad_request", "Content-Length must be a non-negative integer",
                                  {"header": "Content-Length"}, close=True)
        if declared and int(declared) > MAX_REQUEST_BYTES:
            return too_large()
        request.max_content_length = MAX_REQUEST_BYTES  # also bounds a chunked body
        try:
            body = request.get_data(cache=False)
        except RequestEntityTooLarge:
            return too_large()
        # A client may send the request target as raw UTF-8 (curl does for "?keyword=香港"), which API Gateway
        # reads as UTF-8. http.server decoded the line as latin-1 and werkzeug's RAW_URI re-encodes that
        # str as UTF-8 and decodes it as latin-1: undone twice, the bytes as sent, then read as UTF-8.
        try:
            as_read = (request.environ.get("RAW_URI") or request.full_path).encode("latin-1").decode("utf-8")
            target = as_read.encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            return error_response(400, "bad_request", "the request target is not UTF-8", {"field": "url"})
        raw = urlsplit(target)
        if raw.path.startswith(LOCAL_INVOKE_PREFIX):
            return self._invoke(request.method, raw.path.removeprefix(LOCAL_INVOKE_PREFIX), body)
        if raw.path == "/" and request.method in ("GET", "HEAD"):
            return Response(status=302, headers={"Location": HOME})
        found = match_route(request.method, raw.path)
        if found is None:
            return error_response(404, "route_not_found", f"no route for {request.method} {raw.path}")
        route, params = found
        event = http_api_event(route=route, path_parameters={k: unquote(v) for k, v in params.items()},
                               method=request.method, path=raw.path, query=raw.query,
                               headers=dict(request.headers.items()), body=body or None)
        try:
            with metered() as reads:
                status, headers, payload = response_parts(self.functions.invoke(route.function, event))
            headers = {**headers, READ_UNITS_HEADER: f"{reads.read_units:g}"}
        except Exception as error:  # a crash the handler didn't turn into a response: API Gateway's 502
            sys.stderr.write(f"{route.function} failed: {error!r}\n")
            return Response(b'{"message":"Internal Server Error"}', status=502, content_type="application/json")
        if route.route_key in HEALTH_ROUTES and self.local_parts is not None:
            status, headers, payload = self.local_parts.added_to(status, headers, payload)
        hop_by_hop = ("content-length", "connection", "transfer-encoding")
        headers = {k: v for k, v in headers.items() if k.lower() not in hop_by_hop}
        return Response(payload, status=status, headers=headers)

    def _invoke(self, method: str, logical_id: str, body: bytes) -> Response:
        """What `aws lambda invoke` does: the event in, the handler's result (or its error) out."""
        if method != "POST" or logical_id not in self.functions.names():
            names = ", ".join(self.functions.names())
            return error_response(404, "route_not_found", f"POST {LOCAL_INVOKE_PREFIX}<function>; functions: {names}")
        try:
            event = json.loads(body or b"{}")
        except ValueError as error:
            return error_response(400, "invalid_json", f"the event is not JSON: {error}", {"field": "body"})
        try:
            result = self.functions.invoke(logical_id, event)
        except Exception as error:  # Lambda's shape for a function error
            sys.stderr.write(f"{logical_id} failed: {error!r}\n")
            return Response(json.dumps({"errorType": type(error).__name__, "errorMessage": str(error)}),
                            status=500, content_type="application/json")
        return Response(json.dumps(result, ensure_ascii=False), content_type="application/json")


# The DynamoDB read units the request consumed (a local diagnostic: what the cost of serving a user grows with).
READ_UNITS_HEADER = "X-Local-Read-Units"


def access_line(method: str, path: str, status: int | str, milliseconds: float) -> str:
    """One request, as the console shows it: `GET /v1/tools 200 12 ms` (the path without its query string,
    which may carry a user's words)."""
    return f"{method} {path} {status} {milliseconds:.0f} ms"


_CONSOLE = threading.Lock()


class JsonErrorRequestHandler(WSGIRequestHandler):
    """Errors the server answers itself (a request line or headers it cannot parse) in the API's JSON shape, and
    one short line per request on stdout instead of werkzeug's access log."""

    _started = 0.0

    def parse_request(self) -> bool:
        self._started = time.perf_counter()  # the request line is read: the request has arrived
        return super().parse_request()

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        try:  # the request line as sent (raw UTF-8 allowed), read as http.server decoded it
            target = self.path.encode("latin-1").decode("utf-8", errors="replace")
        except (AttributeError, UnicodeEncodeError):
            target = getattr(self, "path", "?")
        line = access_line(self.command or "-", urlsplit(target).path or target, getattr(code, "value", code),
                           (time.perf_counter() - self._started) * 1000)
        with _CONSOLE:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "Error"
        self.log_error("code %d, message %s", code, message)
        if self.request_version == "HTTP/0.9":  # an unparsable request line: answer with a status line anyway
            self.request_version = "HTTP/1.0"
        body = json.dumps({"error": {"code": "bad_request" if code == 400 else phrase.lower().replace(" ", "_"),
                                     "message": message or phrase, "details": None}}).encode()
        self.send_response(code, phrase)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(body)


def serve(functions: LocalFunctions, port: int, local_parts: LocalParts | None = None
          ) -> tuple[BaseWSGIServer, FrontDoor]:
    """The front door on 127.0.0.1:port (0 = any free port), not yet serving."""
    app = FrontDoor(functions, local_parts)
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=JsonErrorRequestHandler)
    return server, app


def main() -> None:
    """The API process of `make run`: its environment (tables, queues, endpoints) comes from local.stack."""
    from local.health import sqs_client
    from local.metrics import send_metrics
    from local.settings import LocalSettings

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--workers-pid", type=int, help="the workers' process, whose life GET /health reports")
    args = parser.parse_args()
    settings = LocalSettings()
    functions = LocalFunctions(settings.containers_per_function, snap_start=True)
    send_metrics(settings.metrics, settings.data_dir)
    functions.prewarm()  # before the API answers: the first request finds the containers SnapStart would restore
    parts = LocalParts(settings.queue_urls, sqs_client(), args.workers_pid)
    server, app = serve(functions, args.port, parts)
    start_trimming(settings.memory_trim_seconds)

    def stop(*_: object) -> None:  # stop accepting; requests in flight still finish
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever()
    server.server_close()
    if not app.wait_idle(timeout=settings.drain_timeout_seconds + 30):
        sys.stderr.write("api: stopped with requests still running\n")


if __name__ == "__main__":
    main()
