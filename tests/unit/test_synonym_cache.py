"""The per-container synonyms cache keeps at most `max_tenants` tenants, the least recently used dropped first."""

from __future__ import annotations

from typing import Any

from agent_memory.adapters.dynamodb.synonyms import DynamoSynonymStore


class CountingClient:
    """A table holding one synonym pair per tenant; counts the Query calls per tenant."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def query(self, **params: Any) -> dict[str, Any]:
        pk = params["ExpressionAttributeValues"][":pk"]["S"]
        self.queries.append(pk.split("#")[1])
        item = {"pk": {"S": pk}, "keyword": {"S": "car"}, "synonym": {"S": "auto"}, "similarity_score": {"S": "0.9"}}
        return {"Items": [item]}


def test_given_more_tenants_than_the_bound_then_the_least_recently_used_is_read_again():
    client = CountingClient()
    store = DynamoSynonymStore(table_name="t", client=client, max_tenants=2)

    for tenant in ("a", "b", "a", "c", "a", "b"):
        assert store.synonyms_for(tenant, ["car"]) == {"car": [("auto", 0.9)]}

    # a and b cached; a used again; c evicts b (least recently used); a still cached; b read again.
    assert client.queries == ["a", "b", "c", "b"]
