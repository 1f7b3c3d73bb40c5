"""Builders of Messages arrays for the conversation, compaction and summary tests."""

from __future__ import annotations

import json
from typing import Any

from agent_memory.domain.conversation import Message


def count_tokens(messages: list[Message]) -> int:
    return sum(len(json.dumps(m, ensure_ascii=False)) for m in messages) // 3


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str) -> Message:
    return {"role": "assistant", "content": text}


def tool_call(*ids: str, text: str | None = None) -> Message:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": "lookup_visa", "input": {"q": i}} for i in ids]
    return {"role": "assistant", "content": blocks}


def tool_results(*pairs: tuple[str, Any]) -> Message:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": c} for i, c in pairs]}


def chat(turns: int, prefix: str = "q") -> list[Message]:
    """``turns`` finished question/answer turns, then the current question."""
    messages: list[Message] = []
    for n in range(turns):
        messages += [user(f"{prefix}{n}: what is the processing time for case {n}?"), assistant(f"answer {n}.")]
    return [*messages, user(f"{prefix}-current: and what about my spouse?")]

