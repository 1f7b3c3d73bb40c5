"""The Python client (clients/python, installed as `agent_memory_client`) over httpx.MockTransport: each
method's method, path and body (held to the server's operation table and request models), URL encoding,
headers, retries, typed errors, pagination and the remote memory tool. No sockets."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import httpx
import pytest
from tests.fakes.client_routes import CASES, HOT_KEY, HOT_KEY_ENCODED, LOGGED, TOOL_USE, assert_request
from tests.fakes.memory_api import BASE, Server, api_error, batch_answer, budget_refusal, memory, ok, pages

from agent_memory.api.operations import OPERATIONS
from agent_memory_client import (
    AsyncMemoryClient,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    MemoryApiError,
    MemoryClient,
    MemoryConnectionError,
    MemoryTimeoutError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    ServiceUnavailableError,
    ValidationError,
    __version__,
)


def sync_client(*answers: httpx.Response | Exception, **options: Any) -> tuple[MemoryClient, Server, list[float]]:
    server, sleeps = Server(list(answers)), []
    options.setdefault("tenant_id", "t1")
    client = MemoryClient(BASE, http_client=httpx.Client(transport=httpx.MockTransport(server)), **options)
    client._sleep = sleeps.append
    return client, server, sleeps


# --------------------------------------------------------------------------------------- every route, once


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_given_each_method_then_it_sends_its_route_and_body(case):
    client, server, _ = sync_client()

    case.call(client)

    [request] = server.requests
    assert_request(request, case)


def test_every_operation_of_the_api_has_a_client_method():
    covered = {(c.method, c.template) for c in CASES}
    missing = {(op.method, op.path) for op in OPERATIONS} - covered
    assert not missing


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_given_each_method_then_the_server_models_accept_what_it_sends(case):
    operation = next((op for op in OPERATIONS if (op.method, op.path) == (case.method, case.template)), None)
    if operation is None:
        pytest.skip(f"{case.method} {case.template} is not in this server's operation table yet")
    if operation.body is not None and case.body is not None:
        operation.body.model_validate(case.body)
    if operation.query is not None:
        operation.query.model_validate(case.params)


def test_both_clients_expose_the_same_methods():
    def public(cls: type) -> set[str]:
        return {name for name in vars(cls) if not name.startswith("_")}

    assert public(MemoryClient) - {"close"} == public(AsyncMemoryClient) - {"close", "aclose"}
    assert {c.name for c in CASES} <= public(MemoryClient)


# ------------------------------------------------------------------------------------ encoding and headers


@pytest.mark.parametrize(("key", "encoded"), [
    (HOT_KEY, HOT_KEY_ENCODED),
    ("目标 / 下一步?", "%E7%9B%AE%E6%A0%87%20%2F%20%E4%B8%8B%E4%B8%80%E6%AD%A5%3F"),
    ("50%#1", "50%25%231"),
    ("..", "%2E%2E"),
])
def test_given_a_hot_memory_key_then_it_travels_as_one_percent_encoded_segment(key, encoded):
    client, server, _ = sync_client()

    client.set_hot_memory("users", "u-1", "status", key, "x")

    assert server.requests[0].url.raw_path.decode() == f"/prod/v1/users/u-1/hot-memory/status/{encoded}"


def test_given_ids_with_colons_and_at_signs_then_they_stay_readable_in_the_path():
    client, server, _ = sync_client()

    client.get_hot_memory("projects", "org:team@p-1")

    assert server.requests[0].url.raw_path.decode() == "/prod/v1/projects/org:team@p-1/hot-memory"


def test_given_a_tenant_and_a_token_then_every_request_carries_both():
    client, server, _ = sync_client(token="tok-123")

    client.search("u-1", "q")
    client.get_hot_memory("users", "u-1")

    for request in server.requests:
        assert request.headers["authorization"] == "Bearer tok-123"
        assert request.headers["x-tenant-id"] == "t1"
        assert request.headers["accept"] == "application/json"
        assert request.headers["user-agent"] == f"agent-memory-serverless-client/{__version__}"
    assert server.requests[0].headers["content-type"] == "application/json"
    assert "content-type" not in server.requests[1].headers


def test_given_no_tenant_nor_token_then_neither_header_is_sent():
    client, server, _ = sync_client(tenant_id=None)

    client.tools()

    assert "authorization" not in server.requests[0].headers
    assert "x-tenant-id" not in server.requests[0].headers


def test_the_token_never_shows_in_the_clients_repr():
    client, _, _ = sync_client(token="secret-token")

    assert "secret-token" not in repr(client)


@pytest.mark.parametrize("call", [
    lambda c: c.save("", memory_type="FACT", content="x"),
    lambda c: c.get_memory("u-1", ""),
    lambda c: c.get_hot_memory("teams", "p-1"),  # type: ignore[arg-type]
    lambda c: c.set_hot_memory("users", "u-1", "facts", "k", 1),  # type: ignore[arg-type]
    lambda c: c.add_synonyms("TTPS", "高才通"),
])
def test_given_an_argument_that_cannot_make_a_route_then_nothing_is_sent(call):
    client, server, _ = sync_client()

    with pytest.raises((ValueError, TypeError)):
        call(client)

    assert server.requests == []


def test_given_a_base_url_without_a_scheme_then_the_client_refuses_it():
    with pytest.raises(ValueError, match="http"):
        MemoryClient("memory.test")


def test_given_an_sdk_tool_use_block_then_only_its_block_fields_are_sent():
    class Block:  # what anthropic's BetaToolUseBlock offers: model_dump
        def model_dump(self, **_: Any) -> dict[str, Any]:
            return {**TOOL_USE, "caller": {"type": "direct"}}

    client, server, _ = sync_client(ok({"type": "tool_result", "tool_use_id": "toolu_01", "content": "[]"}))

    result = client.execute_tool("u-1", Block())

    assert server.bodies() == [TOOL_USE]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_01", "content": "[]"}


# -------------------------------------------------------------------------------------------------- retries


def test_given_a_429_with_retry_after_then_it_waits_that_long_and_succeeds():
    client, server, sleeps = sync_client(api_error(429, "throttled", headers={"Retry-After": "2"}),
                                         ok({"total_found": 0, "results": []}))

    result = client.search("u-1", "年龄")

    assert result["total_found"] == 0
    assert len(server.requests) == 2
    assert server.requests[0].content == server.requests[1].content
    [delay] = sleeps
    assert 2.0 <= delay <= 2.2


def test_given_a_422_then_it_is_not_retried_and_names_the_field():
    details = [{"field": "memory_type", "message": "Input should be 'FACT', 'PREFERENCE' or 'INTENT'",
                "type": "enum"}]
    client, server, sleeps = sync_client(api_error(422, "validation_error", "invalid request", details))

    with pytest.raises(ValidationError) as raised:
        client.save("u-1", memory_type="FACT", content="x")

    assert len(server.requests) == 1 and sleeps == []
    assert raised.value.details == details
    assert raised.value.code == "validation_error"


def test_given_throttling_that_never_ends_then_it_gives_up_after_max_retries():
    client, server, sleeps = sync_client(api_error(429, "throttled", headers={"Retry-After": "1"}), max_retries=2)

    with pytest.raises(RateLimitError) as raised:
        client.save("u-1", memory_type="FACT", content="x")

    assert len(server.requests) == 3
    assert len(sleeps) == 2
    assert raised.value.retry_after == 1.0
    assert raised.value.status == 429


def test_given_max_retries_zero_then_a_429_raises_at_once():
    client, server, sleeps = sync_client(api_error(429), max_retries=0)

    with pytest.raises(RateLimitError):
        client.tools()

    assert len(server.requests) == 1 and sleeps == []


def test_given_a_huge_retry_after_then_the_wait_is_capped():
    client, _, sleeps = sync_client(api_error(503, headers={"Retry-After": "3600"}), ok())

    client.summarize("u-1")

    assert 60.0 <= sleeps[0] <= 66.0


def test_given_the_health_check_answers_503_then_its_body_is_returned_at_once_not_raised_nor_retried():
    down = {"status": "unavailable", "tables": {"MemoryTable": {"status": "down", "latency_ms": None,
                                                                "error": "unreachable"}}}
    client, server, sleeps = sync_client(ok(down, status=503, headers={"Retry-After": "5"}), ok())

    answer = client.health()

    assert answer == down
    assert len(server.requests) == 1 and sleeps == []


def test_given_503s_without_retry_after_then_the_backoff_grows_with_jitter():
    client, server, sleeps = sync_client(api_error(503), api_error(503), api_error(503), ok())

    client.load_context("u-1")

    assert len(server.requests) == 4
    for attempt, delay in enumerate(sleeps):
        ceiling = 0.5 * 2**attempt
        assert ceiling / 2 <= delay <= ceiling


def test_the_backoff_never_exceeds_its_ceiling():
    policy = RetryPolicy(max_retries=10)

    assert [policy.delay(n, None, draw=1.0) for n in (0, 1, 2, 3, 4, 9)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert policy.delay(9, None, draw=0.0) == 4.0
    assert policy.delay(0, 120.0, draw=0.0) == 60.0


def test_given_a_bad_gateway_on_an_idempotent_call_then_it_is_retried():
    client, server, _ = sync_client(httpx.Response(502, json={"message": "Internal Server Error"}), ok())

    client.get_memory("u-1", "mem_1")

    assert len(server.requests) == 2


def test_given_a_bad_gateway_on_a_log_append_without_message_ids_then_it_is_not_retried():
    client, server, _ = sync_client(httpx.Response(504, json={"message": "Endpoint request timed out"}))

    with pytest.raises(ServerError) as raised:
        client.log("users", "u-1", "c-1", [{"role": "user", "content": "你好"}])

    assert len(server.requests) == 1
    assert raised.value.message == "Endpoint request timed out"


def test_given_a_bad_gateway_on_a_log_append_with_message_ids_then_it_is_retried():
    client, server, _ = sync_client(httpx.Response(502), ok(status=201))

    client.log("users", "u-1", "c-1", [LOGGED])

    assert len(server.requests) == 2


def test_given_throttling_on_a_call_that_is_not_idempotent_then_it_is_still_retried():
    client, server, _ = sync_client(api_error(429, headers={"Retry-After": "1"}), ok(status=201))

    client.log("users", "u-1", "c-1", [{"role": "user", "content": "你好"}])

    assert len(server.requests) == 2


@pytest.mark.parametrize(("tool", "attempts"), [("search_memories", 2), ("save_user_memory", 2), ("log_message", 1)])
def test_given_a_gateway_timeout_then_execute_tool_retries_only_tools_safe_to_repeat(tool, attempts):
    client, server, _ = sync_client(httpx.Response(504), ok())

    with contextlib.suppress(ServerError):
        client.execute_tool("u-1", {**TOOL_USE, "name": tool})

    assert len(server.requests) == attempts


@pytest.mark.parametrize(("command", "attempts"), [
    ({"command": "view", "path": "/memories"}, 2),
    ({"command": "str_replace", "path": "/memories/a.md", "old_str": "a", "new_str": "b"}, 1),
    ({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "x"}, 1),
])
def test_given_a_gateway_timeout_then_memory_tool_retries_only_views(command, attempts):
    client, server, _ = sync_client(httpx.Response(504), ok({"content": "", "is_error": False}))

    with contextlib.suppress(ServerError):
        client.memory_tool("u-1", command)

    assert len(server.requests) == attempts


def test_given_a_409_with_retry_after_then_it_is_retried_and_without_it_raised():
    client, server, sleeps = sync_client(api_error(409, "conflict", headers={"Retry-After": "1"}), ok(status=201))
    client.save("u-1", memory_type="FACT", content="x")
    assert len(server.requests) == 2 and 1.0 <= sleeps[0] <= 1.1

    client, server, _ = sync_client(api_error(409, "conflict"))
    with pytest.raises(ConflictError):
        client.save("u-1", memory_type="FACT", content="x")
    assert len(server.requests) == 1


def test_given_a_refused_connection_then_any_call_is_retried():
    refused = httpx.ConnectError("connection refused")
    client, server, sleeps = sync_client(refused, ok(status=201))

    client.log("users", "u-1", "c-1", [{"role": "user", "content": "你好"}])

    assert len(server.requests) == 2 and len(sleeps) == 1


def test_given_the_server_stays_unreachable_then_a_connection_error_is_raised():
    client, server, _ = sync_client(httpx.ConnectError("connection refused"), max_retries=2)

    with pytest.raises(MemoryConnectionError) as raised:
        client.search("u-1", "q")

    assert len(server.requests) == 3
    assert isinstance(raised.value, ConnectionError)
    assert isinstance(raised.value.__cause__, httpx.ConnectError)


def test_given_a_read_timeout_on_a_call_that_is_not_idempotent_then_it_is_not_retried():
    client, server, _ = sync_client(httpx.ReadTimeout("read timed out"))

    with pytest.raises(MemoryTimeoutError):
        client.log("users", "u-1", "c-1", [{"role": "user", "content": "你好"}])

    assert len(server.requests) == 1


def test_given_a_read_timeout_on_a_read_then_it_is_retried():
    client, server, _ = sync_client(httpx.ReadTimeout("read timed out"), ok())

    client.recall("u-1", "hi")

    assert len(server.requests) == 2


# --------------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(("status", "error_type"), [
    (400, BadRequestError), (401, AuthenticationError), (403, PermissionDeniedError), (404, NotFoundError),
    (409, ConflictError), (413, PayloadTooLargeError), (422, ValidationError), (429, RateLimitError),
    (503, ServiceUnavailableError), (500, ServerError), (502, ServerError), (418, MemoryApiError),
])
def test_given_an_error_status_then_its_typed_error_is_raised_with_the_bodys_fields(status, error_type):
    client, _, _ = sync_client(api_error(status, "the_code", "the message", {"field": "x"}), max_retries=0)

    with pytest.raises(error_type) as raised:
        client.get_memory("u-1", "mem_1")

    error = raised.value
    assert type(error) is error_type
    assert (error.status, error.code, error.message, error.details) == (status, "the_code", "the message",
                                                                         {"field": "x"})
    assert str(error) == f"{status} the_code: the message"


def test_a_503_is_also_a_server_error():
    assert issubclass(ServiceUnavailableError, ServerError)


def test_given_a_500_then_the_request_id_from_its_details_is_kept():
    client, _, _ = sync_client(api_error(500, "internal_error", "quote the request id", {"request_id": "req-42"}))

    with pytest.raises(ServerError) as raised:
        client.summarize("u-1")

    assert raised.value.request_id == "req-42"


def test_given_an_api_gateway_answer_then_its_message_and_request_id_are_kept():
    client, _, _ = sync_client(httpx.Response(401, json={"message": "Unauthorized"},
                                              headers={"apigw-requestid": "abc="}))

    with pytest.raises(AuthenticationError) as raised:
        client.tools()

    assert (raised.value.code, raised.value.message, raised.value.request_id) == ("http_401", "Unauthorized", "abc=")


def test_given_an_error_body_that_is_not_json_then_its_text_is_the_message():
    client, _, _ = sync_client(httpx.Response(413, text="<html>Request Entity Too Large</html>"))

    with pytest.raises(PayloadTooLargeError) as raised:
        client.save("u-1", memory_type="FACT", content="x")

    assert "Request Entity Too Large" in raised.value.message


def test_given_an_interrupted_batch_then_the_error_says_what_was_written():
    details = {"cause": "throttled", "written": [{"index": 0, "memory_key": "mem_1", "outcome": "created"}],
               "not_written": [1]}
    client, _, _ = sync_client(api_error(429, "batch_interrupted", "interrupted", details,
                                         headers={"Retry-After": "1"}), max_retries=0)

    with pytest.raises(RateLimitError) as raised:
        client.save_batch("u-1", [{"memory_type": "FACT", "content": "a"}, {"memory_type": "FACT", "content": "b"}])

    assert raised.value.code == "batch_interrupted"
    assert raised.value.details["not_written"] == [1]


# ---------------------------------------------------------------------------------------------- pagination


def test_given_three_pages_then_iter_memories_yields_them_all_following_the_cursors():
    client, server, _ = sync_client(*pages(["a", "b"], ["c", "d"], ["e"]))

    keys = [m["memory_key"] for m in client.iter_memories("u-1", memory_type="FACT", page_size=2)]

    assert keys == ["a", "b", "c", "d", "e"]
    assert [dict(r.url.params) for r in server.requests] == [
        {"memory_type": "FACT", "limit": "2"},
        {"memory_type": "FACT", "limit": "2", "cursor": "cur-1"},
        {"memory_type": "FACT", "limit": "2", "cursor": "cur-2"},
    ]


def test_given_a_server_that_repeats_its_cursor_then_iteration_stops():
    client, server, _ = sync_client(ok({"items": [memory("a")], "next_cursor": "same"}))

    keys = [m["memory_key"] for m in client.iter_memories("u-1")]

    assert keys == ["a", "a"]
    assert len(server.requests) == 2


def test_iteration_is_lazy():
    client, server, _ = sync_client(*pages(["a"], ["b"]))

    iterator = client.iter_memories("u-1")
    assert server.requests == []
    next(iterator)
    assert len(server.requests) == 1


def export_pages(*cursors: str | None) -> list[httpx.Response]:
    """Export pages, the i-th holding one hot-memory entry `k<i>`, each naming the next cursor."""
    return [ok({"format": "agent-memory-export", "version": 1, "hot_memory": [{"key": f"k{i}"}],
                "next_cursor": cursor}) for i, cursor in enumerate(cursors)]


def test_given_three_export_pages_then_export_file_gathers_them_following_the_cursors():
    client, server, _ = sync_client(*export_pages("c-1", "c-2", None))

    document = client.export_file("users", "u-1")

    assert document["format"] == "agent-memory-export-file" and document["version"] == 1
    assert [p["hot_memory"][0]["key"] for p in document["pages"]] == ["k0", "k1", "k2"]
    assert [r.url.params.get("cursor") for r in server.requests] == [None, "c-1", "c-2"]
    assert {r.url.path for r in server.requests} == {"/prod/v1/users/u-1/export"}


def test_given_an_export_document_then_import_file_sends_its_pages_in_order():
    answer = {"scope": {"type": "project", "id": "p-1"}, "imported": {}, "skipped": {}}
    client, server, _ = sync_client(ok(answer), ok(answer))
    pages = [{"format": "agent-memory-export", "version": 1, "log": [], "next_cursor": "x"},
             {"format": "agent-memory-export", "version": 1, "log": [], "next_cursor": None}]

    results = client.import_file("projects", "p-1", {"format": "agent-memory-export-file", "version": 1,
                                                      "pages": pages})

    assert len(results) == 2
    assert [json.loads(r.content) for r in server.requests] == pages
    assert {r.url.path for r in server.requests} == {"/prod/v1/projects/p-1/import"}


# ----------------------------------------------------------------------------------------------- lifecycle


def test_given_its_own_http_client_then_closing_closes_it_and_a_given_one_stays_open():
    with MemoryClient(BASE) as owned:
        pass
    assert owned._http.is_closed

    given = httpx.Client(transport=httpx.MockTransport(Server()))
    with MemoryClient(BASE, http_client=given):
        pass
    assert not given.is_closed


# --------------------------------------------------------------------------------------------- memory tool


def test_the_remote_memory_tool_forwards_each_command_and_returns_the_content():
    from agent_memory_client.memory_tool import RemoteMemoryTool

    client, server, _ = sync_client(ok({"content": "Here're the files...", "is_error": False}))
    tool = RemoteMemoryTool(client, "u-1")
    commands = [
        {"command": "view", "path": "/memories"},
        {"command": "view", "path": "/memories/a.md", "view_range": [1, 3]},
        {"command": "create", "path": "/memories/签证.md", "file_text": "高才通\n"},
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "a", "new_str": "b"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "x\n"},
        {"command": "delete", "path": "/memories/a.md"},
        {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"},
    ]

    results = [tool.call(command) for command in commands]

    assert results == ["Here're the files..."] * len(commands)
    assert server.bodies() == commands
    assert {r.url.raw_path for r in server.requests} == {b"/prod/v1/users/u-1/memory-tool"}
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}


def test_given_an_error_result_then_the_memory_tool_raises_the_sdks_tool_error():
    from anthropic.lib.tools import ToolError

    from agent_memory_client.memory_tool import RemoteMemoryTool

    client, _, _ = sync_client(ok({"content": "The path /memories/x.md does not exist", "is_error": True}))

    with pytest.raises(ToolError) as raised:
        RemoteMemoryTool(client, "u-1").call({"command": "view", "path": "/memories/x.md"})

    assert raised.value.content == "The path /memories/x.md does not exist"


def test_given_a_422_then_the_memory_tool_reports_it_to_the_model_and_a_503_raises():
    from anthropic.lib.tools import ToolError

    from agent_memory_client.memory_tool import RemoteMemoryTool

    client, _, _ = sync_client(api_error(422, "validation_error", "path: must start with /memories"))
    with pytest.raises(ToolError, match="must start with /memories"):
        RemoteMemoryTool(client, "u-1").call({"command": "view", "path": "/etc"})

    client, _, _ = sync_client(api_error(503, "llm_unavailable", "down"), max_retries=0)
    with pytest.raises(ServiceUnavailableError):
        RemoteMemoryTool(client, "u-1").call({"command": "view", "path": "/memories"})


def test_given_the_tool_runner_then_an_error_result_reaches_claude_as_is_error():
    """The whole loop: Claude (a mock Messages API) asks to view a file, the service answers is_error, and the
    runner's next request carries the tool_result with is_error true."""
    httpx2 = pytest.importorskip("httpx2")
    from anthropic import Anthropic

    from agent_memory_client.memory_tool import RemoteMemoryTool

    sent: list[dict[str, Any]] = []

    def messages_api(request: Any) -> Any:
        sent.append(json.loads(request.content))
        usage = {"input_tokens": 1, "output_tokens": 1}
        if len(sent) == 1:
            content = [{"type": "tool_use", "id": "toolu_9", "name": "memory",
                        "input": {"command": "view", "path": "/memories/none.md"}}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "Nothing stored yet."}], "end_turn"
        return httpx2.Response(200, json={"id": f"msg_{len(sent)}", "type": "message", "role": "assistant",
                                          "model": "claude-test", "content": content, "stop_reason": stop,
                                          "stop_sequence": None, "usage": usage})

    anthropic = Anthropic(api_key="test", base_url="http://anthropic.test",
                          http_client=httpx2.Client(transport=httpx2.MockTransport(messages_api)))
    client, server, _ = sync_client(ok({"content": "The path /memories/none.md does not exist", "is_error": True}))
    runner = anthropic.beta.messages.tool_runner(
        model="claude-test", max_tokens=100, tools=[RemoteMemoryTool(client, "u-1")],
        messages=[{"role": "user", "content": "What do you remember?"}])

    final = runner.until_done()

    assert final.content[0].text == "Nothing stored yet."
    assert server.bodies() == [{"command": "view", "path": "/memories/none.md"}]
    [result] = sent[1]["messages"][-1]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_9" and result["is_error"] is True
    assert "does not exist" in json.dumps(result["content"], ensure_ascii=False)


def test_given_a_batch_over_the_embedding_budget_then_it_is_sent_in_consecutive_parts_that_fit():
    memories = [{"memory_type": "FACT", "content": f"fact {i}"} for i in range(5)]
    client, server, _ = sync_client(budget_refusal([400, 400, 300, 500, 100], limit=800),
                                    batch_answer(["k0", "k1"]), batch_answer(["k2", "k3"]), batch_answer(["k4"]))

    answer = client.save_batch("u-1", memories)

    sent = [[m["content"] for m in json.loads(r.content)["memories"]] for r in server.requests]
    assert sent == [[f"fact {i}" for i in range(5)], ["fact 0", "fact 1"], ["fact 2", "fact 3"], ["fact 4"]]
    assert answer["saved_count"] == 5 and answer["memory_keys"] == ["k0", "k1", "k2", "k3", "k4"]
    assert [r["index"] for r in answer["results"]] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("refusal", [budget_refusal([900, 100], limit=800),  # one item alone is over it
                                     api_error(413, "payload_too_large", "body is 300000 bytes",
                                               [{"field": "body"}])])
def test_given_a_413_no_split_can_help_then_it_is_raised_and_nothing_more_is_sent(refusal):
    client, server, _ = sync_client(refusal)

    with pytest.raises(PayloadTooLargeError):
        client.save_batch("u-1", [{"memory_type": "FACT", "content": "a"}, {"memory_type": "FACT", "content": "b"}])
    assert len(server.requests) == 1
