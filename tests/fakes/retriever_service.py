"""A retriever service on 127.0.0.1, as a knowledge, experience, SOP or protocol endpoint would be:
POST {query, user_id, tenant_id, limit} -> {items: [...]}. It records every request body."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

Answer = Callable[[str, dict[str, Any]], list[dict[str, Any]]]  # (path, request body) -> items


class RetrieverService:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                service.calls.append(body)
                data = json.dumps({"items": service.answer(self.path.strip("/"), body)}, ensure_ascii=False).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> RetrieverService:
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
