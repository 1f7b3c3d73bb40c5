"""The Anthropic API, scripted, for the real anthropic SDK over a mock HTTP transport (no network)."""

from __future__ import annotations

import httpx2


class Recorder:
    """An httpx MockTransport handler for the Anthropic API: answers the queued responses in turn (the last one
    repeats) and records every request."""

    def __init__(self, responses: list[httpx2.Response]) -> None:
        self.responses = responses
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.responses[min(len(self.requests), len(self.responses)) - 1]


def overloaded() -> httpx2.Response:
    return httpx2.Response(529, headers={"retry-after-ms": "1"},
                           json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
