"""Anthropic's memory tool (memory_20250818), kept by the agent-memory service instead of local files.

`RemoteMemoryTool` subclasses the SDK's `BetaAbstractMemoryTool`: each command Claude sends (view, create,
str_replace, insert, delete, rename) is forwarded to `POST /v1/users/{user_id}/memory-tool`, and the service's
answer is the tool result. An answer with `is_error` raises the SDK's `ToolError`, so the tool runner sends
the result with `is_error: true`; so does a 4xx the model can act on (a bad path, a file over the size limit).
Throttling, outages and auth failures raise the client's own errors (the runner reports them as errors too).

    from anthropic import Anthropic
    from agent_memory_client import MemoryClient
    from agent_memory_client.memory_tool import RemoteMemoryTool

    memory = RemoteMemoryTool(MemoryClient("http://127.0.0.1:3000", tenant_id="t1"), user_id="u-1001")
    runner = Anthropic().beta.messages.tool_runner(model=..., max_tokens=1024, tools=[memory], messages=[...])

Needs the `anthropic` extra: `pip install 'agent-memory-serverless-client[anthropic]'`.
"""

from __future__ import annotations

from typing import Any

from agent_memory_client._extras import missing_extra
from agent_memory_client.client import AsyncMemoryClient, MemoryClient
from agent_memory_client.errors import (
    BadRequestError,
    ConflictError,
    MemoryApiError,
    NotFoundError,
    PayloadTooLargeError,
    ValidationError,
)
from agent_memory_client.types import MemoryToolResult

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
    from anthropic.types.beta import (
        BetaCacheControlEphemeralParam,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )
except ModuleNotFoundError as error:  # installed without the [anthropic] extra
    raise missing_extra("the memory tool", "anthropic", error) from error

__all__ = ["AsyncRemoteMemoryTool", "RemoteMemoryTool"]

# Errors about the command itself: the model reads them and can try again differently.
_MODEL_FIXABLE = (BadRequestError, NotFoundError, ConflictError, PayloadTooLargeError, ValidationError)


def _payload(command: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = command.model_dump(mode="json", exclude_none=True)
    return dumped


def _content(result: MemoryToolResult) -> str:
    if result.get("is_error"):
        raise ToolError(result.get("content") or "the memory command failed")
    return result["content"]


def _tool_error(error: MemoryApiError) -> ToolError:
    return ToolError(f"Error: {error.message}")


class RemoteMemoryTool(BetaAbstractMemoryTool):
    """The memory tool for `client.beta.messages.tool_runner`, stored per user by the agent-memory service."""

    def __init__(self, client: MemoryClient, user_id: str, *,
                 cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self._client = client
        self._user_id = user_id

    def _forward(self, command: Any) -> str:
        try:
            result = self._client.memory_tool(self._user_id, _payload(command))
        except _MODEL_FIXABLE as error:
            raise _tool_error(error) from error
        return _content(result)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._forward(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._forward(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._forward(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._forward(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._forward(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._forward(command)


class AsyncRemoteMemoryTool(BetaAsyncAbstractMemoryTool):
    """`RemoteMemoryTool` for the async tool runner, over an `AsyncMemoryClient`."""

    def __init__(self, client: AsyncMemoryClient, user_id: str, *,
                 cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        self._client = client
        self._user_id = user_id

    async def _forward(self, command: Any) -> str:
        try:
            result = await self._client.memory_tool(self._user_id, _payload(command))
        except _MODEL_FIXABLE as error:
            raise _tool_error(error) from error
        return _content(result)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._forward(command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._forward(command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._forward(command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._forward(command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._forward(command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._forward(command)
