"""What the memory tool's commands print and how its edits change a file's text.

The results are character for character those of the tool's reference implementation on a local
disk (the one the Anthropic SDK ships), so a model sees the behaviour it was trained on: listings two
levels deep with sizes (a directory shows as ``4K``, an ext4 directory's size), hidden names skipped,
six-wide line numbers, and the same success and error sentences. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel

from agent_memory.domain.memory_tool.memory_files import MemoryEntry


class MemoryToolResult(BaseModel):
    """The tool result to hand back to the model: its text, and whether it reports an error."""

    content: str
    is_error: bool = False


LINE_NUMBER_WIDTH = 6
DIRECTORY_SIZE = 4096
LISTING_DEPTH = 2
# Bounds on what an error echoes back to the model: a one-character old_str can occur 65,536 times in a file
# of 64 KiB, and listing every line (as the reference does) made an error of 196 KB.
MAX_LISTED_OCCURRENCES = 10
MAX_ECHOED_CHARS = 200


class MemoryEditError(ValueError):
    """An edit that cannot be made; the message is the tool's own."""


def format_size(size: int) -> str:
    """``0B``, ``12B``, ``2.0K``, ``4K``: bytes in the largest unit that keeps them at or above 1."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    unit = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / (1024**unit)
    return f"{int(scaled)}{units[unit]}" if scaled == int(scaled) else f"{scaled:.1f}{units[unit]}"


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{str(first + i).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines))


def render_file(shown_path: str, text: str, view_range: list[int] | None) -> str:
    """A file with line numbers; `view_range` [start, end] (1-based, end -1 = to the end) as the tool reads it."""
    lines = text.split("\n")
    start = 1
    if view_range and len(view_range) == 2:
        first = max(1, view_range[0]) - 1
        end = len(lines) if view_range[1] == -1 else view_range[1]
        lines, start = lines[first:end], first + 1
    return f"Here's the content of {shown_path} with line numbers:\n" + _numbered(lines, start)


@dataclass
class _Node:
    is_directory: bool
    size: int = 0
    children: dict[str, _Node] = field(default_factory=dict)


def _tree(directory: str, entries: Iterable[MemoryEntry]) -> _Node:
    """The entries below `directory` as a tree; a directory implied by a deeper entry is there too."""
    root = _Node(is_directory=True)
    for entry in entries:
        if not entry.path.startswith(directory + "/"):
            continue
        *parents, name = entry.path[len(directory) + 1:].split("/")
        node = root
        for part in parents:
            node = node.children.setdefault(part, _Node(is_directory=True))
        existing = node.children.get(name)
        if existing is None or not entry.is_directory:
            node.children[name] = _Node(entry.is_directory, entry.size,
                                        existing.children if existing else {})
    return root


def _listing(node: _Node, prefix: str, depth: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for name in sorted(node.children):
        if name.startswith("."):
            continue
        child = node.children[name]
        relative = f"{prefix}/{name}" if prefix else name
        if child.is_directory:
            rows.append((format_size(DIRECTORY_SIZE), relative + "/"))
            if depth < LISTING_DEPTH:
                rows.extend(_listing(child, relative, depth + 1))
        else:
            rows.append((format_size(child.size), relative))
    return rows


def render_directory(shown_path: str, directory: str, entries: Iterable[MemoryEntry]) -> str:
    """The directory and what is below it, two levels deep, by name; names starting with '.' are hidden."""
    rows = _listing(_tree(directory, entries), "", 1)
    header = (f"Here're the files and directories up to 2 levels deep in {shown_path}, "
              "excluding hidden items:")
    lines = [f"{format_size(DIRECTORY_SIZE)}\t{shown_path}"]
    lines.extend(f"{size}\t{shown_path}/{relative}" for size, relative in rows)
    return f"{header}\n" + "\n".join(lines)


def replace_once(shown_path: str, text: str, old: str, new: str) -> tuple[str, str]:
    """(the new text, the tool's snippet around the change); MemoryEditError unless `old` occurs exactly once."""
    count = text.count(old)
    if count == 0:
        raise MemoryEditError(
            f"No replacement was performed, old_str `{_echoed(old)}` did not appear verbatim in {shown_path}.")
    if count > 1:
        raise MemoryEditError(
            f"No replacement was performed. Multiple occurrences of old_str `{_echoed(old)}` in lines: "
            f"{_occurrence_lines(text, old)}. Please ensure it is unique")
    changed_line = text[:text.find(old)].count("\n")
    result = text.replace(old, new)
    new_lines = result.split("\n")
    first, last = max(0, changed_line - 2), min(len(new_lines), changed_line + 3)
    snippet = _numbered(new_lines[first:last], first + 1)
    return result, ("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
                    + snippet)


def _echoed(old: str) -> str:
    return old if len(old) <= MAX_ECHOED_CHARS else f"{old[:MAX_ECHOED_CHARS]}… ({len(old)} characters)"


def _occurrence_lines(text: str, old: str) -> str:
    """The line of each occurrence, overlapping ones too, as the tool names them; past the first
    MAX_LISTED_OCCURRENCES, how many more there are."""
    lines: list[int] = []
    total, line, counted_to = 0, 1, 0
    position = text.find(old)
    while position != -1:
        total += 1
        if len(lines) < MAX_LISTED_OCCURRENCES:
            line += text.count("\n", counted_to, position)
            counted_to = position
            lines.append(line)
        position = text.find(old, position + 1)
    listed = ", ".join(map(str, lines))
    return listed if total == len(lines) else f"{listed} and {total - len(lines)} more ({total} occurrences)"


def insert_at(text: str, line: int, inserted: str) -> str:
    """`inserted` as a line after line `line` (0 = at the top); MemoryEditError outside [0, lines]."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # a trailing newline ends the last line, it does not start another
    if line < 0 or line > len(lines):
        raise MemoryEditError(
            f"Invalid `insert_line` parameter: {line}. It should be within the range [0, {len(lines)}].")
    lines.insert(line, inserted.rstrip("\n"))
    result = "\n".join(lines)
    return result if result.endswith("\n") else result + "\n"
