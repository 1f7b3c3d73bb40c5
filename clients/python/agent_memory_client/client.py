"""`MemoryClient` (sync) and `AsyncMemoryClient` (async): two thin transports over the same route table.

Each route is written once, in `_routes.py`, as a function that returns the `Call` to send. `_sync` and
`_async` turn such a function into a method with the same name, parameters and docstring that sends the
call and returns its decoded answer; mypy checks every method's arguments and return type through them
(ParamSpec). What differs between the clients is only the retry loop below: send, decide, sleep.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import anyio
import httpx

from agent_memory_client import _routes
from agent_memory_client._http import Call, RetryPolicy, connection_error, decode, request, retry_delay
from agent_memory_client.errors import PayloadTooLargeError
from agent_memory_client.types import (
    BatchSaveResponse,
    ExportPage,
    ImportResult,
    Memory,
    MemoryType,
    NewMemory,
    Scope,
)

__all__ = ["AsyncMemoryClient", "MemoryClient"]

P = ParamSpec("P")
T = TypeVar("T")
_Client = TypeVar("_Client", bound="_Settings")


class _Settings:
    """What both clients are configured with; they differ only in their transport."""

    def __init__(self, base_url: str, *, tenant_id: str | None, token: str | None, max_retries: int,
                 retry_policy: RetryPolicy | None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.base_url = base_url.rstrip("/")
        self.tenant_id = tenant_id
        self._token = token
        self.retry_policy = retry_policy or RetryPolicy(max_retries=max_retries)

    def __repr__(self) -> str:  # never shows the token
        return f"{type(self).__name__}(base_url={self.base_url!r}, tenant_id={self.tenant_id!r})"


def _with_self(build: Callable[..., Any], method: Callable[..., Any]) -> None:
    """Give `method` the route function's name, docstring and signature (with `self` first), for help() and IDEs."""
    functools.update_wrapper(method, build)
    signature = inspect.signature(build)
    answer = signature.return_annotation  # "Call[SaveResponse]": the method returns the SaveResponse
    if isinstance(answer, str) and answer.startswith("Call[") and answer.endswith("]"):
        answer = answer[len("Call["):-1]
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_param, *signature.parameters.values()], return_annotation=answer)
    del method.__wrapped__  # type: ignore[attr-defined]  # so inspect reads __signature__, not the route function


def _sync(build: Callable[P, Call[T]]) -> Callable[Concatenate[MemoryClient, P], T]:
    def method(self: MemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._send(build(*args, **kwargs))

    _with_self(build, method)
    return method


def _async(build: Callable[P, Call[T]]) -> Callable[Concatenate[AsyncMemoryClient, P], Awaitable[T]]:
    async def method(self: AsyncMemoryClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._send(build(*args, **kwargs))

    _with_self(build, method)
    return method


class MemoryClient(_Settings):
    """The agent-memory API, synchronously.

    `MemoryClient("https://api.example.com", tenant_id="t1")` for a local deployment (the tenant comes from
    the `X-Tenant-Id` header), `token=` for a JWT deployment (`Authorization: Bearer`; the token's claim
    decides the tenant). Failed attempts are retried up to `max_retries` times (see the README's "Retries"),
    or per `retry_policy` when given. `timeout` is in seconds; pass `http_client` to bring your own
    `httpx.Client` (its timeout, proxies and limits apply, and `close()` leaves it open).
    Use as a context manager, or call `close()`.
    """

    def __init__(self, base_url: str, *, tenant_id: str | None = None, token: str | None = None,
                 timeout: float | httpx.Timeout = 30.0, max_retries: int = 3,
                 http_client: httpx.Client | None = None, retry_policy: RetryPolicy | None = None) -> None:
        super().__init__(base_url, tenant_id=tenant_id, token=token, max_retries=max_retries,
                         retry_policy=retry_policy)
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.Client(timeout=timeout)
        self._sleep: Callable[[float], None] = time.sleep

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self: _Client) -> _Client:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        built = request(self._http, self.base_url, call, self.tenant_id, self._token)
        attempt = 0
        while True:
            try:
                response = self._http.send(built)
            except httpx.TransportError as error:
                delay = retry_delay(self.retry_policy, call, attempt, error)
                if delay is None:
                    raise connection_error(error, call) from error
            else:
                delay = retry_delay(self.retry_policy, call, attempt, response) if response.is_error else None
                if delay is None:
                    return cast(T, decode(response, call.answers))
            self._sleep(delay)
            attempt += 1

    def iter_memories(self, user_id: str, *, memory_type: MemoryType | None = None, page_size: int = 100
                      ) -> Iterator[Memory]:
        """Every current memory of the user, newest first, fetched `page_size` (1-100) at a time."""
        cursor: str | None = None
        while True:
            page = self.list_memories(user_id, memory_type=memory_type, limit=page_size, cursor=cursor)
            yield from page["items"]
            if not page.get("next_cursor") or page["next_cursor"] == cursor:
                return
            cursor = page["next_cursor"]

    def save_batch(self, user_id: str, memories: Sequence[NewMemory | Mapping[str, Any]]) -> BatchSaveResponse:
        """Store memories in order (`POST .../memories/batch`). A batch over the server's embedding budget
        (413, `embedding_budget`) is sent again in consecutive parts that fit, in order, and answered as one."""
        try:
            return self._send(_routes.save_batch(user_id, memories))
        except PayloadTooLargeError as refused:
            parts = _routes.batch_parts(memories, refused.details)
            if parts is None:
                raise
            return _routes.joined_batches([self._send(_routes.save_batch(user_id, part)) for part in parts])

    def iter_export(self, scope: Scope, scope_id: str) -> Iterator[ExportPage]:
        """Every page of the user's or project's export, in order (`export_page`, following `next_cursor`)."""
        cursor: str | None = None
        while True:
            page = self.export_page(scope, scope_id, cursor=cursor)
            yield page
            if not page.get("next_cursor") or page["next_cursor"] == cursor:
                return
            cursor = page["next_cursor"]

    def export_file(self, scope: Scope, scope_id: str) -> dict[str, Any]:
        """The whole export as one document, `{format: agent-memory-export-file, version: 1, pages: [...]}`."""
        return _routes.export_file(list(self.iter_export(scope, scope_id)))

    def import_file(self, scope: Scope, scope_id: str,
                    exported: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[ImportResult]:
        """Import an export document (or a list of pages, or one page) into the user or project, page by page in
        order; each page all or nothing. Sending it again stores nothing twice."""
        return [self.import_page(scope, scope_id, page) for page in _routes.file_pages(exported)]

    save = _sync(_routes.save)
    extract = _sync(_routes.extract)
    delete_memory = _sync(_routes.delete_memory)
    get_memory = _sync(_routes.get_memory)
    list_memories = _sync(_routes.list_memories)
    search = _sync(_routes.search)
    recall = _sync(_routes.recall)
    resolve_placeholders = _sync(_routes.resolve_placeholders)
    load_context = _sync(_routes.load_context)
    summarize = _sync(_routes.summarize)
    inject = _sync(_routes.inject)
    log = _sync(_routes.log)
    search_conversations = _sync(_routes.search_conversations)
    get_hot_memory = _sync(_routes.get_hot_memory)
    set_hot_memory = _sync(_routes.set_hot_memory)
    delete_hot_memory = _sync(_routes.delete_hot_memory)
    refresh_hot_memory = _sync(_routes.refresh_hot_memory)
    list_reports = _sync(_routes.list_reports)
    search_reports = _sync(_routes.search_reports)
    intent_context = _sync(_routes.intent_context)
    add_synonyms = _sync(_routes.add_synonyms)
    get_synonyms = _sync(_routes.get_synonyms)
    tools = _sync(_routes.tools)
    execute_tool = _sync(_routes.execute_tool)
    memory_tool = _sync(_routes.memory_tool)
    erase = _sync(_routes.erase)
    get_erasure = _sync(_routes.get_erasure)
    retention = _sync(_routes.retention)
    health = _sync(_routes.health)
    health_status = _sync(_routes.health_status)
    export_page = _sync(_routes.export_page)
    import_page = _sync(_routes.import_page)


class AsyncMemoryClient(_Settings):
    """The agent-memory API, asynchronously (asyncio or trio): `MemoryClient`'s methods, awaited.

    Use as an async context manager, or `await client.aclose()`.
    """

    def __init__(self, base_url: str, *, tenant_id: str | None = None, token: str | None = None,
                 timeout: float | httpx.Timeout = 30.0, max_retries: int = 3,
                 http_client: httpx.AsyncClient | None = None, retry_policy: RetryPolicy | None = None) -> None:
        super().__init__(base_url, tenant_id=tenant_id, token=token, max_retries=max_retries,
                         retry_policy=retry_policy)
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout)
        self._sleep: Callable[[float], Awaitable[None]] = anyio.sleep

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def close(self) -> None:
        """The same as `aclose()`."""
        await self.aclose()

    async def __aenter__(self: _Client) -> _Client:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.aclose()

    async def _send(self, call: Call[T]) -> T:
        built = request(self._http, self.base_url, call, self.tenant_id, self._token)
        attempt = 0
        while True:
            try:
                response = await self._http.send(built)
            except httpx.TransportError as error:
                delay = retry_delay(self.retry_policy, call, attempt, error)
                if delay is None:
                    raise connection_error(error, call) from error
            else:
                delay = retry_delay(self.retry_policy, call, attempt, response) if response.is_error else None
                if delay is None:
                    return cast(T, decode(response, call.answers))
            await self._sleep(delay)
            attempt += 1

    async def iter_memories(self, user_id: str, *, memory_type: MemoryType | None = None, page_size: int = 100
                            ) -> AsyncIterator[Memory]:
        """Every current memory of the user, newest first, fetched `page_size` (1-100) at a time."""
        cursor: str | None = None
        while True:
            page = await self.list_memories(user_id, memory_type=memory_type, limit=page_size, cursor=cursor)
            for memory in page["items"]:
                yield memory
            if not page.get("next_cursor") or page["next_cursor"] == cursor:
                return
            cursor = page["next_cursor"]

    async def save_batch(self, user_id: str, memories: Sequence[NewMemory | Mapping[str, Any]]
                         ) -> BatchSaveResponse:
        """Store memories in order (`POST .../memories/batch`). A batch over the server's embedding budget
        (413, `embedding_budget`) is sent again in consecutive parts that fit, in order, and answered as one."""
        try:
            return await self._send(_routes.save_batch(user_id, memories))
        except PayloadTooLargeError as refused:
            parts = _routes.batch_parts(memories, refused.details)
            if parts is None:
                raise
            return _routes.joined_batches([await self._send(_routes.save_batch(user_id, part)) for part in parts])

    async def iter_export(self, scope: Scope, scope_id: str) -> AsyncIterator[ExportPage]:
        """Every page of the user's or project's export, in order (`export_page`, following `next_cursor`)."""
        cursor: str | None = None
        while True:
            page = await self.export_page(scope, scope_id, cursor=cursor)
            yield page
            if not page.get("next_cursor") or page["next_cursor"] == cursor:
                return
            cursor = page["next_cursor"]

    async def export_file(self, scope: Scope, scope_id: str) -> dict[str, Any]:
        """The whole export as one document, `{format: agent-memory-export-file, version: 1, pages: [...]}`."""
        return _routes.export_file([page async for page in self.iter_export(scope, scope_id)])

    async def import_file(self, scope: Scope, scope_id: str,
                          exported: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[ImportResult]:
        """Import an export document (or a list of pages, or one page) into the user or project, page by page in
        order; each page all or nothing. Sending it again stores nothing twice."""
        return [await self.import_page(scope, scope_id, page) for page in _routes.file_pages(exported)]

    save = _async(_routes.save)
    extract = _async(_routes.extract)
    delete_memory = _async(_routes.delete_memory)
    get_memory = _async(_routes.get_memory)
    list_memories = _async(_routes.list_memories)
    search = _async(_routes.search)
    recall = _async(_routes.recall)
    resolve_placeholders = _async(_routes.resolve_placeholders)
    load_context = _async(_routes.load_context)
    summarize = _async(_routes.summarize)
    inject = _async(_routes.inject)
    log = _async(_routes.log)
    search_conversations = _async(_routes.search_conversations)
    get_hot_memory = _async(_routes.get_hot_memory)
    set_hot_memory = _async(_routes.set_hot_memory)
    delete_hot_memory = _async(_routes.delete_hot_memory)
    refresh_hot_memory = _async(_routes.refresh_hot_memory)
    list_reports = _async(_routes.list_reports)
    search_reports = _async(_routes.search_reports)
    intent_context = _async(_routes.intent_context)
    add_synonyms = _async(_routes.add_synonyms)
    get_synonyms = _async(_routes.get_synonyms)
    tools = _async(_routes.tools)
    execute_tool = _async(_routes.execute_tool)
    memory_tool = _async(_routes.memory_tool)
    erase = _async(_routes.erase)
    get_erasure = _async(_routes.get_erasure)
    retention = _async(_routes.retention)
    health = _async(_routes.health)
    health_status = _async(_routes.health_status)
    export_page = _async(_routes.export_page)
    import_page = _async(_routes.import_page)
