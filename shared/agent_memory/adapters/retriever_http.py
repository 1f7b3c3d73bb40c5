"""A knowledge or experience retriever behind HTTP (a knowledge service's endpoint).

Contract: ``POST <url>`` with ``{"query", "user_id", "tenant_id", "limit"}``; the answer is
``{"items": [{"content", "source"?, "similarity"?, "category"?}, ...]}``. A slow or failing retriever
costs its block, never the inject request: errors are logged and read as "nothing found".
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from agent_memory.domain.models import ScopeRef
from agent_memory.observability import logger

MAX_RESPONSE_BYTES = 1_000_000


class HttpRetriever:
    def __init__(self, *, url: str, timeout_seconds: float = 1.0, headers: dict[str, str] | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"retriever url must be http(s): {url!r}")
        self._url = url
        self._timeout = timeout_seconds
        self._headers = {"content-type": "application/json", "accept": "application/json", **(headers or {})}

    def retrieve(self, user: ScopeRef, query: str, limit: int) -> list[dict[str, Any]]:
        body = json.dumps({"query": query, "user_id": user.user_id, "tenant_id": user.tenant_id, "limit": limit},
                          ensure_ascii=False).encode()
        request = urllib.request.Request(self._url, data=body, headers=self._headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                payload = json.loads(response.read(MAX_RESPONSE_BYTES))
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as error:
            logger.warning("retriever failed", url=self._url, error=type(error).__name__)
            return []
        items = payload.get("items") if isinstance(payload, dict) else None
        if not isinstance(items, list):
            logger.warning("retriever answered without an items list", url=self._url)
            return []
        return [i for i in items if isinstance(i, dict) and isinstance(i.get("content"), str) and i["content"]][:limit]
