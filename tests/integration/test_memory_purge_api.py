"""Purging one memory over the deployed handlers (moto): DELETE .../memories/{key}?purge=true removes the memory and
its field's whole history from every read, as-of reads and the export included, with the saved search indexes and
cached contexts that held their text; the user's other memories stay. A plain DELETE keeps the history."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory.adapters.dynamodb.index_snapshots import DynamoIndexSnapshotStore
from agent_memory.domain.keys import cache_partition_key, partition_key, snapshot_partition_key
from agent_memory.domain.models import ScopeRef
from agent_memory.settings import get_settings
from tests.fakes.api_calls import inject, ok, save

TENANT = "acme"


def partition(client: Any, pk: str) -> list[dict[str, Any]]:
    return client.query(TableName=get_settings().memory_table_name, KeyConditionExpression="pk = :pk",
                        ExpressionAttributeValues={":pk": {"S": pk}}, ConsistentRead=True)["Items"]


def mentions(client: Any, user: ScopeRef, *texts: str) -> list[str]:
    """The user's items (memories, pointers, keywords, caches, snapshots) holding any of the texts."""
    items = [item for pk in (partition_key(user), cache_partition_key(user), snapshot_partition_key(user))
             for item in partition(client, pk)]
    return [f"{item['pk']['S']} {item['sk']['S']}" for item in items
            if any(text in json.dumps(item, ensure_ascii=False, default=str) for text in texts)]


def search(api: Any, user: str, query: str, **extra: Any) -> list[str]:
    body = ok(api.call("POST", f"/v1/users/{user}/memories/search",
                       {"query": query, "min_relevance_score": 0, **extra}))
    return [r["content_preview"] for r in body["results"]]


def test_given_a_field_superseded_twice_when_purged_then_nothing_reads_any_version_and_the_rest_stays(
        api, lambda_env):
    user = f"u-{uuid.uuid4().hex[:8]}"
    scope, base = ScopeRef(tenant_id=TENANT, user_id=user), f"/v1/users/{user}"
    before = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    save(api, user, "FACT", "Lives in Porto with a cat named Miso", field="location",
         keywords=[{"term": "porto"}, {"term": "miso"}])
    save(api, user, "FACT", "Lives in Lisbon with a cat named Miso", field="location")
    current = save(api, user, "FACT", "住在里斯本的阿尔法玛区", field="location")["memory"]
    kept = save(api, user, "INTENT", "Plans to apply for the Portuguese D7 visa next spring")["memory"]
    middle = ok(api.call("GET", f"{base}/memories/{current['memory_key']}"))
    assert search(api, user, "Miso Porto", as_of=middle["history"][0]["valid_from"])  # the past knows it
    inject(api, {"user_id": user, "conversation_id": "c-1", "max_context_tokens": 4000,
                 "messages": [{"role": "user", "content": "Where does my cat live?"}]})  # a cached context
    snapshots = DynamoIndexSnapshotStore(table_name=get_settings().memory_table_name, client=lambda_env)
    assert snapshots.put(scope, 99, lambda: b"index of Miso the cat in Lisbon" * 100)
    assert mentions(lambda_env, scope, "Miso", "里斯本")

    purged = ok(api.call("DELETE", f"{base}/memories/{middle['history'][1]['memory_key']}", query="purge=true"))

    assert purged["deleted"] is True and len(purged["purged_versions"]) == 3
    assert purged["purged_versions"][-1] == current["memory_key"]
    assert mentions(lambda_env, scope, "Miso", "里斯本", "porto") == []
    assert partition(lambda_env, snapshot_partition_key(scope)) == []
    assert partition(lambda_env, cache_partition_key(scope)) == []
    for as_of in ({}, {"as_of": middle["history"][0]["valid_from"]}, {"as_of": before}):
        found = search(api, user, "Miso Lisbon 里斯本", **as_of)
        assert not any("Miso" in text or "里斯本" in text for text in found), (as_of, found)
    assert api.call("GET", f"{base}/memories/{current['memory_key']}").status == 404
    exported = ok(api.call("GET", f"{base}/export"))
    assert len(exported["memories"]) == 1 and kept["memory_key"] in json.dumps(exported["memories"])
    assert not any(text in json.dumps(exported, ensure_ascii=False) for text in ("Miso", "里斯本"))
    assert search(api, user, "D7 visa") == [kept["content"]]


def test_given_a_plain_delete_then_the_history_stays_until_a_purge_removes_it(api, lambda_env):
    user = f"u-{uuid.uuid4().hex[:8]}"
    base = f"/v1/users/{user}"
    gone = save(api, user, "FACT", "Keeps a parrot called Kiwi")["memory"]
    assert ok(api.call("DELETE", f"{base}/memories/{gone['memory_key']}")) == {
        "deleted": True, "memory_key": gone["memory_key"]}
    assert search(api, user, "parrot Kiwi", as_of=gone["created_at"]) == ["Keeps a parrot called Kiwi"]

    purged = ok(api.call("DELETE", f"{base}/memories/{gone['memory_key']}", query="purge=true"))

    assert purged["purged_versions"] == [gone["memory_key"]]
    assert search(api, user, "parrot Kiwi", as_of=gone["created_at"]) == []
    again = api.call("DELETE", f"{base}/memories/{gone['memory_key']}", query="purge=true")
    assert again.status == 404


def test_given_a_purge_flag_other_than_true_or_false_or_an_unknown_parameter_then_422_names_it(api, lambda_env):
    user = f"u-{uuid.uuid4().hex[:8]}"
    saved = save(api, user, "FACT", "Keeps a parrot called Kiwi")["memory"]
    path = f"/v1/users/{user}/memories/{saved['memory_key']}"

    for query, field in (("purge=perhaps", "purge"), ("purge=1", "purge"), ("purge=yes", "purge"),
                         ("purge=TRUE", "purge"), ("purge=", "purge"), ("hard=true", "hard")):
        refused = api.call("DELETE", path, query=query)
        assert refused.status == 422, refused.body
        assert [d["field"] for d in refused.body["error"]["details"]] == [field]
    assert search(api, user, "parrot") == ["Keeps a parrot called Kiwi"]  # nothing was deleted
