"""The MCP server over stdio, driven by the MCP SDK's own client, against `make run`'s stack."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator

import anyio
import pytest
from agent_memory_client import MemoryClient

from tests.e2e.stack import ROOT, Stack, running_stack

pytestmark = pytest.mark.e2e

mcp = pytest.importorskip("mcp", reason="the mcp SDK is not installed (the client's [mcp] extra)")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

USER = "u-mcp"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("mcp-stack")) as running:
        yield running


def server_parameters(stack: Stack, *, tenant: str) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'shared'}:{ROOT}", "AGENT_MEMORY_TENANT": tenant}
    return StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "agent_memory_client.mcp_server", "--base-url", stack.url, "--user", USER])


async def session_calls(stack: Stack, calls: list[tuple[str, dict]], *, tenant: str = "mcp-tenant"
                        ) -> tuple[list[str], list[tuple[bool, str]]]:
    async with stdio_client(server_parameters(stack, tenant=tenant)) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        tools = [tool.name for tool in (await session.list_tools()).tools]
        results = []
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            results.append((bool(result.is_error), result.content[0].text))
        return tools, results


def test_the_sdk_client_lists_the_tools_and_calls_them_over_stdio(stack):
    tools, results = anyio.run(session_calls, stack, [
        ("save_user_memory", {"memory_type": "FACT", "content": "用户在上海做风险管理"}),
        ("search_memories", {"query": "风险管理", "search_mode": "keyword"}),
        ("set_hot_memory", {"type": "status", "key": "stage", "value": "准备材料"}),
        ("get_hot_memory", {}),
        ("summarize_profile", {}),
        ("save_user_memory", {"content": "no type"}),
    ])

    assert tools == ["search_memories", "get_memory_detail", "save_user_memory", "get_user_context",
                     "log_message", "get_hot_memory", "set_hot_memory", "search_reports", "summarize_profile"]
    saved, found, _, hot, profile, refused = results
    assert not saved[0] and json.loads(saved[1])["outcome"] == "created"
    assert "用户在上海做风险管理" in found[1]
    assert "准备材料" in hot[1] and "completeness" in profile[1]
    assert refused[0] and "memory_type" in refused[1]


def test_the_server_acts_for_its_tenant_only(stack):
    MemoryClient(stack.url, tenant_id="someone-else").save(USER, memory_type="FACT", content="另一个租户的记忆")

    calls = [("get_user_context", {"query": ""})]
    _, [(failed, text)] = anyio.run(lambda: session_calls(stack, calls, tenant="mcp-alone"))

    assert not failed and json.loads(text)["total_memories"] == 0


def test_the_server_also_speaks_streamable_http_for_remote_agents(stack):
    import socket
    import subprocess
    import time

    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    parameters = server_parameters(stack, tenant="mcp-http")
    server = subprocess.Popen([parameters.command, *parameters.args, "--transport", "http", "--port", str(port)],
                              env=parameters.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    async def listed() -> list[str]:
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            return [tool.name for tool in (await session.list_tools()).tools]

    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                alive = server.poll() is None and time.monotonic() < deadline
                assert alive, server.stderr.read() if server.stderr else "the MCP server did not start"
                time.sleep(0.2)
        assert len(anyio.run(listed)) == 9
    finally:
        server.terminate()
        server.wait(timeout=30)
