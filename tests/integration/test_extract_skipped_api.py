"""Extract over HTTP through the real handler: the user's sentences no memory came from, and the note the offline
rules add; with Claude (the real SDK over a scripted transport) the same sentences rule and no note."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from agent_memory.bootstrap import get_services
from agent_memory.settings import get_settings
from tests.fakes.claude import Recorder

MESSAGE = "你好！我对花生过敏。我朋友对猫过敏。\nPlease always answer me in German. How are you today?"


def test_given_the_offline_rules_when_a_turn_is_extracted_then_the_sentences_they_read_nothing_from_are_listed(api):
    said = api.call("POST", "/v1/users/u-skipped/memories/extract",
                    {"userMessage": "你好！我对花生过敏。我朋友对猫过敏。\nHow are you today?"})

    assert said.status == 200, said.body
    assert said.body["extracted_info"] == {"allergy": "花生"}
    assert said.body["skipped_sentences"] == ["你好！", "我朋友对猫过敏。", "How are you today?"]
    assert "LLM_PROVIDER" in said.body["note"]


def claude_answer(*tool_inputs: dict[str, Any]) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5", "stop_sequence": None,
        "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "save_user_memory", "input": tool_input}
                    for i, tool_input in enumerate(tool_inputs)],
        "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}})


@pytest.fixture
def claude(api: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    """LLM_PROVIDER=anthropic, the extractor's SDK client talking to a scripted transport."""
    import agent_memory.adapters.llm as llm

    recorder = Recorder([claude_answer(
        {"memoryType": "FACT", "content": "用户对花生过敏", "field": "allergy", "value": "花生"},
        {"memoryType": "PREFERENCE", "content": "Wants answers in German", "field": "replyLanguage"})])
    build = llm.build_extractor
    monkeypatch.setattr(llm, "build_extractor", lambda settings, **options: build(
        settings, **options, http_client=httpx2.Client(transport=httpx2.MockTransport(recorder))))
    monkeypatch.setenv("LLM_PROVIDER", "anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    get_settings.cache_clear()
    get_services.cache_clear()
    yield recorder
    get_settings.cache_clear()
    get_services.cache_clear()


def test_given_claude_when_a_turn_is_extracted_then_a_sentence_none_of_its_memories_came_from_is_listed(api, claude):
    said = api.call("POST", "/v1/users/u-skipped-llm/memories/extract", {"userMessage": MESSAGE})

    assert said.status == 200, said.body
    assert "花生" in json.loads(claude.requests[0].content)["messages"][0]["content"]
    assert said.body["saved_count"] == 2
    # 花生 is in one sentence; the German preference has no value, its words are in the next one
    assert said.body["skipped_sentences"] == ["你好！", "我朋友对猫过敏。", "How are you today?"]
    assert said.body["note"] is None
