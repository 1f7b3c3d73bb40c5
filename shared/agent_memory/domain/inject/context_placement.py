"""Where the injected blocks go: a leading user/assistant pair before the history, or `system` content
blocks after the caller's own system prompt, with a prompt-cache breakpoint when there is room."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from agent_memory.domain.inject.context import FRAME, ContextBlock, Locale, context_message
from agent_memory.domain.inject.conversation import Message

Placement = Literal["pair", "system"]
SystemPrompt = str | list[dict[str, Any]] | None
# Anthropic allows four cache breakpoints per request; we add one only when the caller left room.
MAX_CACHE_BREAKPOINTS = 4


def place(placement: Placement, caller_system: SystemPrompt, messages: list[Message],
          blocks: Sequence[ContextBlock], locale: Locale) -> tuple[list[Message], list[dict[str, Any]] | None]:
    """(messages, system) to send. The pair placement leaves the caller's system prompt as it came
    (echoed back, so `system` in the result is always what to send)."""
    if placement == "system":
        return messages, system_blocks(caller_system, blocks, locale)
    system = system_blocks(caller_system, [], locale) if caller_system is not None else None
    text = context_message(list(blocks), locale)
    if not text:
        return messages, system
    return [{"role": "user", "content": text}, {"role": "assistant", "content": FRAME[locale]["ack"]},
            *messages], system


def system_blocks(caller_system: SystemPrompt, blocks: Sequence[ContextBlock], locale: Locale) -> list[dict[str, Any]]:
    """The caller's system prompt first, then the context most-stable-first: blocks that live longer
    (device, experiences, memories) before real-time ones, with one cache breakpoint after the stable part,
    so the cached prefix survives turns in which only the real-time blocks change."""
    system: list[dict[str, Any]] = (
        [{"type": "text", "text": caller_system}] if isinstance(caller_system, str)
        else [dict(b) for b in caller_system or []]
    )
    if not blocks:
        return system
    ordered = sorted(blocks, key=lambda b: (-b.stability, b.priority))
    stable = [b for b in ordered if b.cache_ttl_seconds != 0]
    live = [b for b in ordered if b.cache_ttl_seconds == 0]
    header = FRAME[locale]["system_header"]
    breakpoints_used = sum(1 for b in system if "cache_control" in b)
    if stable:
        part: dict[str, Any] = {"type": "text", "text": "\n\n".join([header, *(b.content for b in stable)])}
        if breakpoints_used < MAX_CACHE_BREAKPOINTS:
            part["cache_control"] = {"type": "ephemeral"}
        system.append(part)
    if live:
        texts = [b.content for b in live]
        system.append({"type": "text", "text": "\n\n".join(texts if stable else [header, *texts])})
    return system
