"""Inject requests refused: an invalid messages array names the message, and there must be a user turn to answer."""

from __future__ import annotations

import pytest

from agent_memory.api.inject import inject_context
from agent_memory.errors import InvalidInput
from tests.fakes.inject import build, request, user


def test_an_invalid_messages_array_is_rejected_naming_the_message():
    with pytest.raises(InvalidInput) as raised:
        inject_context(build().inject, user("bad"), request(messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_9", "name": "x", "input": {}}]},
            {"role": "user", "content": "no tool result here"},
        ]))
    assert raised.value.details[0]["field"] == "messages"
    assert "toolu_9" in raised.value.details[0]["message"]


def test_the_request_needs_a_user_turn_to_answer():
    with pytest.raises(ValueError, match="current_user_message"):
        request(messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
