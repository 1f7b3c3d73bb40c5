"""A scope's documents out of the OpenSearch index, and the count that checks none is left.

The table's stream deletes a document when its memory item goes, but asynchronously: an erasure removes the
scope's documents itself too, by a filtered search for their ids and bulk deletes (OpenSearch Serverless
has no delete-by-query), until the search finds none. Writes become searchable when the engine refreshes
(about a second; Serverless has no refresh call), so the count is asked again for a few seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agent_memory.adapters.opensearch.index import _raise_for
from agent_memory.domain.models import ScopeRef

PAGE = 500


class OpenSearchScopeEraser:
    def __init__(self, *, client: Any, alias: str, settle_seconds: float = 5.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._client = client
        self._alias = alias
        self._settle = settle_seconds
        self._sleep = sleep

    def erase(self, scope: ScopeRef) -> tuple[int, int]:
        """(documents found, documents removed)."""
        found = removed = 0
        seen: set[str] = set()
        deadline = time.monotonic() + self._settle
        while True:
            ids = [i for i in self._ids(scope) if i not in seen]
            if ids:
                found += len(ids)
                removed += self._delete(ids)
                seen.update(ids)
                continue
            if time.monotonic() >= deadline or not self.count(scope):
                return found, removed
            self._sleep(0.5)  # deleted ones still visible until the engine refreshes

    def count(self, scope: ScopeRef) -> int:
        try:
            response = self._client.count(index=self._alias, body={"query": self._query(scope)})
        except Exception as error:  # opensearch-py errors: translated (or re-raised) in one place
            _raise_for(error)
        return int(response.get("count", 0))

    def remaining(self, scope: ScopeRef) -> int:
        """The final check: documents of the scope still searchable once the deletes had time to show."""
        deadline = time.monotonic() + self._settle
        while True:
            left = self.count(scope)
            if not left or time.monotonic() >= deadline:
                return left
            self._sleep(0.5)

    @staticmethod
    def _query(scope: ScopeRef) -> dict[str, Any]:
        return {"bool": {"filter": [{"term": {"tenant_id": scope.tenant_id}}, {"term": {"user_id": scope.user_id}}]}}

    def _ids(self, scope: ScopeRef) -> list[str]:
        try:
            response = self._client.search(index=self._alias, body={"size": PAGE, "_source": False,
                                                                    "query": self._query(scope)})
        except Exception as error:
            _raise_for(error)
        return [str(hit["_id"]) for hit in response.get("hits", {}).get("hits", [])]

    def _delete(self, ids: list[str]) -> int:
        try:
            response = self._client.bulk(index=self._alias, body=[{"delete": {"_id": i}} for i in ids])
        except Exception as error:
            _raise_for(error)
        return sum(1 for item in response.get("items", []) if int(item.get("delete", {}).get("status", 0)) < 300)
