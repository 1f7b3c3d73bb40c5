"""The current user message in a Messages array, and the user's texts it is compared with."""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.domain.inject.conversation import Message, turn_starts


def user_texts(messages: Sequence[Message]) -> list[str]:
    """The text the user wrote, in order: string contents and text blocks of user messages (tool
    results and images are not the user's text)."""
    texts: list[str] = []
    for message in messages:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts


def with_current_message(messages: list[Message], current: str) -> list[Message]:
    """The current user message ends the array: already there (a text of the last human turn, as an
    agent loop re-sends it), appended as a new user turn, or, when the history ends with a user turn
    of tool results, added to it as a text block. The input is not mutated."""
    current = current.strip()
    if not current:
        return messages
    starts = turn_starts(messages)
    if any(current == t.strip() for t in user_texts(messages[starts[-1]:] if starts else [])):
        return messages
    if messages and messages[-1]["role"] == "user":
        last = messages[-1]
        content = last["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        return [*messages[:-1], {**last, "content": [*blocks, {"type": "text", "text": current}]}]
    return [*messages, {"role": "user", "content": current}]
