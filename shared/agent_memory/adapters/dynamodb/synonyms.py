"""Keyword synonyms, per tenant, in the memory table.

Items: ``pk = T#<tenant>#SYN``, ``sk = K#<keyword>#S#<synonym>`` with a similarity score; both
directions are stored, so a lookup is one Query. Reads are cached per container for a short time, for at most
`max_tenants` tenants (the least recently used one goes first).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.batch import write_all
from agent_memory.adapters.dynamodb.items import from_item, raise_domain_error, to_item
from agent_memory.domain.keys import synonyms_partition_key
from agent_memory.domain.text.keywords import normalize_keyword

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient


def synonym_sort_key(keyword: str, synonym: str) -> str:
    return f"K#{keyword}#S#{synonym}"


def synonym_item(tenant_id: str, keyword: str, synonym: str, similarity: float) -> dict[str, Any]:
    """One direction of a pair, its terms normalised as a lookup normalises a query's."""
    return to_item({"pk": synonyms_partition_key(tenant_id), "sk": synonym_sort_key(keyword, synonym),
                    "kind": "synonym", "keyword": keyword, "synonym": synonym,
                    "similarity_score": f"{similarity:.4f}"})


class DynamoSynonymStore:
    def __init__(self, *, table_name: str, client: DynamoDBClient, cache_seconds: float = 60.0,
                 max_tenants: int = 256) -> None:
        self._table = table_name
        self._client = client
        self._cache_seconds = cache_seconds
        self._max_tenants = max_tenants
        self._cache: OrderedDict[str, tuple[float, dict[str, dict[str, float]]]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, tenant_id: str, keyword: str, synonyms: list[str], similarity: float) -> int:
        term = normalize_keyword(keyword)
        pairs = {(term, normalize_keyword(s)) for s in synonyms} | {(normalize_keyword(s), term) for s in synonyms}
        pairs = {(a, b) for a, b in pairs if a and b and a != b}
        items = [{"PutRequest": {"Item": synonym_item(tenant_id, a, b, similarity)}} for a, b in sorted(pairs)]
        try:
            write_all(self._client, self._table, items)
        except ClientError as error:
            raise_domain_error(error)
        with self._lock:
            self._cache.pop(tenant_id, None)
        return len(items)

    def pairs(self, tenant_id: str) -> dict[str, dict[str, float]]:
        """Every synonym of the tenant: keyword -> synonym -> similarity (both directions, as stored)."""
        return {keyword: dict(found) for keyword, found in self._tenant_table(tenant_id).items()}

    def forget(self, tenant_id: str) -> None:
        """Drop this container's cached synonyms of the tenant (they were written around the store)."""
        with self._lock:
            self._cache.pop(tenant_id, None)

    def synonyms_for(self, tenant_id: str, terms: list[str]) -> dict[str, list[tuple[str, float]]]:
        table = self._tenant_table(tenant_id)
        found = {}
        for term in terms:
            entries = table.get(normalize_keyword(term))
            if entries:
                found[term] = sorted(entries.items(), key=lambda kv: (-kv[1], kv[0]))
        return found

    def _tenant_table(self, tenant_id: str) -> dict[str, dict[str, float]]:
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(tenant_id)
            if cached and now - cached[0] < self._cache_seconds:
                self._cache.move_to_end(tenant_id)
                return cached[1]
        table: dict[str, dict[str, float]] = {}
        params: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": synonyms_partition_key(tenant_id)}},
        }
        try:
            while True:
                response = self._client.query(**params)
                for item in response.get("Items", []):
                    values = from_item(item)
                    table.setdefault(values["keyword"], {})[values["synonym"]] = float(values["similarity_score"])
                if "LastEvaluatedKey" not in response:
                    break
                params["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        except ClientError as error:
            raise_domain_error(error)
        with self._lock:
            self._cache[tenant_id] = (now, table)
            self._cache.move_to_end(tenant_id)
            while len(self._cache) > self._max_tenants:
                self._cache.popitem(last=False)
        return table
