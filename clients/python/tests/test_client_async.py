"""AsyncMemoryClient over httpx.MockTransport: the same routes as the sync client (the same table), retries,
errors, pagination and the async remote memory tool. No sockets; each test runs its own event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import httpx
import pytest
from tests.fakes.client_routes import CASES, Case, assert_request
from tests.fakes.memory_api import BASE, Server, api_error, batch_answer, budget_refusal, ok, pages

from agent_memory_client import AsyncMemoryClient, MemoryConnectionError, RateLimitError, ValidationError


def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coroutine)


def async_client(*answers: httpx.Response | Exception, **options: Any
                 ) -> tuple[AsyncMemoryClient, Server, list[float]]:
    server, sleeps = Server(list(answers)), []

    async def sleep(delay: float) -> None:
        sleeps.append(delay)

    options.setdefault("tenant_id", "t1")
    client = AsyncMemoryClient(BASE, http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)), **options)
    client._sleep = sleep
    return client, server, sleeps


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_given_each_method_then_it_sends_its_route_and_body(case: Case):
    client, server, _ = async_client()

    run(case.call(client))

    [request] = server.requests
    assert_request(request, case)


def test_given_a_429_with_retry_after_then_it_waits_that_long_and_succeeds():
    client, server, sleeps = async_client(api_error(429, "throttled", headers={"Retry-After": "2"}),
                                          ok({"total_found": 1, "results": []}))

    result = run(client.search("u-1", "年龄"))

    assert result["total_found"] == 1
    assert len(server.requests) == 2
    assert 2.0 <= sleeps[0] <= 2.2


def test_given_a_422_then_it_is_not_retried():
    client, server, sleeps = async_client(api_error(422, "validation_error", "bad", [{"field": "content"}]))

    with pytest.raises(ValidationError):
        run(client.save("u-1", memory_type="FACT", content="x"))

    assert len(server.requests) == 1 and sleeps == []


def test_given_throttling_that_never_ends_then_it_gives_up_after_max_retries():
    client, server, _ = async_client(api_error(429, headers={"Retry-After": "1"}), max_retries=3)

    with pytest.raises(RateLimitError):
        run(client.extract("u-1", "我35岁"))

    assert len(server.requests) == 4


def test_given_the_server_stays_unreachable_then_a_connection_error_is_raised():
    client, server, _ = async_client(httpx.ConnectError("refused"), max_retries=1)

    with pytest.raises(MemoryConnectionError):
        run(client.tools())

    assert len(server.requests) == 2


def test_given_three_pages_then_iter_memories_yields_them_all():
    client, server, _ = async_client(*pages(["a", "b"], ["c"], ["d"]))

    async def collect() -> list[str]:
        return [m["memory_key"] async for m in client.iter_memories("u-1", page_size=2)]

    assert run(collect()) == ["a", "b", "c", "d"]
    assert [r.url.params.get("cursor") for r in server.requests] == [None, "cur-1", "cur-2"]


def test_given_two_export_pages_then_the_async_client_iterates_and_imports_them():
    page = {"format": "agent-memory-export", "version": 1, "log": []}
    answer = {"scope": {"type": "user", "id": "u-2"}, "imported": {}, "skipped": {}}
    client, server, _ = async_client(ok({**page, "next_cursor": "c-1"}), ok({**page, "next_cursor": None}),
                                     ok(answer), ok(answer))

    async def move() -> int:
        document = await client.export_file("users", "u-1")
        return len(await client.import_file("users", "u-2", document))

    assert run(move()) == 2
    assert [(r.method, r.url.path, r.url.params.get("cursor")) for r in server.requests] == [
        ("GET", "/prod/v1/users/u-1/export", None), ("GET", "/prod/v1/users/u-1/export", "c-1"),
        ("POST", "/prod/v1/users/u-2/import", None), ("POST", "/prod/v1/users/u-2/import", None)]


def test_as_a_context_manager_it_closes_its_own_http_client():
    async def use() -> AsyncMemoryClient:
        async with AsyncMemoryClient(BASE) as client:
            return client

    client = run(use())

    assert client._http.is_closed


def test_the_async_remote_memory_tool_forwards_and_maps_errors():
    from anthropic.lib.tools import ToolError

    from agent_memory_client.memory_tool import AsyncRemoteMemoryTool

    client, server, _ = async_client(ok({"content": "File created successfully at: /memories/a.md", "is_error": False}),
                                     ok({"content": "File /memories/a.md already exists", "is_error": True}))
    tool = AsyncRemoteMemoryTool(client, "u-1")
    command = {"command": "create", "path": "/memories/a.md", "file_text": "高才通"}

    assert run(tool.call(command)) == "File created successfully at: /memories/a.md"
    with pytest.raises(ToolError, match="already exists"):
        run(tool.call(command))
    assert server.bodies() == [command, command]


def test_given_a_batch_over_the_embedding_budget_then_the_async_client_sends_it_in_parts_that_fit():
    client, server, _ = async_client(budget_refusal([500, 500], limit=600), batch_answer(["k0"]),
                                     batch_answer(["k1"]))

    answer = run(client.save_batch("u-1", [{"memory_type": "FACT", "content": "a"},
                                           {"memory_type": "FACT", "content": "b"}]))

    assert len(server.requests) == 3 and answer["memory_keys"] == ["k0", "k1"]
    assert [r["index"] for r in answer["results"]] == [0, 1]
