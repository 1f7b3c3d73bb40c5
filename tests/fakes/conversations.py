"""Builders of Messages arrays for the conversation, compaction, summary and inject tests, and a hypothesis
strategy of valid ones."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from agent_memory.domain.inject.conversation import Message


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


# ---- any valid conversation, for property tests --------------------------------------------------

_TEXTS = st.sampled_from([
    "ok",
    "I live in Sha Tin and earn 48000 HKD a month.",
    "我在香港大学读硕士，明年毕业。",
    "Tell me about QMAS.",
    "好的",
])


@st.composite
def _text(draw: st.DrawFn) -> str:
    base = draw(_TEXTS)
    return base * draw(st.sampled_from([1, 1, 1, 30, 120]))


@st.composite
def _content(draw: st.DrawFn) -> str | list[dict[str, Any]]:
    text = draw(_text())
    if draw(st.booleans()):
        return text
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if draw(st.integers(0, 4)) == 0:
        blocks.append({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD" * 50}})
    return blocks


@st.composite
def conversations_with_prefix(draw: st.DrawFn) -> tuple[list[Message], int]:
    """A valid Messages array of 1 to 16 turns (text, images, tool rounds, long texts), sometimes after a
    two-message context prefix; with the prefix's length."""
    ids = iter(range(10_000))
    messages: list[Message] = []
    prefix = 0
    if draw(st.booleans()):
        messages += [user("[context] " + draw(_text())), assistant("Understood.")]
        prefix = 2
    turns = draw(st.integers(1, 16))
    for n in range(turns):
        last_turn = n == turns - 1
        messages.append({"role": "user", "content": draw(_content())})
        rounds = draw(st.integers(0, 2))
        if last_turn and rounds == 0:
            break
        for r in range(rounds):
            tool_ids = [f"toolu_{next(ids)}" for _ in range(draw(st.integers(1, 3)))]
            blocks: list[dict[str, Any]] = []
            if draw(st.booleans()):
                blocks.append({"type": "text", "text": draw(_text())})
            blocks += [{"type": "tool_use", "id": t, "name": "search", "input": {"q": draw(_TEXTS)}} for t in tool_ids]
            messages.append({"role": "assistant", "content": blocks})
            results: list[dict[str, Any]] = []
            for t in tool_ids:
                result: dict[str, Any] = {"type": "tool_result", "tool_use_id": t,
                                          "content": draw(_content())}
                if draw(st.booleans()):
                    result["is_error"] = draw(st.booleans())
                results.append(result)
            if draw(st.integers(0, 3)) == 0:
                results.append({"type": "text", "text": draw(_text())})
            messages.append({"role": "user", "content": results})
            if last_turn and r == rounds - 1:
                break
        else:
            if not last_turn:
                messages.append({"role": "assistant", "content": draw(_content())})
    return messages, prefix
