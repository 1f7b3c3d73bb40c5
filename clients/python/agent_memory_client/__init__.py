"""Python client for the agent-memory HTTP API: long-term memory for LLM agents.

    from agent_memory_client import MemoryClient

    with MemoryClient("http://127.0.0.1:3000", tenant_id="t1") as memory:
        memory.save("u-1001", memory_type="FACT", content="用户32岁，在杭州做前端开发")
        hits = memory.search("u-1001", "年龄")["results"]

`AsyncMemoryClient` has the same methods, awaited. Errors are `MemoryApiError` subclasses (one per status)
and `MemoryConnectionError`; transient failures are retried (README: "Retries"). The Anthropic memory tool
backed by the service is `agent_memory_client.memory_tool.RemoteMemoryTool` (needs the `anthropic` extra).
"""

from agent_memory_client._http import RetryPolicy, __version__
from agent_memory_client._routes import RETRY_SAFE_MEMORY_COMMANDS, RETRY_SAFE_TOOLS
from agent_memory_client.client import AsyncMemoryClient, MemoryClient
from agent_memory_client.errors import (
    AuthenticationError,
    BadRequestError,
    ConflictError,
    MemoryApiError,
    MemoryClientError,
    MemoryConnectionError,
    MemoryTimeoutError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    ValidationError,
)

__all__ = [
    "RETRY_SAFE_MEMORY_COMMANDS",
    "RETRY_SAFE_TOOLS",
    "AsyncMemoryClient",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "MemoryApiError",
    "MemoryClient",
    "MemoryClientError",
    "MemoryConnectionError",
    "MemoryTimeoutError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "RetryPolicy",
    "ServerError",
    "ServiceUnavailableError",
    "ValidationError",
    "__version__",
]
