"""Claude's memory tool over HTTP: one command's request, and its answer."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, RootModel

from agent_memory.domain.requests import max_json_depth


def _shallow_fields(body: dict[str, Any]) -> dict[str, Any]:
    """Each field at most MAX_JSON_DEPTH levels deep, the limit every request field has; named in the error."""
    for name, value in body.items():
        try:
            max_json_depth(value)
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from None
    return body


class MemoryToolRequest(RootModel[Annotated[dict[str, Any], AfterValidator(_shallow_fields)]]):
    """Claude's memory tool (memory_20250818) input, as the model sent it: `command` (view, create,
    str_replace, insert, delete or rename) and that command's fields (path, view_range, file_text, old_str,
    new_str, insert_line, insert_text, old_path, new_path). A command the model got wrong is answered with
    `is_error: true` for it to read, not refused here."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"command": "view", "path": "/memories"},
        {"command": "create", "path": "/memories/客户/偏好.md", "file_text": "喜欢邮件沟通\n"},
        {"command": "str_replace", "path": "/memories/客户/偏好.md", "old_str": "邮件", "new_str": "微信"},
    ]})
