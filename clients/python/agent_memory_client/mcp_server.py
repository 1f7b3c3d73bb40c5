"""An MCP server giving an agent one user's memory: the memory tools of `GET /v1/tools` (the four memory
tools and the extended ones), each call run by the API's tool executor.

    python -m agent_memory_client.mcp_server --base-url http://127.0.0.1:3000 --user u-1001
    python -m agent_memory_client.mcp_server --base-url ... --user u-1001 --transport http --port 8765

Over stdio (the default) for a local agent (Claude Desktop, Claude Code); over streamable HTTP at
`/mcp` for remote use. The tenant and token come from `--tenant` / `--token`, else from the environment
(`AGENT_MEMORY_TENANT`, `AGENT_MEMORY_TOKEN`); without a tenant the API's default tenant is used.

Needs the `mcp` extra: `pip install 'agent-memory-serverless-client[mcp]'`.
"""

from __future__ import annotations

import argparse
import os
import uuid
from collections.abc import Sequence
from typing import Any

import anyio

from agent_memory_client import AsyncMemoryClient, MemoryApiError
from agent_memory_client._extras import missing_extra

try:
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.stdio import stdio_server
except ModuleNotFoundError as error:  # installed without the [mcp] extra
    _missing = missing_extra("the MCP server", "mcp", error)
    if __name__ == "__main__":  # `python -m agent_memory_client.mcp_server`: the message, without a traceback
        raise SystemExit(str(_missing)) from error
    raise _missing from error

SERVER_NAME = "agent-memory"


class MemoryToolServer:
    """The MCP handlers over one API client and one user."""

    def __init__(self, client: AsyncMemoryClient, user_id: str, *, lang: str = "en") -> None:
        self.client, self.user_id, self.lang = client, user_id, lang
        self._catalogue: dict[str, Any] | None = None

    async def catalogue(self) -> dict[str, Any]:
        if self._catalogue is None:  # the API's tool definitions do not change while it runs
            self._catalogue = dict(await self.client.tools(lang=self.lang, include="all"))
        return self._catalogue

    async def list_tools(self, _: Any, __: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = (await self.catalogue())["tools"]
        return types.ListToolsResult(tools=[
            types.Tool(name=t["name"], description=t["description"], input_schema=t["input_schema"]) for t in tools])

    async def call_tool(self, _: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        block = {"type": "tool_use", "id": f"mcp_{uuid.uuid4().hex}", "name": params.name,
                 "input": dict(params.arguments or {})}
        try:
            result = await self.client.execute_tool(self.user_id, block)
        except MemoryApiError as error:  # the service itself failed (throttled, down): say so, retryable
            return _text(f"the memory service answered {error.status} {error.code}: {error.message}", error=True)
        return _text(str(result["content"]), error=bool(result.get("is_error")))

    async def server(self) -> Server[Any]:
        catalogue = await self.catalogue()
        return Server(SERVER_NAME, instructions=str(catalogue.get("system_prompt") or ""),
                      on_list_tools=self.list_tools, on_call_tool=self.call_tool)


def _text(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


async def serve_stdio(handlers: MemoryToolServer) -> None:
    server = await handlers.server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(handlers: MemoryToolServer, host: str, port: int) -> None:
    import uvicorn

    server = await handlers.server()
    config = uvicorn.Config(server.streamable_http_app(host=host), host=host, port=port, log_level="warning")
    await uvicorn.Server(config).serve()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="agent-memory MCP server for one user")
    parser.add_argument("--base-url", default=os.environ.get("AGENT_MEMORY_URL", "http://127.0.0.1:3000"))
    parser.add_argument("--user", default=os.environ.get("MEMORY_USER"), required="MEMORY_USER" not in os.environ)
    parser.add_argument("--tenant", default=os.environ.get("AGENT_MEMORY_TENANT"))
    parser.add_argument("--token", default=os.environ.get("AGENT_MEMORY_TOKEN"))
    parser.add_argument("--lang", choices=("en", "zh"), default=os.environ.get("AGENT_MEMORY_TOOLS_LANG", "en"))
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)

    async def run() -> None:
        async with AsyncMemoryClient(args.base_url, tenant_id=args.tenant, token=args.token) as client:
            handlers = MemoryToolServer(client, args.user, lang=args.lang)
            if args.transport == "stdio":
                await serve_stdio(handlers)
            else:
                await serve_http(handlers, args.host, args.port)

    anyio.run(run)


if __name__ == "__main__":
    main()
