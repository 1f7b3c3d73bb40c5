"""The OpenSearch tier in GET /health: the node answers and the index (its alias) is there."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agent_memory.domain.health import SearchHealth

PROBE_TIMEOUT_SECONDS = 2


class OpenSearchProbe:
    def __init__(self, client: Callable[[], Any], alias: str) -> None:
        """`client`: the opensearch-py client, made on the first probe."""
        self._client = client
        self._alias = alias

    def __call__(self) -> SearchHealth:
        started = time.perf_counter()
        try:
            present = self._client().indices.exists(index=self._alias, request_timeout=PROBE_TIMEOUT_SECONDS)
        except Exception as error:  # any failure of the node is the tier being down, said by its kind
            return SearchHealth(tier="opensearch", status="down", error=f"{type(error).__name__}: the node at "
                                "the configured endpoint does not answer")
        latency = round((time.perf_counter() - started) * 1000, 1)
        if not present:
            return SearchHealth(tier="opensearch", status="down", latency_ms=latency,
                                error=f"the index {self._alias} is missing (make reindex builds it)")
        return SearchHealth(tier="opensearch", status="ok", latency_ms=latency)
