"""Retention over the deployed handlers (moto): an expired memory is found by nothing (listing, detail, search,
load, inject, the profile) before the table's TTL removes it, its items carry that TTL, a save of it again
starts it afresh, the log follows the tenant's LOG, and GET /v1/retention answers the policy."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.domain.keys import partition_key
from agent_memory.domain.models import ScopeRef
from agent_memory.settings import Settings, get_settings
from tests.fakes.api_calls import configure, inject, ok, save, summarize

TENANT = "acme"


def iso(days_ago: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days_ago)).isoformat()


@pytest.fixture
def policy(monkeypatch: pytest.MonkeyPatch, lambda_env: Any) -> None:
    configure(monkeypatch, MEMORY_RETENTION_DAYS='{"INTENT": 30, "LOG": 7}',
              MEMORY_TENANT_RETENTION_DAYS='{"globex": {"INTENT": 365}}')


def test_given_an_intent_older_than_its_retention_then_nothing_finds_it(api, policy, lambda_env, monkeypatch):
    user = f"u-{uuid.uuid4().hex[:8]}"
    base = f"/v1/users/{user}"
    # Saved while intents were kept a year; the policy then shortens to 30 days and ends it.
    configure(monkeypatch, MEMORY_RETENTION_DAYS='{"INTENT": 365, "LOG": 7}')
    old = save(api, user, "INTENT", "Plans to buy a sailing boat", created_at=iso(40))["memory"]
    configure(monkeypatch, MEMORY_RETENTION_DAYS='{"INTENT": 30, "LOG": 7}')
    save(api, user, "INTENT", "Plans to learn to sail this summer", created_at=iso(2))
    save(api, user, "FACT", "Owned a sailing dinghy as a child", created_at=iso(400))

    listed = {m["content"] for m in ok(api.call("GET", f"{base}/memories"))["items"]}
    found = [r["content_preview"] for r in ok(api.call("POST", f"{base}/memories/search", {
        "query": "sailing boat", "min_relevance_score": 0}))["results"]]
    loaded = [m["content"] for m in ok(api.call("POST", f"{base}/context/load", {"query": "boat"}))["memories"]]
    injected = json.dumps(inject(api, {"user_id": user, "conversation_id": "c-1", "max_context_tokens": 4000,
                                       "messages": [{"role": "user", "content": "Should I buy a sailing boat?"}]}))

    assert listed == {"Plans to learn to sail this summer", "Owned a sailing dinghy as a child"}
    assert "Plans to buy a sailing boat" not in found and "Owned a sailing dinghy as a child" in found
    assert "Plans to buy a sailing boat" not in loaded and "Plans to buy a sailing boat" not in injected
    assert api.call("GET", f"{base}/memories/{old['memory_key']}").status == 404
    exported = ok(api.call("GET", f"{base}/export"))["memories"]
    assert {v["content"] for m in exported for v in m["versions"]} == {
        "Plans to learn to sail this summer", "Owned a sailing dinghy as a child"}
    # Its items are still in the table until the TTL sweeper comes, stamped with the expiry it had when saved.
    item = lambda_env.get_item(TableName=get_settings().memory_table_name, Key={
        "pk": {"S": partition_key(ScopeRef(tenant_id=TENANT, user_id=user))}, "sk": {"S": f"MEM#{old['memory_key']}"}})
    assert int(item["Item"]["expires_at"]["N"]) == pytest.approx(
        (datetime.fromisoformat(old["created_at"]) + timedelta(days=365)).timestamp(), abs=1)
    assert old["expires_at"] is not None

    again = save(api, user, "INTENT", "Plans to buy a sailing boat")  # the same content, said again today

    assert again["outcome"] == "created" and again["memory"]["memory_key"] != old["memory_key"]
    assert "Plans to buy a sailing boat" in {m["content"] for m in ok(api.call("GET", f"{base}/memories"))["items"]}


def test_a_memory_saved_already_past_its_retention_is_refused_naming_the_item_and_nothing_is_written(api, policy):
    user = f"u-{uuid.uuid4().hex[:8]}"
    base = f"/v1/users/{user}"

    single = api.call("POST", f"{base}/memories", {"memoryType": "INTENT", "content": "Plans to buy a boat",
                                                   "created_at": iso(40)})
    batch = api.call("POST", f"{base}/memories/batch", {"memories": [
        {"memory_type": "FACT", "content": "Lives in Porto", "created_at": iso(400)},
        {"memory_type": "INTENT", "content": "Plans to learn to sail", "created_at": iso(31)}]})

    assert single.status == 422 and single.body["error"]["details"][0]["field"] == "created_at"
    assert single.body["error"]["details"][0]["type"] == "expired"
    assert batch.status == 422 and [d["field"] for d in batch.body["error"]["details"]] == ["memories.1.created_at"]
    assert ok(api.call("GET", f"{base}/memories"))["items"] == []


def test_a_tenant_with_a_policy_of_its_own_keeps_longer_and_retention_answers_each_policy(api, policy):
    user = f"u-{uuid.uuid4().hex[:8]}"
    assert api.call("POST", f"/v1/users/{user}/memories", {"memory_type": "INTENT", "content": "Plans a move",
                                                            "created_at": iso(40)}, tenant="globex").status == 201

    kept = ok(api.call("GET", f"/v1/users/{user}/memories", tenant="globex"))["items"]
    acme = ok(api.call("GET", "/v1/retention"))
    globex = ok(api.call("GET", "/v1/retention", tenant="globex"))

    assert [m["content"] for m in kept] == ["Plans a move"]
    assert acme == {"tenant_id": "acme", "days": {"FACT": None, "PREFERENCE": None, "INTENT": 30, "LOG": 7},
                    "tenant_specific": False}
    assert globex == {"tenant_id": "globex", "days": {"FACT": None, "PREFERENCE": None, "INTENT": 365, "LOG": 7},
                      "tenant_specific": True}


def test_the_log_is_kept_as_the_tenants_policy_says(api, policy):
    user = f"u-{uuid.uuid4().hex[:8]}"
    path = f"/v1/users/{user}/conversations/c-1/messages"

    too_old = api.call("POST", path, {"role": "user", "content": "An old remark", "created_at": iso(8)})
    logged = ok(api.call("POST", path, {"role": "user", "content": "A recent remark", "created_at": iso(1)}), 201)

    assert too_old.status == 422 and "7 days" in too_old.body["error"]["message"]
    assert datetime.fromisoformat(logged["expires_at"]) - datetime.fromisoformat(iso(1)) == pytest.approx(
        timedelta(days=7), abs=timedelta(seconds=5))


def test_an_imported_log_message_is_kept_no_longer_than_the_tenants_log_retention(api, policy):
    user = f"u-{uuid.uuid4().hex[:8]}"
    message = {"conversation_id": "c-1", "role": "user", "expires_at": "8999-12-31T00:00:00Z"}
    page = {"format": "agent-memory-export", "version": 1, "log": [
        {**message, "message_id": "m-old", "content": "An old remark", "created_at": iso(8)},
        {**message, "message_id": "m-new", "content": "A recent remark", "created_at": iso(1)}]}

    imported = ok(api.call("POST", f"/v1/users/{user}/import", page))
    exported = ok(api.call("GET", f"/v1/users/{user}/export"))["log"]

    assert imported["imported"]["log"] == 1 and imported["skipped"]["log"] == 1
    assert [m["content"] for m in exported] == ["A recent remark"]
    assert datetime.fromisoformat(exported[0]["expires_at"]) - datetime.fromisoformat(exported[0]["created_at"]) \
        == pytest.approx(timedelta(days=7), abs=timedelta(seconds=1))


def until(moment: datetime) -> None:
    """Poll until the clock has passed `moment`: the condition waited on is the clock itself, so no machine is too
    slow for it (the memory expires at that instant, not after some delay)."""
    while datetime.now(UTC) <= moment:
        time.sleep(0.05)


def test_a_memory_that_expires_with_no_write_leaves_the_cached_profile_and_inject_at_once(api, policy):
    user = f"u-{uuid.uuid4().hex[:8]}"
    save(api, user, "FACT", "Lives in Porto")
    request = {"user_id": user, "conversation_id": "c-1", "max_context_tokens": 4000,
               "messages": [{"role": "user", "content": "Which scheme was I interested in?"}]}
    summarize(api, user)  # the containers warm and the model loaded before the clock runs
    inject(api, request)
    # An intent (30 days' retention) that expires three seconds from now: two warm reads take a fraction of it.
    expires = datetime.now(UTC) + timedelta(seconds=3)
    save(api, user, "INTENT", "Interested in the TTPS scheme", category="TTPS",
         created_at=(expires - timedelta(days=30)).isoformat())
    assert "TTPS" in json.dumps(summarize(api, user)) and "TTPS" in json.dumps(inject(api, request))

    until(expires)

    assert "TTPS" not in json.dumps(summarize(api, user), ensure_ascii=False)
    assert "TTPS" not in json.dumps(inject(api, request), ensure_ascii=False)


@pytest.mark.parametrize(("setting", "value", "named"), [
    ("MEMORY_RETENTION_DAYS", '{"INTENTS": 30}', "INTENTS"),
    ("MEMORY_RETENTION_DAYS", '{"INTENT": 0}', "MEMORY_RETENTION_DAYS.INTENT"),
    ("MEMORY_RETENTION_DAYS", '{"INTENT": "30"}', "MEMORY_RETENTION_DAYS.INTENT"),
    ("MEMORY_RETENTION_DAYS", "[30]", "MEMORY_RETENTION_DAYS"),
    ("MEMORY_RETENTION_DAYS", "{INTENT: 30}", "MEMORY_RETENTION_DAYS: not JSON"),
    ("MEMORY_TENANT_RETENTION_DAYS", '{"globex": {"FACTS": 9}}', "MEMORY_TENANT_RETENTION_DAYS.globex"),
    ("MEMORY_TENANT_RETENTION_DAYS", '{"globex": 9}', "MEMORY_TENANT_RETENTION_DAYS.globex"),
])
def test_a_policy_that_is_not_one_stops_the_settings_naming_what_is_wrong(monkeypatch, setting, value, named):
    monkeypatch.setenv(setting, value)

    with pytest.raises(ValueError, match=named.replace(".", r"\.")):
        Settings()
