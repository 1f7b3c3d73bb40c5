"""Memory placeholders: [memory:key], [memory:key:summary], [memory:key:full],
[memory:key:meta:field]. They resolve to text; a missing memory or field yields an explicit
error marker, never a silent blank. (Executing code with memory slots is deliberately not
supported: running code inside a memory service would be a remote-code-execution hole.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from agent_memory.domain.models import Memory

PLACEHOLDER = re.compile(r"\[memory:(?P<key>[\w-]+)(?::(?P<format>full|summary|meta:(?P<metafield>\w+)))?\]")


@dataclass(frozen=True)
class Placeholder:
    key: str
    format: str  # full | summary | meta
    metafield: str | None
    raw: str
    start: int
    end: int


def find_placeholders(text: str) -> list[Placeholder]:
    found = []
    for match in PLACEHOLDER.finditer(text):
        fmt = match.group("format") or "summary"
        found.append(Placeholder(match.group("key"), "meta" if fmt.startswith("meta:") else fmt,
                                 match.group("metafield"), match.group(0), match.start(), match.end()))
    return found


def render(memory: Memory, placeholder: Placeholder, summarize: Callable[[Memory], str]) -> str:
    if placeholder.format == "full":
        return memory.content
    if placeholder.format == "meta":
        field = placeholder.metafield or ""
        if field not in memory.metadata:
            return f"[ERROR: Metadata field {field} not found]"
        value = memory.metadata[field]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return summarize(memory)


def resolve(
    text: str,
    lookup: Callable[[Iterable[str]], dict[str, Memory]],
    summarize: Callable[[Memory], str],
) -> tuple[str, list[Placeholder], list[str]]:
    """Replace every placeholder; returns the text, the placeholders found, and the keys not found."""
    placeholders = find_placeholders(text)
    memories = lookup({p.key for p in placeholders}) if placeholders else {}
    resolved = text
    for placeholder in sorted(placeholders, key=lambda p: p.start, reverse=True):
        memory = memories.get(placeholder.key)
        replacement = (f"[ERROR: Memory {placeholder.key} not found]" if memory is None
                       else render(memory, placeholder, summarize))
        resolved = resolved[: placeholder.start] + replacement + resolved[placeholder.end :]
    missing = sorted({p.key for p in placeholders if p.key not in memories})
    return resolved, placeholders, missing
