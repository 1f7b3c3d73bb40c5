"""Every Python example of the client's README (clients/python/README.md), run as written against the real handlers
in this process: the client's requests go through an httpx MockTransport to the API, Claude's through the real SDK
to a recorded conversation."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import agent_memory_client
import anthropic
import httpx
import httpx2
import pytest

from tests.fakes.api_transport import api_transport

README = Path(__file__).resolve().parents[2] / "clients" / "python" / "README.md"
# An example naming a model the SDK says is deprecated fails.
pytestmark = pytest.mark.filterwarnings("error:The model:DeprecationWarning")


def python_examples() -> list[tuple[str, str]]:
    """(the section's heading, the code) of every ```python block, in order."""
    examples, section = [], ""
    for part in re.split(r"^(## .+|```python\n(?:.*\n)*?```)$", README.read_text(encoding="utf-8"), flags=re.M):
        if part.startswith("## "):
            section = part[3:]
        elif part.startswith("```python"):
            examples.append((section, part.removeprefix("```python\n").removesuffix("```")))
    return examples


EXAMPLES = python_examples()


def claude_message(content: list[dict[str, Any]], stop_reason: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", "content": content,
        "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 20}})


class ClaudeUsingTheMemoryTool:
    """Claude's side of the memory-tool example: a `create` command, then the answer."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        if len(self.requests) == 1:
            return claude_message([{"type": "tool_use", "id": "toolu_1", "name": "memory", "input": {
                "command": "create", "path": "/memories/preferences.md", "file_text": "Prefers email.\n"}}],
                "tool_use")
        return claude_message([{"type": "text", "text": "Noted: email it is."}], "end_turn")


@pytest.fixture
def readme_world(api: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ClaudeUsingTheMemoryTool]:
    """The README's `MemoryClient(...)`, `AsyncMemoryClient(...)` and `Anthropic()` reach in-process fakes."""
    sync_client, async_client = agent_memory_client.MemoryClient, agent_memory_client.AsyncMemoryClient
    real_anthropic, claude = anthropic.Anthropic, ClaudeUsingTheMemoryTool()
    monkeypatch.setattr(agent_memory_client, "MemoryClient", lambda url, **kw: sync_client(
        url, **kw, http_client=httpx.Client(transport=api_transport(api))))
    monkeypatch.setattr(agent_memory_client, "AsyncMemoryClient", lambda url, **kw: async_client(
        url, **kw, http_client=httpx.AsyncClient(transport=api_transport(api))))
    monkeypatch.setattr(anthropic, "Anthropic", lambda: real_anthropic(
        api_key="sk-ant-test", http_client=httpx2.Client(transport=httpx2.MockTransport(claude))))
    return api, claude


def run_example(code: str) -> list[str]:
    """Runs the example as a module would (top-level `async with` included) and answers the lines it printed."""
    compiled = compile(code, str(README), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = eval(compiled, {"__name__": "client_readme"})
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    # The handlers run in this process and print their metrics (EMF) lines too.
    return [line for line in printed.getvalue().splitlines() if not line.startswith('{"_aws"')]


def test_the_readme_has_an_example_per_section_that_shows_code():
    assert [section for section, _ in EXAMPLES] == ["Sync", "Async", "Errors", "Export and import",
                                                    "Anthropic memory tool"]


@pytest.mark.parametrize("section, code", EXAMPLES, ids=[section for section, _ in EXAMPLES])
def test_every_python_example_of_the_readme_runs_against_the_api(readme_world, section, code):
    run_example(code)


def test_the_sync_example_saves_finds_and_lists_the_memory(readme_world):
    api, _ = readme_world

    printed = run_example(dict(EXAMPLES)["Sync"])

    outcome, key = printed[0].split()
    assert outcome == "created" and key.startswith("mem_")
    assert any(line.endswith("用户32岁，在杭州做前端开发") for line in printed[1:])
    assert f"{key} 用户32岁，在杭州做前端开发" in printed
    hot = api.call("GET", "/v1/projects/p-7/hot-memory", tenant="t1").body
    assert "高才通" in json.dumps(hot, ensure_ascii=False)


def test_the_errors_example_shows_what_the_api_answers(readme_world):
    printed = run_example(dict(EXAMPLES)["Errors"])

    assert printed == ["404 not_found", "422 ['memory_key']"]


def test_the_export_example_moves_the_user_to_another_tenant(readme_world):
    api, _ = readme_world

    printed = run_example(dict(EXAMPLES)["Export and import"])

    assert printed == ["1 0"]
    moved = api.call("GET", "/v1/users/u-1001/memories", tenant="t2").body["items"]
    assert [m["content"] for m in moved] == ["Lives in Leeds"]


def test_the_memory_tool_example_keeps_the_file_in_the_service(readme_world):
    api, claude = readme_world

    run_example(dict(EXAMPLES)["Anthropic memory tool"])

    [result] = claude.requests[1]["messages"][-1]["content"]
    assert result["type"] == "tool_result" and "is_error" not in result
    viewed = api.call("POST", "/v1/users/u-1001/memory-tool", {"command": "view", "path": "/memories/preferences.md"},
                      tenant="t1").body
    assert "Prefers email." in viewed["content"]
