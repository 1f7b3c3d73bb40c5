"""L1, the conversation log, through the deployed handlers (moto): append, search, log and forget."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore
from agent_memory.bootstrap import get_services
from agent_memory.domain.models import ExtractedMemory, MemoryType, ScopeRef, utcnow
from agent_memory.domain.tiers.memory_layers import ExtractionJob, LogMessage, scope_ref
from agent_memory.services.conversation_log import LogExtractionWorker
from agent_memory.services.save import SaveService
from agent_memory.settings import get_settings
from tests.fakes.extractor import FakeExtractor
from tests.fakes.store import InMemoryMemoryStore
from tests.integration.conftest import reset_containers

PROJECT = "/v1/projects/study-42"
HIT_FIELDS = {"id", "message_id", "conversation_id", "role", "content", "intent", "created_at", "similarity"}


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def append(api: Any, base: str, conversation: str, body: dict[str, Any], tenant: str = "acme") -> Any:
    return api.call("POST", f"{base}/conversations/{conversation}/messages", body, tenant=tenant)


def search(api: Any, base: str, body: dict[str, Any], tenant: str = "acme") -> Any:
    return api.call("POST", f"{base}/conversations/search", body, tenant=tenant)


def contents(response: Any) -> list[str]:
    assert response.status == 200, response.body
    return [hit["content"] for hit in response.body["results"]]


def test_given_a_batch_across_several_days_when_logged_then_each_is_stored_and_searchable_in_both_languages(api):
    now = utcnow()
    batch = [
        {"role": "assistant", "content": "请问本周的入组进度如何?", "createdAt": iso(now - timedelta(days=3))},
        {"role": "user", "content": "本周新入组3例受试者,其中1例因肝功能异常筛选失败。", "intent": "QC_TASK",
         "createdAt": iso(now - timedelta(days=2)), "authorId": "dr-wang"},
        {"role": "user", "content": "The monitoring visit for site 7 moved to next Thursday.", "intent": "SCHEDULE",
         "createdAt": iso(now - timedelta(days=1))},
        {"role": "assistant", "content": "Noted: I will remind the CRA about the new monitoring date.",
         "createdAt": iso(now - timedelta(hours=2))},
    ]

    response = append(api, PROJECT, "conv-days", {"messages": batch})

    assert response.status == 201, response.body
    body = response.body
    assert body["scope"] == {"type": "project", "id": "study-42"} and body["conversation_id"] == "conv-days"
    assert body["stored_count"] == 4 and len(set(body["message_ids"])) == 4
    assert body["queued_extractions"] == [] and body["failed_extractions"] == []
    stored = body["messages"]
    assert [datetime.fromisoformat(m["expires_at"]) - datetime.fromisoformat(m["created_at"]) for m in stored] == [
        timedelta(days=30)] * 4
    assert datetime.fromisoformat(body["expires_at"]) == min(datetime.fromisoformat(m["expires_at"]) for m in stored)
    # The append stored the messages; their embeddings come from the log's worker, moments later.
    queued = receive_all(get_settings().log_extraction_queue_url)
    assert [json.loads(q["Body"])["kind"] for q in queued] == ["embed"]
    assert api.functions.invoke("ExtractWorkerFunction", sqs_event(queued)) == {"batchItemFailures": []}

    chinese = search(api, PROJECT, {"query": "筛选失败的受试者"})
    assert contents(chinese)[0] == batch[1]["content"]
    top = chinese.body["results"][0]
    assert set(top) == HIT_FIELDS and top["role"] == "user" and top["intent"] == "QC_TASK"
    assert top["conversation_id"] == "conv-days" and top["message_id"] == body["message_ids"][1]
    assert all(0.0 <= hit["similarity"] <= 1.0 for hit in chinese.body["results"])
    assert [h["similarity"] for h in chinese.body["results"]] == sorted(
        (h["similarity"] for h in chinese.body["results"]), reverse=True)
    assert contents(search(api, PROJECT, {"query": "when is the monitoring visit?"}))[0] == batch[2]["content"]

    # Filters: role, intent (any case), conversation, time range (inclusive), limit.
    assert set(contents(search(api, PROJECT, {"query": "monitoring", "role": "assistant"}))) == {
        batch[0]["content"], batch[3]["content"]}
    assert contents(search(api, PROJECT, {"query": "受试者", "intent": "qc_task"})) == [batch[1]["content"]]
    assert contents(search(api, PROJECT, {"query": "monitoring", "conversationId": "other"})) == []
    window = [batch[1]["createdAt"], batch[2]["createdAt"]]
    assert set(contents(search(api, PROJECT, {"query": "monitoring 受试者", "timeRange": window}))) == {
        batch[1]["content"], batch[2]["content"]}
    limited = search(api, PROJECT, {"query": "monitoring visit", "limit": 1})
    assert len(limited.body["results"]) == 1 and limited.body["total_found"] == 4


def test_given_one_message_when_logged_without_a_batch_then_it_gets_an_id_and_the_default_time(api):
    before = utcnow()

    response = append(api, "/v1/users/u-log", "conv-1", {"role": "user", "content": "hello from a single message"})

    assert response.status == 201, response.body
    message = response.body["messages"][0]
    assert response.body["stored_count"] == 1 and message["message_id"].startswith("msg_")
    assert before - timedelta(seconds=1) <= datetime.fromisoformat(message["created_at"]) <= utcnow()
    assert contents(search(api, "/v1/users/u-log", {"query": "single message"})) == ["hello from a single message"]


def test_given_a_project_and_a_user_with_one_id_when_searched_then_scopes_and_tenants_stay_apart(api):
    append(api, PROJECT, "c1", {"role": "user", "content": "project note: database lock on March 3"})
    append(api, "/v1/users/study-42", "c1", {"role": "user", "content": "user note: database lock is my worry"})
    append(api, PROJECT, "c1", {"role": "user", "content": "other tenant: database lock moved"}, tenant="beta")

    assert contents(search(api, PROJECT, {"query": "database lock"})) == ["project note: database lock on March 3"]
    assert contents(search(api, "/v1/users/study-42", {"query": "database lock"})) == [
        "user note: database lock is my worry"]
    assert contents(search(api, PROJECT, {"query": "database lock"}, tenant="beta")) == [
        "other tenant: database lock moved"]
    assert contents(search(api, "/v1/users/nobody", {"query": "database lock"})) == []


def test_given_an_expired_message_the_sweeper_has_not_removed_when_searched_then_it_never_comes_back(api):
    scope = scope_ref("acme", "projects", "study-42")
    old = utcnow() - timedelta(days=31)
    get_services().layers.append_messages(scope, [LogMessage(
        message_id="m-expired", conversation_id="c1", role="user", content="expired: the old randomisation list",
        created_at=old, expires_at=old + timedelta(days=30))], set())
    append(api, PROJECT, "c1", {"role": "user", "content": "current: the new randomisation list"})

    assert contents(search(api, PROJECT, {"query": "randomisation list"})) == ["current: the new randomisation list"]


def test_given_a_message_older_than_the_log_keeps_when_logged_then_422_names_it_and_nothing_is_written(api):
    now = utcnow()
    response = append(api, PROJECT, "c1", {"messages": [
        {"role": "user", "content": "fresh enough", "createdAt": iso(now - timedelta(days=1))},
        {"role": "user", "content": "too old", "createdAt": iso(now - timedelta(days=31))},
    ]})

    assert response.status == 422, response.body
    assert response.body["error"]["details"][0]["field"] == "messages.1.createdAt"
    assert contents(search(api, PROJECT, {"query": "fresh enough too old"})) == []


def test_given_a_shorter_ttl_setting_when_logged_then_expires_at_follows_it(api, monkeypatch):
    monkeypatch.setenv("CONVERSATION_LOG_TTL_DAYS", "2")
    reset_containers()
    now = utcnow()

    kept = append(api, PROJECT, "c1", {"role": "user", "content": "one day old", "createdAt": iso(now - timedelta(1))})
    refused = append(api, PROJECT, "c1", {"role": "user", "content": "three days old",
                                          "createdAt": iso(now - timedelta(days=3))})

    assert kept.status == 201 and refused.status == 422
    assert refused.body["error"]["details"][0]["field"] == "createdAt"
    message = kept.body["messages"][0]
    assert datetime.fromisoformat(message["expires_at"]) - datetime.fromisoformat(message["created_at"]) == timedelta(2)


def test_given_a_client_message_id_when_the_request_is_retried_then_the_message_is_stored_once(api):
    message = {"role": "user", "content": "retry me: the protocol amendment v3 was approved",
               "messageId": "client-0001", "createdAt": iso(utcnow() - timedelta(minutes=1))}

    first = append(api, PROJECT, "c-retry", {"messages": [message]})
    again = append(api, PROJECT, "c-retry", {"messages": [message]})

    assert first.status == again.status == 201
    assert first.body["message_ids"] == again.body["message_ids"] == ["client-0001"]
    found = search(api, PROJECT, {"query": "protocol amendment approved"})
    assert contents(found) == [message["content"]] and found.body["total_found"] == 1


MESSAGE = {"role": "user", "content": "valid"}


@pytest.mark.parametrize(("path", "body", "field"), [
    (f"{PROJECT}/conversations/c1/messages", {"role": "system", "content": "x"}, "role"),
    (f"{PROJECT}/conversations/c1/messages", {"role": "user", "content": "   "}, "content"),
    (f"{PROJECT}/conversations/c1/messages", {"role": "user", "content": "字" * 11_000}, "content"),
    (f"{PROJECT}/conversations/c1/messages", {"role": "user"}, "content"),
    (f"{PROJECT}/conversations/c1/messages", {"role": "user", "content": "x", "mood": "happy"}, "mood"),
    (f"{PROJECT}/conversations/c1/messages", {"messages": [MESSAGE, {"role": "bot", "content": "x"}]},
     "messages.1.role"),
    (f"{PROJECT}/conversations/c1/messages", {"messages": []}, "messages"),
    (f"{PROJECT}/conversations/c1/messages", {"messages": [MESSAGE] * 101}, "messages"),
    (f"{PROJECT}/conversations/c1/messages", {"role": "user", "content": "x", "createdAt": "2026-02-05T10:00:00"},
     "createdAt"),
    (f"{PROJECT}/conversations/c1/messages",
     {"role": "user", "content": "x", "createdAt": iso(utcnow() + timedelta(hours=1))}, "createdAt"),
    (f"{PROJECT}/conversations/c1/messages", {"role": "user", "content": "x", "messageId": "a#b"}, "messageId"),
    (f"{PROJECT}/conversations/c1/messages", {"role": "user", "content": "x", "messageId": "m-1"}, "createdAt"),
    (f"{PROJECT}/conversations/c1/messages", {"messages": [
        {**MESSAGE, "messageId": "m-1", "createdAt": "2026-11-20T00:00:00Z"},
        {**MESSAGE, "messageId": "m-1", "createdAt": "2026-11-20T00:00:01Z"}]}, "messages.1.messageId"),
    (f"{PROJECT}/conversations/c1/messages", {"role": "user", "content": "x", "extract": "sometimes"}, "extract"),
    (f"{PROJECT}/conversations/c*1/messages", MESSAGE, "conversation_id"),
    (f"{PROJECT}/conversations/search", {"query": ""}, "query"),
    (f"{PROJECT}/conversations/search", {"query": "x", "limit": 21}, "limit"),
    (f"{PROJECT}/conversations/search", {"query": "x", "role": "system"}, "role"),
    (f"{PROJECT}/conversations/search",
     {"query": "x", "timeRange": ["2026-02-05T00:00:00Z", "2026-02-01T00:00:00Z"]}, "timeRange"),
])
def test_given_bad_input_when_logging_or_searching_then_422_names_the_field_and_nothing_is_written(api, path, body,
                                                                                                  field):
    response = api.call("POST", path, body)

    assert response.status == 422, response.body
    assert field in [d["field"] for d in response.body["error"]["details"]], response.body
    assert search(api, PROJECT, {"query": "valid x"}).body["results"] == []


def test_given_100_messages_spanning_weeks_then_all_are_stored_and_101_are_refused(api):
    now = utcnow()
    batch = [{"role": "user", "content": f"note {i}", "createdAt": iso(now - timedelta(days=i % 20))}
             for i in range(101)]

    refused = append(api, PROJECT, "c1", {"messages": batch})
    stored = append(api, PROJECT, "c1", {"messages": batch[:100]})

    assert refused.status == 422 and refused.body["error"]["details"][0]["field"] == "messages"
    assert stored.status == 201 and stored.body["stored_count"] == 100


def test_given_no_extraction_queue_when_extract_is_asked_then_422_names_extract_and_nothing_is_written(api,
                                                                                                      monkeypatch):
    monkeypatch.setenv("LOG_EXTRACTION_QUEUE_URL", "")
    reset_containers()

    response = append(api, PROJECT, "c1", {"role": "user", "content": "valid", "extract": True})

    assert response.status == 422
    assert response.body["error"]["details"][0]["field"] == "extract"
    assert "extraction queue not configured" in response.body["error"]["message"]
    assert search(api, PROJECT, {"query": "valid"}).body["results"] == []


# ---- log and forget ---------------------------------------------------------------------------------

def receive_all(queue_url: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    received: list[dict[str, Any]] = []
    while batch := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", []):
        received += batch
    return received


def sqs_event(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"Records": [{
        "messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "0", "SenderId": "local",
                       "ApproximateFirstReceiveTimestamp": "0"},
        "messageAttributes": {}, "md5OfBody": m["MD5OfBody"], "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:LogExtractionQueue", "awsRegion": "us-east-1",
    } for m in messages]}


def memories(api: Any, user_id: str) -> list[dict[str, Any]]:
    return api.call("GET", f"/v1/users/{user_id}/memories", query="limit=100").body["items"]


def test_given_logged_user_turns_with_extract_when_the_worker_runs_twice_then_memories_are_stored_once(api):
    user = f"u-{uuid.uuid4().hex[:8]}"
    logged = append(api, f"/v1/users/{user}", "conv-lf", {"extract": True, "messages": [
        {"role": "assistant", "content": "您好,请问您今年多大?"},
        {"role": "user", "content": "我今年33岁"},
        {"role": "assistant", "content": "好的,已记录。"},
    ]})
    assert logged.status == 201, logged.body
    assert logged.body["queued_extractions"] == [logged.body["message_ids"][1]]
    assert memories(api, user) == []  # forgotten until the worker runs

    queued = receive_all(get_settings().log_extraction_queue_url)
    assert sorted(json.loads(q["Body"]).get("kind", "extract") for q in queued) == ["embed", "extract"]
    job = next(json.loads(q["Body"]) for q in queued if "kind" not in json.loads(q["Body"]))
    assert datetime.fromisoformat(job.pop("queued_at"))  # when it was queued: an erasure drops it
    assert job == {"tenant_id": "acme", "scope_id": user, "conversation_id": "conv-lf",
                   "message_id": logged.body["message_ids"][1], "user_message": "我今年33岁",
                   "assistant_message": "您好,请问您今年多大?", "written_by": "svc"}

    event = sqs_event(queued)
    first = api.functions.invoke("ExtractWorkerFunction", event)
    stored = memories(api, user)
    again = api.functions.invoke("ExtractWorkerFunction", event)  # SQS delivers at least once

    assert first == again == {"batchItemFailures": []}
    assert [m["field"] for m in stored] == ["age"]
    assert [m["memory_key"] for m in memories(api, user)] == [m["memory_key"] for m in stored]
    assert stored[0]["conversation_id"] == "conv-lf" and stored[0]["source"] == "conversation"
    assert (stored[0]["origin"], stored[0]["written_by"]) == ("extract", "svc")  # the token that logged the turn


def test_given_a_batch_with_one_bad_record_when_the_worker_runs_then_only_that_record_is_reported(api):
    user = f"u-{uuid.uuid4().hex[:8]}"
    append(api, f"/v1/users/{user}", "conv-bad", {"extract": True, "role": "user", "content": "我今年41岁"})
    good = receive_all(get_settings().log_extraction_queue_url)
    bad = {**good[0], "MessageId": "bad-1", "Body": json.dumps({"tenant_id": "acme", "scope_id": "x#y"})}

    result = api.functions.invoke("ExtractWorkerFunction", sqs_event([bad, *good]))

    assert result == {"batchItemFailures": [{"itemIdentifier": "bad-1"}]}
    assert [m["field"] for m in memories(api, user)] == ["age"]


class FailingOnce:
    """An extractor that fails its first call (an LLM timeout), then extracts."""

    def __init__(self) -> None:
        self.calls = 0
        self.inner = FakeExtractor([ExtractedMemory(memory_type=MemoryType.FACT, content="用户41岁", field="age",
                                                    value=41)])

    def extract(self, turn: Any) -> list[ExtractedMemory]:
        self.calls += 1
        if self.calls == 1:
            raise TimeoutError("LLM timed out")
        return self.inner.extract(turn)


def test_given_an_extraction_that_fails_when_redelivered_then_it_runs_again_and_saves_once(dynamodb_client):
    layers = DynamoLayerStore(table_name="agent-memory-test", client=dynamodb_client)
    store = InMemoryMemoryStore()
    extractor = FailingOnce()
    worker = LogExtractionWorker(layers=layers, save=SaveService(store=store, extractor=lambda: extractor))
    job = ExtractionJob(tenant_id="acme", scope_id="project/p-1", conversation_id="c1", message_id="m-1",
                        user_message="我今年41岁")

    with pytest.raises(TimeoutError):
        worker.process(job)  # released: the next delivery may try at once
    retried = worker.process(job)
    redelivered = worker.process(job)

    assert (retried.status, retried.saved_count) == ("extracted", 1)
    assert redelivered.status == "skipped" and extractor.calls == 2
    assert [m.content for m in store.all_current(ScopeRef(tenant_id="acme", user_id="project/p-1"))] == ["用户41岁"]
