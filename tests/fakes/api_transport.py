"""The Python client's requests answered by the real handlers in this process (the integration tests' LambdaApi),
over httpx.MockTransport: no sockets, the tenant taken from the client's X-Tenant-Id header."""

from __future__ import annotations

import json
from typing import Any

import httpx


def api_transport(api: Any) -> httpx.MockTransport:
    """A transport for `httpx.Client` and `httpx.AsyncClient` alike (MockTransport serves both)."""

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        answered = api.call(request.method, request.url.path, body, query=request.url.query.decode(),
                            tenant=request.headers.get("x-tenant-id"))
        return httpx.Response(answered.status, json=answered.body, headers=answered.headers)

    return httpx.MockTransport(answer)
