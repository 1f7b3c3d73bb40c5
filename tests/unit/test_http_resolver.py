"""The resolver every handler is built on, under the local server's concurrency."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agent_memory.api.http import new_resolver


def _event(path: str) -> dict[str, Any]:
    return {"version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
            "headers": {"x-tenant-id": path.rsplit("/", 1)[-1]},
            "requestContext": {"http": {"method": "GET", "path": path}, "stage": "$default"}, "isBase64Encoded": False}


def test_given_two_resolvers_resolving_at_once_then_each_routes_and_reads_its_own_request():
    """Two simulated containers of the local server, one process: each request must see its own event, though
    powertools keeps the event on a class (the barrier makes both set theirs before either reads it)."""
    both_resolving = threading.Barrier(2, timeout=5)

    def container() -> Any:
        app = new_resolver()

        @app.get("/echo/<name>")
        def echo(name: str) -> dict[str, str]:
            both_resolving.wait()
            return {"name": name, "path": app.current_event.path, "tenant": app.current_event.headers["x-tenant-id"]}

        return app

    apps = [container(), container()]
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(lambda pair: pair[0].resolve(_event(pair[1]), None),
                                [(apps[0], "/echo/alice"), (apps[1], "/echo/bob")]))

    assert [a["statusCode"] for a in answers] == [200, 200]
    assert [a["body"] for a in answers] == ['{"name":"alice","path":"/echo/alice","tenant":"alice"}',
                                           '{"name":"bob","path":"/echo/bob","tenant":"bob"}']


def test_every_answer_of_a_handler_says_nosniff_successes_errors_and_unknown_routes_alike():
    from agent_memory.api.http import http_handler
    from agent_memory.errors import InvalidInput
    from local.runtime import LambdaContext

    app = new_resolver()

    @app.get("/fine")
    def fine() -> dict[str, str]:
        return {"ok": "yes"}

    @app.get("/refused")
    def refused() -> dict[str, str]:
        raise InvalidInput("no", details=[{"field": "x"}])

    handler = http_handler(app)
    answers = [handler(_event(path), LambdaContext(function_name="Test", timeout_ms=3000))
               for path in ("/fine", "/refused", "/nowhere")]

    assert [a["statusCode"] for a in answers] == [200, 422, 404]
    assert all(a["headers"]["X-Content-Type-Options"] == "nosniff" for a in answers)
    assert all(a["headers"]["Content-Type"] == "application/json" for a in answers)
