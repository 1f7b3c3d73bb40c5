"""The memory API, scripted, for the Python client over httpx.MockTransport: queued answers, every request
recorded, and the answers the tests script (pages of memories, a batch saved, a batch refused over the embedding
budget)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

BASE = "http://memory.test/prod"


@dataclass
class Server:
    """A scripted API: answers queued responses (the last one repeats) and records every request."""

    answers: list[httpx.Response | Exception] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else (self.answers or [ok()])[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]


def ok(payload: Any = None, status: int = 200, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={} if payload is None else payload, headers=headers)


def api_error(status: int, code: str = "some_code", message: str = "it failed", details: Any = None,
              headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": message, "details": details}},
                          headers=headers)


def memory(key: str) -> dict[str, Any]:
    return {"memory_key": key, "content": key}


def pages(*keys: Iterable[str]) -> list[httpx.Response]:
    groups = [list(k) for k in keys]
    return [ok({"items": [memory(k) for k in group], "next_cursor": f"cur-{i + 1}" if i + 1 < len(groups) else None})
            for i, group in enumerate(groups)]


def budget_refusal(item_tokens: list[int], limit: int) -> httpx.Response:
    return api_error(413, "payload_too_large", "over the embedding budget", [
        {"field": "memories", "type": "embedding_budget", "limit": limit, "tokens": sum(item_tokens),
         "item_tokens": item_tokens}])


def batch_answer(keys: list[str]) -> httpx.Response:
    return ok({"saved_count": len(keys), "memory_keys": keys,
               "results": [{"index": i, "memory_key": k, "outcome": "created", "superseded_key": None}
                           for i, k in enumerate(keys)]}, status=201)
