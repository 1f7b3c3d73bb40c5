"""Anthropic Messages arrays: validity checking and the auto-compaction steps of context injection.

Pure domain code: no I/O, no SDK. A Messages array is a list of ``{"role": "user"|"assistant",
"content": str | list[block]}`` dicts. The API layer rejects an invalid input (``validate_messages``
names every problem); the compaction steps assume a valid input and always return a valid array:

* the first message has role ``user`` and roles alternate strictly;
* every ``tool_use`` in an assistant message has its ``tool_result`` in the very next (user) message,
  and every ``tool_result`` answers a ``tool_use`` of the message right before it;
* the last message (the current user message) is never modified, nor are the first
  ``protected_prefix`` messages (the injected context pair);
* the input is never mutated: every step returns a deep copy.

A *turn* starts at a user message that carries human input only (no ``tool_result`` blocks), so a
turn boundary never separates a ``tool_use`` from its ``tool_result``.

Auto-compaction (seed 08-context-injection, section 6) runs when the history is over
``threshold * budget`` tokens and re-checks after each step:

1. ``compact_tool_results``: long tool results shrink to a preview and their original length;
2. ``summarize_early_turns``: everything before the last ``keep_turns`` turns becomes one summary
   user message and a short assistant acknowledgement;
3. ``truncate_long_messages``: long texts are cut with a marker.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_memory.domain.models import is_cjk_text

Message = dict[str, Any]
Summarizer = Callable[[list[Message]], str]
TokenCounter = Callable[[list[Message]], int]

ROLES = ("user", "assistant")

STEP_TOOL_RESULTS = "tool_results"
STEP_EARLY_TURNS = "early_turns"
STEP_TRUNCATE = "truncate"

SUMMARY_HEADER_ZH = "[以下是之前对话的摘要]"
SUMMARY_FOOTER_ZH = "[摘要结束，以下是最近的对话]"
SUMMARY_ACK_ZH = "好的，我了解了之前的讨论内容，我们继续。"
SUMMARY_HEADER_EN = "[Summary of the earlier conversation]"
SUMMARY_FOOTER_EN = "[End of summary; the recent conversation follows]"
SUMMARY_ACK_EN = "Understood, I have the earlier discussion in mind. Let's continue."


# --------------------------------------------------------------------------------------------- #
# Small accessors
# --------------------------------------------------------------------------------------------- #


def _blocks(message: Message) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _blocks_of_type(message: Message, block_type: str) -> list[dict[str, Any]]:
    return [b for b in _blocks(message) if isinstance(b, dict) and b.get("type") == block_type]


def _tool_use_ids(message: Message) -> list[str]:
    return [str(b.get("id")) for b in _blocks_of_type(message, "tool_use")]


def _tool_result_ids(message: Message) -> list[str]:
    return [str(b.get("tool_use_id")) for b in _blocks_of_type(message, "tool_result")]


def _human_text(message: Message) -> str:
    """The plain text of a message: string content and text blocks (not tool inputs or results)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in _blocks_of_type(message, "text"))


def _tool_result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def is_cjk_conversation(messages: Sequence[Message]) -> bool:
    """The conversation's language, from its human and assistant text (tool results only as a fallback)."""
    text = "\n".join(_human_text(m) for m in messages if isinstance(m, dict))
    if not text.strip():
        text = "\n".join(
            _tool_result_text(b.get("content")) for m in messages if isinstance(m, dict)
            for b in _blocks_of_type(m, "tool_result")
        )
    return is_cjk_text(text)


# --------------------------------------------------------------------------------------------- #
# Validation
# --------------------------------------------------------------------------------------------- #


def _validate_block(where: str, block: object, role: str, may_be_empty: bool) -> list[str]:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return [f"{where}: a content block must be an object with a string 'type'"]
    block_type = block["type"]
    problems: list[str] = []
    if block_type == "text":
        text = block.get("text")
        if not isinstance(text, str):
            problems.append(f"{where}: text block needs a string 'text'")
        elif not text.strip() and not may_be_empty:
            problems.append(f"{where}: text block must contain non-whitespace text")
    elif block_type in ("image", "document"):
        if not isinstance(block.get("source"), dict):
            problems.append(f"{where}: {block_type} block needs a 'source' object")
    elif block_type == "tool_use":
        if role != "assistant":
            problems.append(f"{where}: tool_use blocks may only appear in assistant messages")
        for key in ("id", "name"):
            if not isinstance(block.get(key), str) or not block[key]:
                problems.append(f"{where}: tool_use block needs a non-empty string '{key}'")
        if not isinstance(block.get("input"), dict):
            problems.append(f"{where}: tool_use block needs an 'input' object")
    elif block_type == "tool_result":
        if role != "user":
            problems.append(f"{where}: tool_result blocks may only appear in user messages")
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
    elif block_type in ("thinking", "redacted_thinking") and role != "assistant":
        problems.append(f"{where}: {block_type} blocks may only appear in assistant messages")
    # Other block types (server tools, search results, ...) are passed through unchecked.
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
    last = len(messages) - 1
    roles: list[str | None] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            problems.append(f"messages[{i}]: must be an object with 'role' and 'content'")
            roles.append(None)
            continue
        role = message.get("role")
        roles.append(role if role in ROLES else None)
        if role not in ROLES:
            problems.append(f"messages[{i}]: role must be 'user' or 'assistant', got {role!r}")
        may_be_empty = i == last and role == "assistant"
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

    if roles[0] is not None and roles[0] != "user":
        problems.append("messages[0]: the first message must have role 'user'")
    for i in range(1, len(roles)):
        if roles[i] is not None and roles[i] == roles[i - 1]:
            problems.append(
                f"messages[{i}]: role '{roles[i]}' repeats the previous message's role; roles must alternate"
            )

    seen_tool_use: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            following = messages[i + 1] if i < last else None
            answered = (
                set(_tool_result_ids(following))
                if isinstance(following, dict) and following.get("role") == "user" else set()
            )
            for tool_id in _tool_use_ids(message):
                if tool_id in seen_tool_use:
                    problems.append(f"messages[{i}]: tool_use id {tool_id} is used more than once")
                seen_tool_use.add(tool_id)
                if tool_id not in answered:
                    problems.append(f"messages[{i}]: tool_use {tool_id} has no tool_result in the next message")
        elif message.get("role") == "user":
            previous = messages[i - 1] if i > 0 else None
            asked = (
                set(_tool_use_ids(previous))
                if isinstance(previous, dict) and previous.get("role") == "assistant" else set()
            )
            seen_results: set[str] = set()
            for tool_id in _tool_result_ids(message):
                if tool_id not in asked:
                    problems.append(
                        f"messages[{i}]: tool_result {tool_id} does not match a tool_use in the previous message"
                    )
                if tool_id in seen_results:
                    problems.append(f"messages[{i}]: tool_result {tool_id} appears more than once")
                seen_results.add(tool_id)
            other_seen = False
            for block in _blocks(message):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    if other_seen:
                        problems.append(f"messages[{i}]: tool_result blocks must come before any other content")
                        break
                else:
                    other_seen = True
    return problems


def is_valid(messages: object) -> bool:
    return not validate_messages(messages)


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Indexes of the user messages that start a turn: human input only, no tool_result blocks."""
    return [
        i for i, m in enumerate(messages)
        if m.get("role") == "user" and not _blocks_of_type(m, "tool_result")
    ]


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
        for block in _blocks_of_type(out[i], "tool_result"):
            length, readable = _measure_tool_result(block.get("content"))
            if length > max_chars:
                block["content"] = compaction_marker(readable[:keep_chars], length, cjk=use_cjk)
    return out


# --------------------------------------------------------------------------------------------- #
# Step 2: summarize early turns
# --------------------------------------------------------------------------------------------- #


def summary_messages(summary: str, *, cjk: bool) -> list[Message]:
    """The user/assistant pair that stands in for the summarized turns."""
    if cjk:
        return [
            {"role": "user", "content": f"{SUMMARY_HEADER_ZH}\n{summary}\n{SUMMARY_FOOTER_ZH}"},
            {"role": "assistant", "content": SUMMARY_ACK_ZH},
        ]
    return [
        {"role": "user", "content": f"{SUMMARY_HEADER_EN}\n{summary}\n{SUMMARY_FOOTER_EN}"},
        {"role": "assistant", "content": SUMMARY_ACK_EN},
    ]


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
# Offline extractive summary
# --------------------------------------------------------------------------------------------- #

_SENTENCE_BREAK = re.compile(r"(?<=[。！？!?；;])\s*|\n+|(?<=\.)\s+")
_MARKERS = re.compile(
    r"…\[(?:截断，原始长度 \d+ 字符|truncated, original length \d+ chars)\]"
    + "|" + "|".join(re.escape(m) for m in (SUMMARY_HEADER_ZH, SUMMARY_FOOTER_ZH, SUMMARY_HEADER_EN, SUMMARY_FOOTER_EN))
)
_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
_FIRST_PERSON_EN = re.compile(r"\bI\b|\bI'(?:m|ve|d|ll)\b|(?i:\b(?:my|mine|me|we|our|ours|us)\b)")
_FIRST_PERSON_ZH = re.compile(r"我")
_CAPITALIZED = re.compile(r"(?<![\w'])[A-Z][A-Za-z0-9&.\-]*[A-Za-z0-9]")
_LATIN_IN_CJK = re.compile(r"[A-Za-z][A-Za-z0-9+#.\-]*")
_QUOTED_ZH = re.compile(r"《[^》]+》|「[^」]+」|“[^”]+”")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _sentences(text: str) -> list[str]:
    text = _MARKERS.sub("\n", text)
    return [s.strip().lstrip("-•* ").strip() for s in _SENTENCE_BREAK.split(text) if s and s.strip()]


def _effective_length(sentence: str) -> float:
    cjk_chars = len(_CJK_CHAR.findall(sentence))
    return (len(sentence) - cjk_chars) + 2.5 * cjk_chars


def _signals(sentence: str) -> float:
    """Numbers, named entities and first-person statements: what makes a sentence a fact worth keeping."""
    score = 0.0
    numbers = len(_NUMBER.findall(sentence))
    if numbers:
        score += 2 + min(numbers - 1, 2)
    if _CJK_CHAR.search(sentence):
        if _FIRST_PERSON_ZH.search(sentence):
            score += 2
        score += min(len(_LATIN_IN_CJK.findall(sentence)) + len(_QUOTED_ZH.findall(sentence)), 3)
    else:
        if _FIRST_PERSON_EN.search(sentence):
            score += 2
        words = _CAPITALIZED.findall(sentence)
        # A capitalized first word is just the start of the sentence (unless it is an acronym).
        names = [w for i, w in enumerate(words) if w != "I" and (i > 0 or not sentence.startswith(w) or w.isupper())]
        score += min(len(names), 3)
    return score


def _information(sentence: str, signals: float) -> float:
    """How much a sentence is worth keeping: its signals, longer is better, questions are worth less."""
    score = signals + min(_effective_length(sentence), 100) / 50
    return score - 1 if sentence.endswith(("?", "？")) else score


def _is_candidate(sentence: str, signals: float) -> bool:
    """Skip pleasantries: a sentence needs a signal, or some length when it has none."""
    length = _effective_length(sentence)
    return length >= 8 and (signals > 0 or length >= 30)


def extractive_summary(messages: Sequence[Message], max_chars: int = 400) -> str:
    """An offline summary: the most informative user sentences, in order, as ``- `` lines within ``max_chars``.

    Sentences are taken verbatim (so the summary is in the conversation's language); the assistant's
    text is used only when the user said nothing usable. Never calls anything external.
    """
    if max_chars <= 0:
        return ""
    candidates: list[tuple[float, int, str]] = []
    for role in ("user", "assistant"):
        seen: set[str] = set()
        for message in messages:
            if message.get("role") != role:
                continue
            for sentence in _sentences(_human_text(message)):
                signals = _signals(sentence)
                if sentence not in seen and _is_candidate(sentence, signals):
                    seen.add(sentence)
                    candidates.append((_information(sentence, signals), len(candidates), sentence))
        if candidates:
            break
    chosen: list[tuple[int, str]] = []
    used = 0
    for _, order, sentence in sorted(candidates, key=lambda c: (-c[0], c[1])):
        line = f"- {sentence}"
        cost = len(line) + (1 if chosen else 0)
        if used + cost <= max_chars:
            chosen.append((order, line))
            used += cost
        elif not chosen:
            line = line[: max(max_chars - 1, 0)] + "…" if max_chars > 1 else line[:max_chars]
            chosen.append((order, line))
            used = len(line)
    return "\n".join(line for _, line in sorted(chosen))


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
