"""Anthropic Messages arrays: their shape, validity checking and turns.

Pure domain code: no I/O, no SDK. A Messages array is a list of ``{"role": "user"|"assistant",
"content": str | list[block]}`` dicts. ``validate_messages`` names every problem of an input; a valid
array satisfies:

* the first message has role ``user`` and roles alternate strictly;
* every ``tool_use`` in an assistant message has its ``tool_result`` in the very next (user) message,
  and every ``tool_result`` answers a ``tool_use`` of the message right before it.

A *turn* starts at a user message that carries human input only (no ``tool_result`` blocks), so a
turn boundary never separates a ``tool_use`` from its ``tool_result``. The compaction steps that keep
an array valid while shrinking it are in ``domain.compaction``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

from agent_memory.domain.models import is_cjk_text

Message = dict[str, Any]

ROLES = ("user", "assistant")


# --------------------------------------------------------------------------------------------- #
# Small accessors
# --------------------------------------------------------------------------------------------- #


def _blocks(message: Message) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def blocks_of_type(message: Message, block_type: str) -> list[dict[str, Any]]:
    """The content blocks of ``message`` whose ``type`` is ``block_type`` (none for string content)."""
    return [b for b in _blocks(message) if isinstance(b, dict) and b.get("type") == block_type]


def _tool_use_ids(message: Message) -> list[str]:
    return [str(b.get("id")) for b in blocks_of_type(message, "tool_use")]


def _tool_result_ids(message: Message) -> list[str]:
    return [str(b.get("tool_use_id")) for b in blocks_of_type(message, "tool_result")]


def human_text(message: Message) -> str:
    """The plain text of a message: string content and text blocks (not tool inputs or results)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in blocks_of_type(message, "text"))


def _tool_result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def is_cjk_conversation(messages: Sequence[Message]) -> bool:
    """The conversation's language, from its human and assistant text (tool results only as a fallback)."""
    text = "\n".join(human_text(m) for m in messages if isinstance(m, dict))
    if not text.strip():
        text = "\n".join(
            _tool_result_text(b.get("content")) for m in messages if isinstance(m, dict)
            for b in blocks_of_type(m, "tool_result")
        )
    return is_cjk_text(text)


# --------------------------------------------------------------------------------------------- #
# Validation
# --------------------------------------------------------------------------------------------- #


def _text_block(where: str, block: dict[str, Any], role: str, may_be_empty: bool) -> list[str]:
    text = block.get("text")
    if not isinstance(text, str):
        return [f"{where}: text block needs a string 'text'"]
    if not text.strip() and not may_be_empty:
        return [f"{where}: text block must contain non-whitespace text"]
    return []


def _media_block(where: str, block: dict[str, Any], role: str, may_be_empty: bool) -> list[str]:
    if not isinstance(block.get("source"), dict):
        return [f"{where}: {block['type']} block needs a 'source' object"]
    return []


def _tool_use_block(where: str, block: dict[str, Any], role: str, may_be_empty: bool) -> list[str]:
    problems = [] if role == "assistant" else [f"{where}: tool_use blocks may only appear in assistant messages"]
    problems += [f"{where}: tool_use block needs a non-empty string '{key}'"
                 for key in ("id", "name") if not isinstance(block.get(key), str) or not block[key]]
    if not isinstance(block.get("input"), dict):
        problems.append(f"{where}: tool_use block needs an 'input' object")
    return problems


def _tool_result_block(where: str, block: dict[str, Any], role: str, may_be_empty: bool) -> list[str]:
    problems = [] if role == "user" else [f"{where}: tool_result blocks may only appear in user messages"]
    if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
        problems.append(f"{where}: tool_result block needs a non-empty string 'tool_use_id'")
    if "is_error" in block and not isinstance(block["is_error"], bool):
        problems.append(f"{where}: tool_result 'is_error' must be a boolean")
    content = block.get("content")
    if isinstance(content, list):
        for k, inner in enumerate(content):
            problems += _validate_block(f"{where}.content[{k}]", inner, "tool_result", may_be_empty=True)
    elif content is not None and not isinstance(content, str):
        problems.append(f"{where}: tool_result 'content' must be a string or a list of content blocks")
    return problems


def _thinking_block(where: str, block: dict[str, Any], role: str, may_be_empty: bool) -> list[str]:
    if role != "assistant":
        return [f"{where}: {block['type']} blocks may only appear in assistant messages"]
    return []


# Checks per block type; other types (server tools, search results, ...) pass through unchecked.
_BLOCK_CHECKS = {"text": _text_block, "image": _media_block, "document": _media_block,
                 "tool_use": _tool_use_block, "tool_result": _tool_result_block,
                 "thinking": _thinking_block, "redacted_thinking": _thinking_block}


def _validate_block(where: str, block: object, role: str, may_be_empty: bool) -> list[str]:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return [f"{where}: a content block must be an object with a string 'type'"]
    check = _BLOCK_CHECKS.get(block["type"])
    return check(where, block, role, may_be_empty) if check else []


def _message_problems(i: int, message: object, is_last: bool) -> tuple[list[str], str | None]:
    """One message's own problems, and its role when that role is valid."""
    if not isinstance(message, dict):
        return [f"messages[{i}]: must be an object with 'role' and 'content'"], None
    role = message.get("role")
    problems = [] if role in ROLES else [f"messages[{i}]: role must be 'user' or 'assistant', got {role!r}"]
    may_be_empty = is_last and role == "assistant"
    content = message.get("content")
    if isinstance(content, str):
        if not content.strip() and not may_be_empty:
            problems.append(f"messages[{i}]: content must not be empty")
    elif isinstance(content, list):
        if not content and not may_be_empty:
            problems.append(f"messages[{i}]: content must not be an empty list")
        for j, block in enumerate(content):
            problems += _validate_block(f"messages[{i}].content[{j}]", block, str(role), may_be_empty)
    else:
        problems.append(f"messages[{i}]: content must be a string or a list of content blocks")
    return problems, role if role in ROLES else None


def _alternation_problems(roles: list[str | None]) -> list[str]:
    problems = []
    if roles[0] is not None and roles[0] != "user":
        problems.append("messages[0]: the first message must have role 'user'")
    problems += [f"messages[{i}]: role '{roles[i]}' repeats the previous message's role; roles must alternate"
                 for i in range(1, len(roles)) if roles[i] is not None and roles[i] == roles[i - 1]]
    return problems


def _with_role(message: object, role: str) -> TypeGuard[Message]:
    return isinstance(message, dict) and message.get("role") == role


def _tool_use_problems(i: int, messages: list[Any], seen: set[str]) -> list[str]:
    """An assistant message's tool_use ids: used once, each answered in the next message."""
    following = messages[i + 1] if i + 1 < len(messages) else None
    answered = set(_tool_result_ids(following)) if _with_role(following, "user") else set()
    problems = []
    for tool_id in _tool_use_ids(messages[i]):
        if tool_id in seen:
            problems.append(f"messages[{i}]: tool_use id {tool_id} is used more than once")
        seen.add(tool_id)
        if tool_id not in answered:
            problems.append(f"messages[{i}]: tool_use {tool_id} has no tool_result in the next message")
    return problems


def _tool_result_problems(i: int, messages: list[Any]) -> list[str]:
    """A user message's tool_results: each answers the previous message, once, before any other content."""
    previous = messages[i - 1] if i > 0 else None
    asked = set(_tool_use_ids(previous)) if _with_role(previous, "assistant") else set()
    problems, seen = [], set()
    for tool_id in _tool_result_ids(messages[i]):
        if tool_id not in asked:
            problems.append(f"messages[{i}]: tool_result {tool_id} does not match a tool_use in the previous message")
        if tool_id in seen:
            problems.append(f"messages[{i}]: tool_result {tool_id} appears more than once")
        seen.add(tool_id)
    kinds = [isinstance(b, dict) and b.get("type") == "tool_result" for b in _blocks(messages[i])]
    if any(later and not all(kinds[:k]) for k, later in enumerate(kinds)):
        problems.append(f"messages[{i}]: tool_result blocks must come before any other content")
    return problems


def validate_messages(messages: object) -> list[str]:
    """Human-readable problems of a Messages array, each naming its message index; [] means valid.

    A final assistant message (a prefill) is allowed and may be empty; every other message needs
    non-empty content.
    """
    if not isinstance(messages, list):
        return ["messages: must be a list of messages"]
    if not messages:
        return ["messages: must contain at least one message"]
    problems: list[str] = []
    roles: list[str | None] = []
    for i, message in enumerate(messages):
        found, role = _message_problems(i, message, i == len(messages) - 1)
        problems += found
        roles.append(role)
    problems += _alternation_problems(roles)
    seen_tool_use: set[str] = set()
    for i, message in enumerate(messages):
        if _with_role(message, "assistant"):
            problems += _tool_use_problems(i, messages, seen_tool_use)
        elif _with_role(message, "user"):
            problems += _tool_result_problems(i, messages)
    return problems


def is_valid(messages: object) -> bool:
    return not validate_messages(messages)


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Indexes of the user messages that start a turn: human input only, no tool_result blocks."""
    return [
        i for i, m in enumerate(messages)
        if m.get("role") == "user" and not blocks_of_type(m, "tool_result")
    ]
