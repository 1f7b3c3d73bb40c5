"""Auto-compaction of an Anthropic Messages array: the three steps of context injection and their driver.

Pure domain code: no I/O, no SDK. The steps assume a valid input (see ``domain.conversation``) and
always return a valid array:

* the last message (the current user message) is never modified, nor are the first
  ``protected_prefix`` messages (the injected context pair);
* no step separates a ``tool_use`` from its ``tool_result``;
* the input is never mutated: every step returns a deep copy.

``auto_compact`` runs when the history is over ``threshold * budget`` tokens and re-checks after each step:

1. ``compact_tool_results``: long tool results shrink to a preview and their original length;
2. ``summarize_early_turns``: everything before the last ``keep_turns`` turns becomes one summary
   user message and a short assistant acknowledgement;
3. ``truncate_long_messages``: long texts are cut with a marker.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_memory.domain.inject.conversation import Message, blocks_of_type, is_cjk_conversation, turn_starts
from agent_memory.domain.inject.summary import extractive_summary, summary_messages

Summarizer = Callable[[list[Message]], str]
TokenCounter = Callable[[list[Message]], int]

STEP_TOOL_RESULTS = "tool_results"
STEP_EARLY_TURNS = "early_turns"
STEP_TRUNCATE = "truncate"


def _check_prefix(protected_prefix: int) -> None:
    if protected_prefix < 0:
        raise ValueError("protected_prefix must be >= 0")


def _editable(messages: Sequence[Message], protected_prefix: int) -> range:
    """Indexes a step may change: after the protected prefix, before the last (current) message."""
    return range(protected_prefix, len(messages) - 1)


# --------------------------------------------------------------------------------------------- #
# Step 1: compact tool results
# --------------------------------------------------------------------------------------------- #


def compaction_marker(preview: str, original_length: int, *, cjk: bool) -> str:
    if cjk:
        return f"[已压缩] {preview}... (原始长度: {original_length}字符)"
    return f"[compacted] {preview}... (original length: {original_length} chars)"


def _measure_tool_result(content: Any) -> tuple[int, str]:
    """(length, readable text) of a tool_result's content; list content is measured as its JSON."""
    if isinstance(content, str):
        return len(content), content
    if isinstance(content, list):
        readable = "\n".join(
            str(b.get("text", "")) if b.get("type") == "text" else f"[{b.get('type')}]"
            for b in content if isinstance(b, dict)
        )
        return len(json.dumps(content, ensure_ascii=False)), readable
    return 0, ""


def compact_tool_results(
    messages: Sequence[Message],
    *,
    max_chars: int = 500,
    keep_chars: int = 200,
    protected_prefix: int = 0,
    cjk: bool | None = None,
) -> list[Message]:
    """Replace every tool_result whose content is over ``max_chars`` by a ``keep_chars`` preview.

    List content is measured as its JSON (images count) and previewed from its text blocks (other
    blocks show as ``[image]`` etc.); the new content is a string. ``tool_use_id``, ``is_error`` and
    any other keys of the block are kept. ``cjk`` picks the marker language (default: detected).
    """
    _check_prefix(protected_prefix)
    out = copy.deepcopy(list(messages))
    use_cjk = is_cjk_conversation(messages) if cjk is None else cjk
    for i in _editable(out, protected_prefix):
        for block in blocks_of_type(out[i], "tool_result"):
            length, readable = _measure_tool_result(block.get("content"))
            if length > max_chars:
                block["content"] = compaction_marker(readable[:keep_chars], length, cjk=use_cjk)
    return out


# --------------------------------------------------------------------------------------------- #
# Step 2: summarize early turns
# --------------------------------------------------------------------------------------------- #


def early_turns_span(messages: Sequence[Message], *, keep_turns: int = 10, protected_prefix: int = 0) -> range:
    """The messages ``summarize_early_turns`` would replace (empty when there is nothing to summarize).

    It starts at the first turn start at or after the protected prefix and ends where the last
    ``keep_turns`` turns begin, so both ends are turn starts and no tool_use/tool_result pair is split.
    """
    if keep_turns < 1:
        raise ValueError("keep_turns must be >= 1 (the current turn is always kept)")
    _check_prefix(protected_prefix)
    starts = [i for i in turn_starts(messages) if i >= protected_prefix]
    if len(starts) <= keep_turns:
        return range(0)
    return range(starts[0], starts[-keep_turns])


def summarize_early_turns(
    messages: Sequence[Message],
    summarize: Summarizer,
    *,
    keep_turns: int = 10,
    protected_prefix: int = 0,
    cjk: bool | None = None,
) -> list[Message]:
    """Replace the turns before the last ``keep_turns`` by a summary pair; ``summarize`` sees only them.

    ``summarize`` is called (with a copy of the early messages) only when there is something to
    summarize; its exceptions propagate.
    """
    span = early_turns_span(messages, keep_turns=keep_turns, protected_prefix=protected_prefix)
    out = copy.deepcopy(list(messages))
    if not span:
        return out
    use_cjk = is_cjk_conversation(messages) if cjk is None else cjk
    summary = summarize(out[span.start:span.stop])
    return out[:span.start] + summary_messages(summary.strip(), cjk=use_cjk) + out[span.stop:]


# --------------------------------------------------------------------------------------------- #
# Step 3: truncate long messages
# --------------------------------------------------------------------------------------------- #


def truncation_marker(original_length: int, *, cjk: bool) -> str:
    if cjk:
        return f"…[截断，原始长度 {original_length} 字符]"
    return f"…[truncated, original length {original_length} chars]"


def _truncate(text: str, max_chars: int, cjk: bool) -> str:
    """``text`` cut so that, marker included, it is at most ``max_chars`` long (so truncating is idempotent)."""
    if len(text) <= max_chars:
        return text
    marker = truncation_marker(len(text), cjk=cjk)
    return text[: max(max_chars - len(marker), 0)] + marker


def _truncate_blocks(blocks: list[Any], max_chars: int, cjk: bool) -> None:
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            block["text"] = _truncate(block["text"], max_chars, cjk)
        elif block.get("type") == "tool_result":
            content = block.get("content")
            if isinstance(content, str):
                block["content"] = _truncate(content, max_chars, cjk)
            elif isinstance(content, list):
                _truncate_blocks(content, max_chars, cjk)


def truncate_long_messages(
    messages: Sequence[Message],
    *,
    max_chars: int = 2000,
    protected_prefix: int = 0,
    cjk: bool | None = None,
) -> list[Message]:
    """Cut string contents, text blocks and tool_result texts over ``max_chars`` to ``max_chars``.

    The marker (e.g. ``…[truncated, original length 5123 chars]``) is counted in the ``max_chars``.
    Thinking blocks, images, documents and tool_use inputs are left alone.
    """
    _check_prefix(protected_prefix)
    out = copy.deepcopy(list(messages))
    use_cjk = is_cjk_conversation(messages) if cjk is None else cjk
    for i in _editable(out, protected_prefix):
        content = out[i].get("content")
        if isinstance(content, str):
            out[i]["content"] = _truncate(content, max_chars, use_cjk)
        elif isinstance(content, list):
            _truncate_blocks(content, max_chars, use_cjk)
    return out


# --------------------------------------------------------------------------------------------- #
# Auto-compaction
# --------------------------------------------------------------------------------------------- #


@dataclass(frozen=True)
class CompactionResult:
    """``steps`` names the steps that were applied (changed the messages and saved tokens), in order."""

    messages: list[Message]
    steps: tuple[str, ...]
    tokens_before: int
    tokens_after: int


def auto_compact(
    messages: Sequence[Message],
    *,
    budget_tokens: int,
    count_tokens: TokenCounter,
    summarize: Summarizer = extractive_summary,
    threshold: float = 0.8,
    keep_turns: int = 10,
    protected_prefix: int = 0,
    cjk: bool | None = None,
) -> CompactionResult:
    """Compact a valid Messages array when it is over ``threshold * budget_tokens`` tokens.

    Steps run in order (tool results, early turns, truncation); after each one the tokens are counted
    again and compaction stops as soon as they are at most ``threshold * budget_tokens``. A step whose
    result is not smaller (by ``count_tokens``) than its input is discarded, so ``tokens_after <=
    tokens_before`` always. The result may still be over budget; deciding what then is the caller's.
    """
    _check_prefix(protected_prefix)
    if keep_turns < 1:
        raise ValueError("keep_turns must be >= 1 (the current turn is always kept)")
    current = copy.deepcopy(list(messages))
    tokens_before = tokens = count_tokens(current)
    limit = threshold * budget_tokens
    use_cjk = is_cjk_conversation(messages) if cjk is None else cjk
    steps: list[tuple[str, Callable[[list[Message]], list[Message]]]] = [
        (STEP_TOOL_RESULTS, lambda ms: compact_tool_results(ms, protected_prefix=protected_prefix, cjk=use_cjk)),
        (
            STEP_EARLY_TURNS,
            lambda ms: summarize_early_turns(
                ms, summarize, keep_turns=keep_turns, protected_prefix=protected_prefix, cjk=use_cjk
            ),
        ),
        (STEP_TRUNCATE, lambda ms: truncate_long_messages(ms, protected_prefix=protected_prefix, cjk=use_cjk)),
    ]
    applied: list[str] = []
    for name, step in steps:
        if tokens <= limit:
            break
        candidate = step(current)
        if candidate == current:
            continue
        candidate_tokens = count_tokens(candidate)
        if candidate_tokens < tokens:
            current, tokens = candidate, candidate_tokens
            applied.append(name)
    return CompactionResult(messages=current, steps=tuple(applied), tokens_before=tokens_before, tokens_after=tokens)
