"""The agent loop of docs/agents.md, run verbatim: Claude (a recorded conversation through the real SDK) calls our
tools, and the Python client runs each call through POST /tools/execute on the real handlers."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import agent_memory_client
import anthropic
import httpx
import httpx2

from tests.fakes.api_transport import api_transport

AGENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def agent_loop_code() -> str:
    block = AGENTS_DOC.read_text(encoding="utf-8").split("<!-- agent-loop:begin -->", 1)[1]
    return block.split("<!-- agent-loop:end -->", 1)[0].split("```python", 1)[1].rsplit("```", 1)[0]


def claude_turn(content: list[dict[str, Any]], stop_reason: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-haiku-4-5-20251001",
        "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 900, "output_tokens": 80}})


class RecordedClaude:
    """Claude's side: save, then search, then answer from what the search returned."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        turn = len(self.requests)
        if turn == 1:
            return claude_turn([{"type": "tool_use", "id": "toolu_save", "name": "save_user_memory", "input": {
                "memory_type": "FACT", "content": "User is 32 and works in Hangzhou as a frontend developer"}}],
                "tool_use")
        if turn == 2:
            return claude_turn([{"type": "tool_use", "id": "toolu_search", "name": "search_memories",
                                 "input": {"query": "Hangzhou frontend developer", "search_mode": "keyword"}}],
                               "tool_use")
        found = json.loads(self.requests[-1]["messages"][-1]["content"][0]["content"])["results"]
        return claude_turn([{"type": "text", "text": f"You told me: {found[0]['content_preview']}"}], "end_turn")


def test_the_documented_agent_loop_saves_and_finds_through_the_executor(api, monkeypatch):
    real_client, real_anthropic = agent_memory_client.MemoryClient, anthropic.Anthropic
    claude = RecordedClaude()
    monkeypatch.setattr(agent_memory_client, "MemoryClient", lambda url, **kw: real_client(
        url, **kw, http_client=httpx.Client(transport=api_transport(api))))
    monkeypatch.setattr(anthropic, "Anthropic", lambda: real_anthropic(
        api_key="sk-ant-test", http_client=httpx2.Client(transport=httpx2.MockTransport(claude))))

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(agent_loop_code(), {"__name__": "readme_agent_loop"})

    # The handlers run in this process and print their metrics (EMF) lines first.
    answer = printed.getvalue().strip().splitlines()[-1]
    assert answer == "You told me: User is 32 and works in Hangzhou as a frontend developer"
    first = claude.requests[0]
    assert [t["name"] for t in first["tools"]] == ["search_memories", "get_memory_detail", "save_user_memory",
                                                   "get_user_context"]
    results = claude.requests[1]["messages"][-1]["content"]
    assert results[0]["type"] == "tool_result" and results[0]["tool_use_id"] == "toolu_save"
    assert "is_error" not in results[0]
    listed = api.call("GET", "/v1/users/u-1001/memories", tenant="demo").body["items"]
    assert [m["content"] for m in listed] == ["User is 32 and works in Hangzhou as a frontend developer"]
