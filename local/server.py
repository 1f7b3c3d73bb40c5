"""`make run`: the API on http://127.0.0.1:3000 without Docker, as `sam local start-api` would serve it.

AWS comes from moto in server mode; tables are created from template.yaml's own definitions.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from local.runtime import (
    LocalFunctions,
    apply_local_environment,
    create_local_resources,
    http_api_event,
    match_route,
    response_parts,
)
from local.template import sqs_event_sources

MAX_REQUEST_BYTES = 10 * 1024 * 1024  # API Gateway HTTP API's own payload limit
# Local only, never in template.yaml: invoke a function with the body as its event (`make rollup`).
LOCAL_INVOKE_PREFIX = "/_local/invoke/"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalAws:
    """moto in server mode on loopback, with the template's tables."""

    def __init__(self, port: int | None = None) -> None:
        from moto.server import ThreadedMotoServer

        self.port = port or free_port()
        self.queues: dict[str, str] = {}
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LocalAws:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's per-request access log is noise here
        self._server.start()
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
        os.environ["AWS_ENDPOINT_URL"] = self.endpoint
        import boto3

        self.queues = create_local_resources(
            boto3.client("dynamodb", endpoint_url=self.endpoint, region_name="us-east-1"),
            boto3.client("sqs", endpoint_url=self.endpoint, region_name="us-east-1"),
        )
        return self

    def stop(self) -> None:
        self._server.stop()


def make_handler(functions: LocalFunctions) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "agent-memory-local"

        def _serve(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_REQUEST_BYTES:
                self._send(413, {"content-type": "application/json"},
                           b'{"error":{"code":"payload_too_large","message":"request exceeds 10 MB","details":null}}')
                return
            body = self.rfile.read(length) if length else None
            if url.path.startswith(LOCAL_INVOKE_PREFIX):
                self._invoke(url.path.removeprefix(LOCAL_INVOKE_PREFIX), body)
                return
            found = match_route(self.command, url.path)
            if found is None:
                message = {"error": {"code": "route_not_found", "message": f"no route for {self.command} {url.path}",
                                     "details": None}}
                self._send(404, {"content-type": "application/json"}, json.dumps(message).encode())
                return
            route, params = found
            event = http_api_event(route=route, path_parameters=params, method=self.command, path=url.path,
                                   query=url.query, headers=dict(self.headers.items()), body=body)
            try:
                status, headers, payload = response_parts(functions.invoke(route.function, event))
            except Exception as error:  # a crash the handler didn't turn into a response: API Gateway's 502
                sys.stderr.write(f"{route.function} failed: {error!r}\n")
                status, headers = 502, {"content-type": "application/json"}
                payload = b'{"message":"Internal Server Error"}'
            self._send(status, headers, payload)

        def _invoke(self, logical_id: str, body: bytes | None) -> None:
            """What `aws lambda invoke` does: the event in, the handler's result (or its error) out."""
            json_type = {"content-type": "application/json"}
            if self.command != "POST" or logical_id not in functions.names():
                message = f"POST {LOCAL_INVOKE_PREFIX}<function>; functions: {', '.join(functions.names())}"
                self._send(404, json_type, json.dumps({"error": {"code": "route_not_found", "message": message,
                                                                 "details": None}}).encode())
                return
            try:
                result = functions.invoke(logical_id, json.loads(body or b"{}"))
            except Exception as error:  # Lambda's shape for a function error
                sys.stderr.write(f"{logical_id} failed: {error!r}\n")
                self._send(500, json_type, json.dumps({"errorType": type(error).__name__,
                                                       "errorMessage": str(error)}).encode())
                return
            self._send(200, json_type, json.dumps(result, ensure_ascii=False).encode())

        def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
            self.send_response(status)
            for name, value in headers.items():
                if name.lower() not in ("content-length", "connection"):
                    self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _serve

        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    return Handler


class LocalStack:
    """moto + the HTTP front door; usable from tests as a context manager."""

    def __init__(self, *, port: int = 3000, parameters: dict[str, str] | None = None,
                 rollup_every_seconds: float = 0, rollup_week: str | None = None) -> None:
        self.parameters = parameters
        self.rollup_every_seconds = rollup_every_seconds  # > 0: fire the weekly schedule this often (demos)
        self.rollup_week = rollup_week
        self.aws = LocalAws()
        self.functions = LocalFunctions()
        self.port = port
        self._http: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._pollers: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LocalStack:
        self.aws.start()
        apply_local_environment(self.parameters, self.aws.queues)
        for queue, function, batch_size in sqs_event_sources():
            poller = threading.Thread(target=self._poll, args=(self.aws.queues[queue], function, batch_size),
                                      name=f"sqs-{function}", daemon=True)
            poller.start()
            self._pollers.append(poller)
        self._http = ThreadingHTTPServer(("127.0.0.1", self.port), make_handler(self.functions))
        self.port = self._http.server_address[1]
        self._thread = threading.Thread(target=self._http.serve_forever, name="local-api", daemon=True)
        self._thread.start()
        if self.rollup_every_seconds > 0:
            schedule = threading.Thread(target=self._schedule, name="rollup-schedule", daemon=True)
            schedule.start()
            self._pollers.append(schedule)
        return self

    def _schedule(self) -> None:
        """The weekly rollup's schedule, on a short interval: RollupFunction gets the schedule's event."""
        from local.rollup import schedule_event

        while not self._stopping.wait(self.rollup_every_seconds):
            try:
                plan = self.functions.invoke("RollupFunction", schedule_event(week=self.rollup_week))
                sys.stderr.write(f"rollup scheduled: {json.dumps(plan)}\n")
            except Exception as error:  # as EventBridge Scheduler would, try again next time
                sys.stderr.write(f"RollupFunction failed: {error!r}\n")

    def _poll(self, queue_url: str, function: str, batch_size: int) -> None:
        """What a Lambda SQS event source mapping does: receive, invoke, delete what succeeded."""
        import boto3

        sqs = boto3.client("sqs", endpoint_url=self.aws.endpoint, region_name="us-east-1")
        while not self._stopping.is_set():
            try:
                messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=min(10, batch_size),
                                               WaitTimeSeconds=1).get("Messages", [])
                if not messages:
                    continue
                event = {"Records": [{
                    "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                    "attributes": {}, "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
                    "eventSource": "aws:sqs", "eventSourceARN": queue_url, "awsRegion": "us-east-1",
                } for m in messages]}
                result = self.functions.invoke(function, event) or {}
                failed = {f["itemIdentifier"] for f in result.get("batchItemFailures", [])}
                for m in messages:
                    if m["MessageId"] not in failed:
                        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])
            except Exception as error:  # keep polling, as the real event source mapping would
                if not self._stopping.is_set():
                    sys.stderr.write(f"{function} poller: {error!r}\n")
                    self._stopping.wait(1)

    def stop(self) -> None:
        self._stopping.set()
        for poller in self._pollers:
            poller.join(timeout=5)
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        self.aws.stop()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    args = parser.parse_args()
    parameters = {"LlmProvider": os.environ["LLM_PROVIDER"]} if os.environ.get("LLM_PROVIDER") else None
    stack = LocalStack(port=args.port, parameters=parameters,
                       rollup_every_seconds=float(os.environ.get("ROLLUP_EVERY_SECONDS") or 0),
                       rollup_week=os.environ.get("WEEK") or None).start()
    print(f"agent-memory local API on {stack.url} (AWS: moto at {stack.aws.endpoint}); Ctrl-C stops", flush=True)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C, or a supervisor's stop
        signal.signal(signum, lambda *_: stopped.set())
    try:
        stopped.wait()
    finally:
        stack.stop()
        print("stopped", flush=True)


if __name__ == "__main__":
    main()
