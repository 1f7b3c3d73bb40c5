"""One session of memory-tool commands, and how the SDK's reference implementation answers it: the unit
tests run it over the fake store, the integration tests over DynamoDB."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from agent_memory.domain.lifecycle.memory_edits import MemoryToolResult, format_size

SDK_COMMANDS: dict[str, Any] = {
    "view": BetaMemoryTool20250818ViewCommand, "create": BetaMemoryTool20250818CreateCommand,
    "str_replace": BetaMemoryTool20250818StrReplaceCommand, "insert": BetaMemoryTool20250818InsertCommand,
    "delete": BetaMemoryTool20250818DeleteCommand, "rename": BetaMemoryTool20250818RenameCommand,
}


def view(path: str, view_range: list[int] | None = None) -> dict[str, Any]:
    return {"command": "view", "path": path, **({"view_range": view_range} if view_range else {})}


def create(path: str, text: str) -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def replace(path: str, old: str, new: str) -> dict[str, Any]:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


def insert(path: str, line: int, text: str) -> dict[str, Any]:
    return {"command": "insert", "path": path, "insert_line": line, "insert_text": text}


def delete(path: str) -> dict[str, Any]:
    return {"command": "delete", "path": path}


def rename(old: str, new: str) -> dict[str, Any]:
    return {"command": "rename", "old_path": old, "new_path": new}


NOTES, PLAN, ZHANG = "/memories/notes.md", "/memories/projects/alpha/plan.md", "/memories/客户/张三.md"

SESSION = [
    view("/memories"), view("/memories/"),
    create(NOTES, "# Notes\nhello\nworld\n"), create(ZHANG, "张三喜欢喝茶\n住在上海\n"),
    create(PLAN, "".join(f"step {n}\n" for n in range(1, 7))), create("/memories/projects/alpha/deep/x.md", "x"),
    create("/memories/.hidden/secret.md", "s"), create("/memories/empty.md", ""),
    create("/memories/kilo.md", "k" * 1024), create("/memories/big.md", "b" * 2000),
    create("/memories/crlf.md", "a\r\nb\r\n"), create("/memories/no-newline.md", "one\ntwo"),
    create(NOTES, "again"), create("/memories", "x"), create("/memories/客户", "x"),
    view("/memories"), view("/memories/"), view("/memories/projects"), view("/memories/projects/alpha/"),
    view("/memories/.hidden"), view("/memories//客户"),
    view(NOTES), view(NOTES, [2, 3]), view(NOTES, [2, -1]), view(NOTES, [0, 1]), view(NOTES, [3, 1]),
    view(NOTES, [10, 20]), view(NOTES, [1]), view(NOTES, [1, -3]), view(NOTES + "/"),
    view("/memories/empty.md"), view(ZHANG), view("/memories/crlf.md"), view("/memories/missing.md"),
    view("/etc/passwd"), view("/memories/../etc"), view("/memories/a/../../x"), view("relative.md"),
    replace(NOTES, "hello", "hi there"), replace(NOTES, "absent", "x"), replace(PLAN, "step", "x"),
    replace(PLAN, "step 6", "step six"), replace(PLAN, "step 1\n", ""), replace(ZHANG, "喝茶", "喝咖啡"),
    replace("/memories/empty.md", "", "filled"), replace("/memories/crlf.md", "a\r", "A\r"),
    replace("/memories/projects", "a", "b"), replace("/memories", "a", "b"), replace("/memories/none.md", "a", "b"),
    insert(NOTES, 0, "first"), insert(NOTES, 2, "middle\n"), insert(NOTES, 6, "last"), insert(NOTES, 99, "x"),
    insert(NOTES, -1, "x"), insert("/memories/empty.md", 1, "second"), insert("/memories/no-newline.md", 1, "1.5"),
    insert("/memories/crlf.md", 2, "c"), insert("/memories/projects", 0, "x"), insert("/memories/none.md", 0, "x"),
    view(NOTES), view("/memories/empty.md"), view("/memories/no-newline.md"), view("/memories/crlf.md"),
    rename(NOTES, "/memories/archive/2024/notes.md"), rename("/memories/projects", "/memories/work"),
    rename("/memories/客户", "/memories/clients"), rename("/memories/none.md", "/memories/other.md"),
    rename("/memories/clients", "/memories/kilo.md"), rename("/memories/kilo.md", "/memories/kilo.md"),
    rename("/memories", "/memories/x"), rename("/memories/", "/memories/x"), rename("/memories/big.md", "/memories"),
    view("/memories"), view("/memories/work"), view("/memories/archive/2024/notes.md"),
    delete("/memories/work/alpha/plan.md"), view("/memories/work/alpha"), delete("/memories/work"),
    delete("/memories/missing"), delete("/memories"), delete("/memories/"), delete("/etc"),
    delete("/memories/clients/张三.md"), view("/memories"), view("/memories/clients"),
]


def reference_answer(tool: BetaLocalFilesystemMemoryTool, command: dict[str, Any]) -> MemoryToolResult:
    try:
        content = tool.execute(SDK_COMMANDS[command["command"]](**command))
    except ToolError as error:
        return MemoryToolResult(content=str(error.content), is_error=True)
    return MemoryToolResult(content=str(content))


def on_this_disk(answer: MemoryToolResult, base_path: Path) -> MemoryToolResult:
    """Our listing as the reference prints it on the disk under `base_path`, if its directories are not
    4096 bytes (ext4's, which the backend shows). Only a directory's size column changes."""
    directory_size = format_size(os.stat(base_path / "memories").st_size)
    if directory_size == "4K" or not answer.content.startswith("Here're"):
        return answer
    lines = [f"{directory_size}\t{line.split(chr(9), 1)[1]}"
             if index == 1 or line.endswith("/") else line
             for index, line in enumerate(answer.content.split("\n"))]
    return MemoryToolResult(content="\n".join(lines), is_error=answer.is_error)
