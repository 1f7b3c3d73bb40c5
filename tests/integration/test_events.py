"""Every events/*.json (the `sam local invoke -e` samples) through its function: status and shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local.template import routes

EVENTS = Path(__file__).resolve().parents[2] / "events"

# event file -> (function, expected status, keys the JSON body must have)
EXPECTED = {
    "save-create-memory.json": ("SaveFunction", 201, {"outcome", "memory", "superseded", "skipped_fields"}),
    "save-batch-memories.json": ("SaveFunction", 201, {"saved_count", "memory_keys", "results"}),
    "save-extract.json": ("SaveFunction", 200,
                          {"action", "extracted_info", "saved_count", "saved_memories", "skipped_fields",
                           "skipped_sentences", "note"}),
    "save-delete-memory.json": ("SaveFunction", 200, {"deleted", "memory_key"}),
    "load-context.json": ("LoadFunction", 200, {"action", "memories", "user_profile_summary", "total_memories"}),
    "load-list-memories.json": ("LoadFunction", 200, {"items", "next_cursor"}),
    "load-get-memory.json": ("LoadFunction", 200, {"memory", "history"}),
    "load-unknown-route.json": ("LoadFunction", 404, {"error"}),
    "load-search-memories.json": ("LoadFunction", 200,
                                  {"total_found", "results", "search_strategy_used", "expanded_keywords"}),
    "load-search-memories-as-of.json": ("LoadFunction", 200, {"total_found", "results", "as_of"}),
    "load-recall.json": ("LoadFunction", 200, {"decision", "memories"}),
    "load-resolve-placeholders.json": ("LoadFunction", 200, {"text", "placeholders", "missing"}),
    "load-get-synonyms.json": ("LoadFunction", 200, {"keyword", "synonyms"}),
    "load-tools.json": ("LoadFunction", 200, {"tools", "system_prompt"}),
    "save-add-synonyms.json": ("SaveFunction", 201, {"keyword", "synonyms", "stored_pairs"}),
    "summarize-profile.json": ("SummarizeFunction", 200,
                               {"action", "user_profile", "completeness", "narrative_summary"}),
    "inject-context.json": ("InjectFunction", 200, {"messages", "injected_contexts", "dropped_contexts",
                                                    "total_context_tokens", "compacted"}),
    "inject-system-placement.json": ("InjectFunction", 200, {"messages", "system", "injected_contexts"}),
    "save-put-hot-memory.json": ("SaveFunction", 200, {"type", "key", "value", "priority", "updated_at"}),
    "save-delete-hot-memory.json": ("SaveFunction", 200, {"deleted", "type", "key"}),
    "save-refresh-hot-memory.json": ("SaveFunction", 200, {"scope", "status", "reason"}),
    "load-get-hot-memory.json": ("LoadFunction", 200, {"scope", "entries", "meta", "status", "decisions",
                                                       "preferences"}),
    "load-list-reports.json": ("LoadFunction", 200, {"scope", "reports"}),
    "load-search-reports.json": ("LoadFunction", 200, {"scope", "reports"}),
    "load-intent-context.json": ("LoadFunction", 200, {"scope", "context", "parts", "skipped", "tokens"}),
    "save-append-messages.json": ("SaveFunction", 201, {"scope", "conversation_id", "stored_count", "message_ids",
                                                        "expires_at", "queued_extractions"}),
    "load-search-conversations.json": ("LoadFunction", 200, {"scope", "total_found", "results"}),
    "save-execute-tool.json": ("SaveFunction", 200, {"type", "tool_use_id", "content"}),
    "save-memory-tool.json": ("SaveFunction", 200, {"content", "is_error"}),
    "docs-openapi.json": ("DocsFunction", 200, {"openapi", "info", "paths", "components"}),
    "load-export.json": ("LoadFunction", 200, {"format", "version", "memories", "log", "hot_memory", "reports",
                                               "files", "synonyms", "next_cursor"}),
    "save-import.json": ("SaveFunction", 200, {"scope", "imported", "skipped"}),
    "load-health.json": ("LoadFunction", 200, {"status"}),
    "load-health-details.json": ("LoadFunction", 200, {"status", "tables", "queues", "workers", "embedder", "search",
                                                       "pack"}),
    "save-erase-user.json": ("SaveFunction", 200, {"erasure_id", "status", "stores", "verified", "requested_at",
                                                   "tombstone_expires_at"}),
    "load-get-erasure.json": ("LoadFunction", 200, {"erasure_id", "status", "stores", "verified"}),
    "load-get-retention.json": ("LoadFunction", 200, {"tenant_id", "days", "tenant_specific"}),
}
# Run after a memory exists, with its key put into the path (events carry a placeholder key).
NEEDS_MEMORY = {"load-get-memory.json", "save-delete-memory.json", "load-resolve-placeholders.json"}
# SQS events (not HTTP): tested below, each through its worker.
SQS_EVENTS = {"extract-worker-sqs.json", "rollup-worker-sqs.json", "access-stats-sqs.json"}
# Run after the hot-memory entry the put event writes exists.
NEEDS_HOT_MEMORY = {"save-delete-hot-memory.json"}
# Run after an erasure, with its id put into the path (the event carries a placeholder id).
NEEDS_ERASURE = {"load-get-erasure.json"}


def load_event(name: str) -> dict:
    return json.loads((EVENTS / name).read_text(encoding="utf-8"))


def test_every_event_file_has_an_expectation():
    assert {p.name for p in EVENTS.glob("*.json")} == {*EXPECTED, "rollup-schedule.json", "docs-page.json",
                                                       *SQS_EVENTS, "indexer-stream.json"}


def test_every_http_event_names_a_route_of_its_function():
    by_key = {r.route_key: r.function for r in routes()}
    for name, (function, _, _) in EXPECTED.items():
        assert by_key[load_event(name)["routeKey"]] == function, name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_event_through_its_function(api, name):
    function, status, keys = EXPECTED[name]
    event = load_event(name)
    if name in NEEDS_MEMORY:
        created = api.functions.invoke("SaveFunction", load_event("save-create-memory.json"))
        key = json.loads(created["body"])["memory"]["memory_key"]
        placeholder = "mem_01kf0000000000000000000000"
        if "memory_key" in (event.get("pathParameters") or {}):
            event["pathParameters"]["memory_key"] = key
        event["rawPath"] = event["rawPath"].replace(placeholder, key)
        event["requestContext"]["http"]["path"] = event["rawPath"]
        if event.get("body"):
            event["body"] = event["body"].replace(placeholder, key)

    if name in NEEDS_HOT_MEMORY:
        api.functions.invoke("SaveFunction", load_event("save-put-hot-memory.json"))
    if name in NEEDS_ERASURE:
        erased = api.functions.invoke("SaveFunction", load_event("save-erase-user.json"))
        erasure_id = json.loads(erased["body"])["erasure_id"]
        event["pathParameters"]["erasure_id"] = erasure_id
        event["rawPath"] = event["rawPath"].replace("era_01kf0000000000000000000000", erasure_id)
        event["requestContext"]["http"]["path"] = event["rawPath"]
    result = api.functions.invoke(function, event)

    assert result["statusCode"] == status, result["body"]
    assert result["headers"]["Content-Type"] == "application/json"
    assert keys <= set(json.loads(result["body"]))


def test_docs_page_event_through_its_function(api):
    result = api.functions.invoke("DocsFunction", load_event("docs-page.json"))

    assert result["statusCode"] == 200
    assert result["headers"]["Content-Type"].startswith("text/html")
    assert 'src="/docs/assets/swagger-ui-bundle.js"' in result["body"]


@pytest.mark.parametrize(("asset", "content_type"), [
    ("swagger-ui-bundle.js", "text/javascript"), ("swagger-ui.css", "text/css"), ("docs-init.js", "text/javascript")])
def test_the_docs_page_assets_are_served_from_the_deployment_itself(api, asset, content_type):
    event = load_event("docs-page.json")
    event.update(routeKey="GET /docs/assets/{name}", rawPath=f"/docs/assets/{asset}", pathParameters={"name": asset})
    event["requestContext"]["http"]["path"] = event["rawPath"]

    result = api.functions.invoke("DocsFunction", event)

    assert result["statusCode"] == 200
    assert result["headers"]["Content-Type"].startswith(content_type)
    assert len(result["body"]) > (1000 if asset != "docs-init.js" else 50)


def test_schedule_event_through_the_rollup_function(api):
    result = api.functions.invoke("RollupFunction", load_event("rollup-schedule.json"))
    # Monday 2026-11-23 01:00 UTC rolls up the week before; one shard task per shard is queued.
    assert result == {"week_start": "2026-11-16", "week_end": "2026-11-22", "timezone": "UTC", "shard_tasks": 16}


def test_sqs_event_through_the_rollup_worker(api):
    event = load_event("rollup-worker-sqs.json")

    first = api.functions.invoke("RollupWorkerFunction", event)
    again = api.functions.invoke("RollupWorkerFunction", event)  # a redelivery

    assert first == again == {"batchItemFailures": []}


def test_sqs_event_through_the_extraction_worker(api):
    event = load_event("extract-worker-sqs.json")

    first = api.functions.invoke("ExtractWorkerFunction", event)
    again = api.functions.invoke("ExtractWorkerFunction", event)  # a redelivery

    assert first == again == {"batchItemFailures": []}


def test_sqs_event_through_the_access_stats_worker(api):
    event = load_event("access-stats-sqs.json")

    assert api.functions.invoke("AccessStatsFunction", event) == {"batchItemFailures": []}


def test_given_an_access_record_with_a_forged_id_then_only_it_fails_and_nothing_is_written(api):
    event = load_event("access-stats-sqs.json")
    good = event["Records"][0]
    forged = {**good, "messageId": "forged-1",
              "body": json.dumps({**json.loads(good["body"]), "user_id": "u-123#MEM#mem_x"})}

    result = api.functions.invoke("AccessStatsFunction", {"Records": [good, forged]})

    assert result == {"batchItemFailures": [{"itemIdentifier": "forged-1"}]}


def test_given_a_batch_of_reads_then_each_memory_is_updated_once_by_how_many_reads_counted_it(api, monkeypatch):
    from agent_memory.adapters.dynamodb import access

    saved = [api.call("POST", "/v1/users/u-reads/memories", {"memory_type": "FACT", "content": text}).body
             for text in ("Lives in Porto", "Keeps a parrot")]
    porto, parrot = (m["memory"]["memory_key"] for m in saved)
    updates: list[str] = []
    original = access.record_access

    def counting(client, table, user, memory_keys, accessed_at):
        updates.extend(sorted(set(memory_keys)))
        return original(client, table, user, memory_keys, accessed_at)

    monkeypatch.setattr(access, "record_access", counting)
    monkeypatch.setattr("agent_memory.adapters.dynamodb.store.record_access", counting)
    reads = [([porto, parrot], "2026-11-30T10:00:00+00:00"), ([porto], "2026-11-30T10:05:00+00:00"),
             ([porto], "2026-11-30T10:01:00+00:00")]
    records = [{"messageId": f"m-{i}", "receiptHandle": "r", "attributes": {}, "messageAttributes": {},
                "md5OfBody": "x", "eventSource": "aws:sqs", "awsRegion": "us-east-1",
                "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:AccessStatsQueue",
                "body": json.dumps({"tenant_id": "acme", "user_id": "u-reads", "memory_keys": keys,
                                    "accessed_at": at})} for i, (keys, at) in enumerate(reads)]

    assert api.functions.invoke("AccessStatsFunction", {"Records": records}) == {"batchItemFailures": []}

    assert sorted(updates) == sorted([porto, parrot])  # one update per memory for the whole batch
    exported = api.call("GET", "/v1/users/u-reads/export").body["memories"]
    detail = {v["memory_key"]: v for m in exported for v in m["versions"]}
    assert (detail[porto]["access_count"], detail[parrot]["access_count"]) == (3, 1)
    assert detail[porto]["last_accessed_at"].startswith("2026-11-30T10:05:00")


def test_stream_event_through_the_indexer(api, monkeypatch):
    """The indexer's OpenSearch is an in-memory index here; the handler, its batch processing and the records'
    reading are the deployed ones."""
    from agent_memory.adapters.opensearch.sync import Indexer
    from tests.fakes.embedders import HashEmbedder
    from tests.fakes.index import FakeIndex

    index, embedder = FakeIndex(), HashEmbedder()
    module = api.functions.container("IndexerFunction")
    monkeypatch.setattr(module, "get_indexer", lambda: Indexer(index=index, embedder=embedder))  # type: ignore[arg-type]

    result = api.functions.invoke("IndexerFunction", load_event("indexer-stream.json"))

    # Inserted, superseded (gone), a field pointer (ignored), inserted and expired by TTL (gone): one remains,
    # embedded on its way in.
    assert result == {"batchItemFailures": []}
    assert list(index.docs) == ["acme|u-123|mem_01m8e2e24kf1hbft8zek7w4gj1"]
    current = index.docs["acme|u-123|mem_01m8e2e24kf1hbft8zek7w4gj1"]
    assert current.content == "用户学历硕士，浙江大学" and current.embedding_model == embedder.model_id
