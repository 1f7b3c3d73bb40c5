"""Verified erasure over the deployed handlers (moto): DELETE /v1/users/{id} and /v1/projects/{id} leave nothing of
the scope in any store, the receipt says so, and work queued before the erasure brings nothing back."""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from agent_memory.adapters.dynamodb.erasure import DynamoScopeEraser
from agent_memory.adapters.dynamodb.index_snapshots import DynamoIndexSnapshotStore
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.tiers.memory_layers import previous_week
from agent_memory.settings import get_settings
from local.runtime import LocalFunctions
from tests.fakes.api_calls import _event, at, inject, ok, run_log_extractions, run_weekly_rollup, save
from tests.integration.conftest import LambdaApi

TENANT = "acme"


def table_items(client: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"TableName": get_settings().memory_table_name}
    while True:
        page = client.scan(**params)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def traces(client: Any, scope_id: str) -> list[str]:
    """Every item of the table naming the scope anywhere (keys or values), but the tombstone and the receipts."""
    found = []
    for item in table_items(client):
        if item["pk"]["S"] in (f"T#{TENANT}#ERASED", f"T#{TENANT}#ERASURE"):
            continue
        if scope_id in json.dumps(item, default=str):
            found.append(f"{item['pk']['S']} {item['sk']['S']}")
    return found


def receive(queue_url: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    found: list[dict[str, Any]] = []
    while batch := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, VisibilityTimeout=600).get(
            "Messages", []):
        found += batch
    return found


def log(api: Any, base: str, conversation: str, *messages: dict[str, Any], extract: bool = False) -> dict[str, Any]:
    body = ok(api.call("POST", f"{base}/conversations/{conversation}/messages",
                       {"messages": list(messages), "extract": extract}), 201)
    return body  # type: ignore[no-any-return]


def a_user_with_everything(api: Any, user: str) -> None:
    """Memories (a superseded field, keywords), the log (extracted once), hot memory, a report, a memory-tool
    file, a cached context block and recorded reads."""
    base = f"/v1/users/{user}"
    save(api, user, "FACT", "Lives in Porto with a cat named Miso", field="location",
         keywords=[{"term": "porto"}, {"term": "miso"}])
    save(api, user, "FACT", "Lives in Lisbon with a cat named Miso", field="location")  # supersedes Porto
    save(api, user, "INTENT", "Plans to apply for the Portuguese D7 visa next spring")
    week = previous_week(datetime.now(UTC))
    log(api, base, "c-1", {"role": "user", "content": "My daughter Ana starts school in Lisbon in September.",
                           "createdAt": at(week, 2, 9)},
        {"role": "assistant", "content": "Noted: Ana starts school in September.", "createdAt": at(week, 2, 9, 1)},
        extract=True)
    run_log_extractions(api)
    ok(api.call("PUT", f"{base}/hot-memory/status/visa", {"value": "D7 documents half gathered"}))
    ok(api.call("POST", f"{base}/memory-tool", {"command": "create", "path": "/memories/notes.md",
                                                 "file_text": "Prefers WhatsApp over email\n"}))
    ok(api.call("POST", f"{base}/memories/search", {"query": "Miso cat Lisbon"}))
    inject(api, {"user_id": user, "conversation_id": "c-1",
                 "messages": [{"role": "user", "content": "Where does my cat live?"}], "max_context_tokens": 4000})
    run_weekly_rollup(api)


def test_given_a_user_with_every_kind_of_data_when_erased_then_no_store_holds_anything_of_them(api, lambda_env):
    user = f"u-{uuid.uuid4().hex[:8]}"
    a_user_with_everything(api, user)
    # A saved search index, as a container saves one off the request's path for a user of many memories.
    snapshots = DynamoIndexSnapshotStore(table_name=get_settings().memory_table_name, client=lambda_env)
    assert snapshots.put(ScopeRef(tenant_id=TENANT, user_id=user), 7, lambda: b"index of Miso the cat" * 100)
    found = traces(lambda_env, user)
    kinds = {t.split()[1].split("#")[0] for t in found} | {t.split()[0].split("#")[0] for t in found}
    assert {"MEM", "FIELD", "HASH", "KW", "META", "CHG", "LOG", "LOGX", "HOT", "REPORT", "FILE", "CTX", "SNAP",
            "ACTIVE"} <= kinds, kinds

    erased = api.call("DELETE", f"/v1/users/{user}")

    receipt = ok(erased)
    assert receipt["status"] == "complete" and receipt["verified"] is True, receipt
    stores = {s["store"]: s for s in receipt["stores"]}
    for store in ("memories", "memory_keys", "version_counter", "change_log", "conversation_log", "extraction_markers",
                  "hot_memory", "reports", "memory_files", "context_cache", "index_snapshots", "rollup_markers"):
        assert stores[store]["found"] > 0 and stores[store]["removed"] == stores[store]["found"], (store, stores)
    assert all(s["remaining"] == 0 for s in receipt["stores"])
    assert receipt["scope_type"] == "users" and receipt["scope_id"] == user and receipt["requested_by"] == "svc"
    assert traces(lambda_env, user) == []
    assert ok(api.call("GET", f"/v1/erasures/{receipt['erasure_id']}")) == receipt
    nothing_answers_for(api, user)


def nothing_answers_for(api: Any, user: str) -> None:
    base = f"/v1/users/{user}"
    assert ok(api.call("GET", f"{base}/memories", query="limit=100"))["items"] == []
    assert ok(api.call("POST", f"{base}/memories/search", {"query": "Miso cat Lisbon Porto visa",
                                                             "min_relevance_score": 0}))["results"] == []
    assert ok(api.call("POST", f"{base}/context/load", {"query": "cat"}))["memories"] == []
    assert ok(api.call("POST", f"{base}/conversations/search", {"query": "Ana school"}))["results"] == []
    assert ok(api.call("GET", f"{base}/hot-memory"))["entries"] == []
    assert ok(api.call("GET", f"{base}/reports"))["reports"] == []
    listing = ok(api.call("POST", f"{base}/memory-tool", {"command": "view", "path": "/memories"}))["content"]
    assert "notes.md" not in listing
    injected = inject(api, {"user_id": user, "conversation_id": "c-1",
                            "messages": [{"role": "user", "content": "Where does my cat live?"}],
                            "max_context_tokens": 4000})
    assert "Miso" not in json.dumps(injected, ensure_ascii=False)
    profile = ok(api.call("POST", f"{base}/profile/summarize"))
    assert "Lisbon" not in json.dumps(profile, ensure_ascii=False)
    exported = ok(api.call("GET", f"{base}/export"))
    assert [exported[part] for part in ("memories", "log", "hot_memory", "reports", "files")] == [[]] * 5, exported


def test_given_work_queued_before_the_erasure_when_it_arrives_after_then_nothing_comes_back(api, lambda_env):
    user = f"u-{uuid.uuid4().hex[:8]}"
    base = f"/v1/users/{user}"
    save(api, user, "FACT", "Lives in Porto with a cat named Miso")
    ok(api.call("POST", f"{base}/memories/search", {"query": "Miso"}))
    week = previous_week(datetime.now(UTC))
    log(api, base, "c-1", {"role": "user", "content": "I am 41 years old and I work as a pharmacist.",
                           "createdAt": at(week, 3, 10)}, extract=True)
    settings = get_settings()
    extraction = receive(settings.log_extraction_queue_url)  # queued, not yet delivered
    assert extraction
    week_task = json.dumps({"kind": "scope", "week": week.isoformat(), "tenant_id": TENANT, "scope_id": user,
                            "queued_at": (datetime.now(UTC) - timedelta(seconds=1)).isoformat()})
    access = json.dumps({"tenant_id": TENANT, "user_id": user, "memory_keys": [], "accessed_at":
                         datetime.now(UTC).isoformat()})

    ok(api.call("DELETE", base))

    def as_message(body: str) -> dict[str, Any]:
        return {"MessageId": uuid.uuid4().hex, "ReceiptHandle": uuid.uuid4().hex, "Body": body, "MD5OfBody": "x"}

    assert api.functions.invoke("ExtractWorkerFunction", _event(extraction, "LogExtractionQueue")) == {
        "batchItemFailures": []}
    assert api.functions.invoke("RollupWorkerFunction", _event([as_message(week_task)], "RollupQueue")) == {
        "batchItemFailures": []}
    stats = json.loads(access)
    key = save(api, "u-other", "FACT", "Someone else entirely")["memory"]["memory_key"]
    stats["memory_keys"] = [key]
    assert api.functions.invoke("AccessStatsFunction", _event([as_message(json.dumps(stats))],
                                                              "AccessStatsQueue")) == {"batchItemFailures": []}
    assert traces(lambda_env, user) == []
    nothing_answers_for(api, user)

    # A save after the erasure starts the user afresh, and work it queues is done.
    save(api, user, "FACT", "Keeps a vegetable garden")
    log(api, base, "c-2", {"role": "user", "content": "I am 42 years old now."}, extract=True)
    run_log_extractions(api)
    contents = {m["content"] for m in ok(api.call("GET", f"{base}/memories", query="limit=100"))["items"]}
    assert "Keeps a vegetable garden" in contents and "Lives in Porto with a cat named Miso" not in contents
    assert any("42" in c for c in contents) and not any("pharmacist" in c or "41" in c for c in contents), contents


def test_given_a_message_to_extract_sent_while_the_erasure_runs_then_nothing_of_it_comes_back(
        api, lambda_env, monkeypatch):
    """The message lands between a sweep and its final check (a request racing the DELETE): the next pass sweeps
    it, and its extraction, queued during the erasure, is dropped when it arrives after."""
    api = LambdaApi(LocalFunctions(containers_per_function=2))  # the racing request gets a container of its own
    user = f"u-{uuid.uuid4().hex[:8]}"
    base = f"/v1/users/{user}"
    save(api, user, "FACT", "Lives in Porto with a cat named Miso")
    check = DynamoScopeEraser.remaining
    raced: list[dict[str, Any]] = []

    def racing_request() -> None:
        raced.append(log(api, base, "c-1", {"role": "user", "content": "I am 55 years old and I live in Rome"},
                         extract=True))

    def remaining_after_a_racing_request(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not raced:  # another container of the API answers it, as Lambda would, while this one erases
            request = threading.Thread(target=racing_request)
            request.start()
            request.join(timeout=120)
        return check(self, *args, **kwargs)

    monkeypatch.setattr(DynamoScopeEraser, "remaining", remaining_after_a_racing_request)
    receipt = ok(api.call("DELETE", base))
    monkeypatch.setattr(DynamoScopeEraser, "remaining", check)
    run_log_extractions(api)

    assert raced and receipt["verified"] and receipt["passes"] == 2
    assert traces(lambda_env, user) == []
    nothing_answers_for(api, user)


def test_a_project_is_erased_with_its_log_and_hot_memory_and_its_users_are_left(api, lambda_env):
    project, user = f"p-{uuid.uuid4().hex[:8]}", f"u-{uuid.uuid4().hex[:8]}"
    log(api, f"/v1/projects/{project}", "c-1", {"role": "user", "content": "Site 7 enrolled three patients."})
    ok(api.call("PUT", f"/v1/projects/{project}/hot-memory/status/enrolment", {"value": "3 of 40"}))
    save(api, user, "FACT", "Coordinates site 7")

    receipt = ok(api.call("DELETE", f"/v1/projects/{project}"))

    assert receipt["scope_type"] == "projects" and receipt["scope_id"] == project and receipt["verified"]
    assert traces(lambda_env, f"project/{project}") == []
    assert ok(api.call("GET", f"/v1/projects/{project}/hot-memory"))["entries"] == []
    assert [m["content"] for m in ok(api.call("GET", f"/v1/users/{user}/memories"))["items"]] == ["Coordinates site 7"]


def test_an_end_user_token_erases_its_own_user_only_and_reads_only_its_own_receipts(api, end_user_tokens, lambda_env):
    alice, bob = {"sub": "alice", "tenant_id": TENANT}, {"sub": "bob", "tenant_id": TENANT}
    for who in (alice, bob):
        assert api.call("POST", f"/v1/users/{who['sub']}/memories", {"memory_type": "FACT",
                                                                     "content": f"{who['sub']} likes tea"},
                        claims=who).status == 201

    refused = api.call("DELETE", "/v1/users/bob", claims=alice)
    project = api.call("DELETE", "/v1/projects/p-1", claims=alice)
    erased = api.call("DELETE", "/v1/users/alice", claims=alice)

    assert refused.status == 403 and refused.body["error"]["details"][0]["field"] == "user_id"
    assert project.status == 403
    assert erased.status == 200 and erased.body["requested_by"] == "alice"
    assert [m["content"] for m in api.call("GET", "/v1/users/bob/memories", claims=bob).body["items"]] == [
        "bob likes tea"]
    path = f"/v1/erasures/{erased.body['erasure_id']}"
    assert api.call("GET", path, claims=alice).status == 200
    assert api.call("GET", path, claims=bob).status == 404  # another's receipt is as unknown as a made-up id
    assert api.call("GET", path, tenant="other").status == 404
    assert api.call("GET", "/v1/erasures/era_00000000000000000000000000", claims=alice).status == 404
    assert api.call("GET", "/v1/erasures/not-an-id", claims=alice).status == 422
