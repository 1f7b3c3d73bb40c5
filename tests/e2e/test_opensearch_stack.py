"""`make run SEARCH=opensearch` over real HTTP: the AWS topology on one machine.

Every save reaches a real OpenSearch node only through the table's stream and the indexer function; search,
load and inject read the OpenSearch tier. The node here belongs to the test (the stack is given its endpoint),
so a test can stop it mid-traffic and start it again; one test lets the stack start a node of its own.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local.opensearch_node import OpenSearchNode, free_port
from tests.conftest import skip_or_fail
from tests.e2e.quickstart import assert_quickstart_answers, quickstart_calls, run_calls
from tests.e2e.stack import Stack, http, start_stack, wait_for

pytestmark = pytest.mark.e2e

ALIAS = "agent-memory"  # the stack's default OPENSEARCH_INDEX
TENANT = "default"
FRESH_WRITES_SECONDS = 8  # the stack's window of writes laid over the index (shorter than the default 30)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenSearchNode]:
    from local.opensearch_node import available

    if not available():
        skip_or_fail("the local OpenSearch node is not built (make opensearch-node) or no java")
    with OpenSearchNode(tmp_path_factory.mktemp("opensearch"), port=free_port(), heap_mb=768) as running:
        yield running


@pytest.fixture(scope="module")
def stack(node: OpenSearchNode, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = start_stack(tmp_path_factory.mktemp("stack-data"), env_overrides={
        "OPENSEARCH_ENDPOINT": node.url, "OPENSEARCH_FRESH_WRITES_SECONDS": str(FRESH_WRITES_SECONDS)})
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.stop()


def engine(url: str, method: str, path: str, body: Any = None) -> Any:
    """The node's own REST API (what the test inspects; the stack never refreshes)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def indexed_keys(url: str, user: str) -> set[str]:
    """The memory keys the index holds for the user (as searchable now)."""
    found = engine(url, "POST", f"/{ALIAS}/_search", {
        "size": 1000, "_source": ["memory_key"],
        "query": {"bool": {"filter": [{"term": {"tenant_id": TENANT}}, {"term": {"user_id": user}}]}}})
    return {hit["_source"]["memory_key"] for hit in found["hits"]["hits"]}


def current(stack: Stack, user: str) -> dict[str, str]:
    """The user's current memories in the table: key -> content."""
    status, page = http(stack, "GET", f"/v1/users/{user}/memories?limit=100")
    assert status == 200, page
    return {item["memory_key"]: item["content"] for item in page["items"]}


def current_keys(stack: Stack, user: str) -> set[str]:
    return set(current(stack, user))


def in_agreement(stack: Stack, url: str, user: str, timeout: float = 60.0) -> bool:
    """The index holds exactly the user's current memories, within `timeout`."""
    return bool(wait_for(lambda: indexed_keys(url, user) == current_keys(stack, user), timeout=timeout))


def search(stack: Stack, user: str, query: str) -> list[str]:
    status, found = http(stack, "POST", f"/v1/users/{user}/memories/search",
                         {"query": query, "min_relevance_score": 0, "limit": 10})
    assert status == 200, found
    return [r["content_preview"] for r in found["results"]]


def test_the_readme_calls_answer_through_the_opensearch_tier(stack, node):
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the quickstart uses it")
    calls = quickstart_calls(stack, "u-os-quickstart")
    saves = run_calls(calls[:3])
    # The index is fed asynchronously, as on AWS: the search and the inject come once the stream has delivered.
    assert in_agreement(stack, node.url, "u-os-quickstart")
    assert_quickstart_answers(saves + run_calls(calls[3:]))


def test_save_extract_supersede_and_delete_reach_the_index_through_the_stream(stack, node):
    user = "u-os-stream"
    status, extracted = http(stack, "POST", f"/v1/users/{user}/memories/extract",
                             {"user_message": "我今年32岁，现在在杭州做前端开发"})
    assert status == 200 and extracted["saved_count"] >= 2, extracted
    assert in_agreement(stack, node.url, user)
    (aged_32,) = [key for key, content in current(stack, user).items() if content == "用户32岁"]
    assert http(stack, "POST", f"/v1/users/{user}/memories/extract", {"user_message": "我今年33岁"})[0] == 200
    saved_at = time.time()
    status, saved = http(stack, "POST", f"/v1/users/{user}/memories",
                         {"memory_type": "FACT", "content": "Keeps a turtle named Shelly"})
    assert status == 201, saved
    status, gone = http(stack, "POST", f"/v1/users/{user}/memories",
                        {"memory_type": "FACT", "content": "Owns a red kayak"})
    assert http(stack, "DELETE", f"/v1/users/{user}/memories/{gone['memory']['memory_key']}")[0] == 200

    assert in_agreement(stack, node.url, user)
    indexed = indexed_keys(node.url, user)
    assert aged_32 not in indexed and gone["memory"]["memory_key"] not in indexed  # superseded, deleted
    assert "用户33岁" in search(stack, user, "年龄 岁") and "用户32岁" not in search(stack, user, "年龄 岁")
    assert "Owns a red kayak" not in search(stack, user, "kayak")

    # Search reads the index, not the table: a document taken out of the index alone is no longer found once the
    # window of fresh writes (which lays the table's last writes over the index) has passed. Each search records
    # access, which the stream indexes again, at a time of its own: the document is taken out and the search asked
    # until one search falls between the two (one that reads the table never does).
    turtle = saved["memory"]["memory_key"]
    assert "Keeps a turtle named Shelly" in search(stack, user, "turtle Shelly")
    assert wait_for(lambda: time.time() > saved_at + FRESH_WRITES_SECONDS + 1, timeout=FRESH_WRITES_SECONDS + 60)

    def found_after_taking_it_out_of_the_index() -> bool:
        try:
            engine(node.url, "DELETE", f"/{ALIAS}/_doc/{TENANT}%7C{user}%7C{turtle}?refresh=true")
        except urllib.error.HTTPError as error:
            if error.code != 404:  # out already: not indexed again since the last attempt
                raise
        return "Keeps a turtle named Shelly" in search(stack, user, "turtle Shelly")

    assert wait_for(lambda: not found_after_taking_it_out_of_the_index(), timeout=60)


def test_a_memory_saved_a_moment_ago_is_found_and_injected_before_the_stream_has_indexed_it(stack, node):
    user = "u-os-fresh"
    assert http(stack, "POST", f"/v1/users/{user}/memories",
                {"memory_type": "FACT", "content": "Lives in Porto and works as a baker"})[0] == 201
    assert in_agreement(stack, node.url, user)

    status, saved = http(stack, "POST", f"/v1/users/{user}/memories",
                         {"memory_type": "PREFERENCE", "content": "Prefers window seats on long flights",
                          "field": "seat_preference"})
    assert status == 201, saved
    found = search(stack, user, "window seats on flights")  # right after the save: the stream has not delivered
    status, injected = http(stack, "POST", "/v1/context/inject", {
        "user_id": user, "conversation_id": "trip", "max_context_tokens": 8000,
        "current_user_message": "Book me a long flight, window seats please"})
    # Superseded a moment ago: the index still holds the old version, which is not found.
    status_moved, moved = http(stack, "POST", f"/v1/users/{user}/memories", {
        "memory_type": "PREFERENCE", "content": "Prefers aisle seats on long flights", "field": "seat_preference"})

    assert "Prefers window seats on long flights" in found
    assert status == 200 and "Prefers window seats on long flights" in json.dumps(injected, ensure_ascii=False)
    assert status_moved == 201, moved
    after = search(stack, user, "seats on long flights")
    assert "Prefers aisle seats on long flights" in after and "Prefers window seats on long flights" not in after
    assert in_agreement(stack, node.url, user)  # and the index catches up on its own


def test_given_the_node_stopped_mid_traffic_then_search_is_503_and_the_indexer_catches_up_after(stack, node):
    user = "u-os-outage"
    assert http(stack, "POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": "Lives in Porto"}
                )[0] == 201
    assert in_agreement(stack, node.url, user)
    node.stop()
    try:
        request = urllib.request.Request(f"{stack.url}/v1/users/{user}/memories/search", method="POST",
                                         data=json.dumps({"query": "Porto"}).encode())
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 503 and refused.value.headers["Retry-After"]
        assert json.loads(refused.value.read())["error"]["code"] == "search_unavailable"
        # DynamoDB is the truth: saves go on while the index is down.
        for content in ("Moved to Lisbon in May", "Learns Portuguese on Tuesdays"):
            assert http(stack, "POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": content}
                        )[0] == 201
    finally:
        node.start()  # the same data directory and port

    # The indexer retried from its checkpoint: nothing saved during the outage is missing.
    assert in_agreement(stack, node.url, user, timeout=90)
    assert len(current_keys(stack, user)) == 3
    assert "Moved to Lisbon in May" in search(stack, user, "Lisbon")


def test_given_a_restart_then_the_table_and_its_own_node_still_agree(tmp_path: Path):
    """SEARCH=opensearch starts a node of its own, under the data dir, and keeps it across a restart."""
    user, port = "u-os-restart", free_port()
    overrides = {"SEARCH": "opensearch", "OPENSEARCH_PORT": str(port), "LOCAL_OPENSEARCH_HEAP_MB": "512"}
    url = f"http://127.0.0.1:{port}"
    first = start_stack(tmp_path, env_overrides=overrides)
    try:
        assert http(first, "POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": "Plays the cello"}
                    )[0] == 201
        assert in_agreement(first, url, user)
    finally:
        printed = first.stop()
    assert first.process.returncode == 0, printed
    assert (tmp_path / "opensearch").is_dir()

    second = start_stack(tmp_path, env_overrides=overrides)
    try:
        assert "Plays the cello" in search(second, user, "cello")
        assert http(second, "POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": "Sings in a choir"}
                    )[0] == 201
        assert in_agreement(second, url, user)  # delivered once: no record replayed, none skipped
        assert engine(url, "POST", f"/{ALIAS}/_count", {"query": {"term": {"user_id": user}}})["count"] == 2
    finally:
        second.stop()


def test_an_erased_user_leaves_no_document_in_the_index_and_search_finds_nothing(stack, node):
    user = "u-os-erase"
    for content in ("Keeps bees on the roof", "养了两箱蜜蜂", "Sells honey at the Saturday market"):
        assert http(stack, "POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": content})[0] == 201
    assert in_agreement(stack, node.url, user) and len(indexed_keys(node.url, user)) == 3

    status, receipt = http(stack, "DELETE", f"/v1/users/{user}")

    assert status == 200 and receipt["verified"], receipt
    stores = {s["store"]: s for s in receipt["stores"]}
    assert stores["search_index"]["found"] == 3 and stores["search_index"]["remaining"] == 0
    engine(node.url, "POST", f"/{ALIAS}/_refresh")
    assert indexed_keys(node.url, user) == set()
    assert search(stack, user, "bees honey 蜜蜂") == []
    # The stream's REMOVE records follow (the indexer deletes what is already gone) and bring nothing back.
    assert not wait_for(lambda: indexed_keys(node.url, user), timeout=10)
