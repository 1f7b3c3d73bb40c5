"""Errors name a request's fields as the caller spelled them.

Requests take snake_case and camelCase names alike (`memory_type` or `memoryType`). An error's
`details[].field` names a field the body holds as the body holds it, and a field it lacks (a required one left
out, a rule over several fields) in the body's own convention where it would be: camelCase when the keys
beside it are camelCase, else snake_case, the documented form. `memories.0.memoryType` for a batch item
written `{"content": ..., "conversationId": ...}`, `memories.0.memory_type` for `{"content": ...}`.
"""

from __future__ import annotations

import re
from typing import Any

# A name either convention spells: lower-case first, letters, digits and underscores (not `X-Tenant-Id`, `body`
# stays itself either way).
_NAME = re.compile(r"^[a-z][a-zA-Z0-9_]*$")
_CAMEL = re.compile(r"^[a-z][a-z0-9]*[A-Z][a-zA-Z0-9]*$")
_SNAKE = re.compile(r"^[a-z][a-z0-9]*_[a-z0-9_]*$")


def snake(name: str) -> str:
    """`memoryType` -> `memory_type` (a name already in snake_case is unchanged)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m[1].lower(), name)


def camel(name: str) -> str:
    """`memory_type` -> `memoryType` (a name already in camelCase is unchanged)."""
    return re.sub(r"_([a-z0-9])", lambda m: m[1].upper(), name)


def _writes_camel(members: dict[Any, Any], around: bool) -> bool:
    """Whether an object's keys are camelCase: any snake_case key says no, else any camelCase key says yes, else
    (one-word keys, or none) the object around it decides."""
    names = [name for name in members if isinstance(name, str)]
    if any(_SNAKE.match(name) for name in names):
        return False
    return True if any(_CAMEL.match(name) for name in names) else around


def _spelled(name: str, members: dict[Any, Any], camel_case: bool) -> str:
    if name in members or not _NAME.match(name):
        return name
    for spelling in (snake(name), camel(name)):
        if spelling in members:
            return spelling
    return camel(name) if camel_case else snake(name)


def as_sent(field: str, body: Any) -> str:
    """A dotted field (`memories.0.memoryType`) spelled as `body`, the request's decoded JSON, spells it."""
    node, camel_case, named = body, False, []
    for part in field.split(".") if field else []:
        if isinstance(node, dict):
            camel_case = _writes_camel(node, camel_case)
            part = _spelled(part, node, camel_case)
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit():
            node = node[int(part)] if int(part) < len(node) else None
        else:  # past what the body holds: the convention of the last object it does hold
            if _NAME.match(part):
                part = camel(part) if camel_case else snake(part)
            node = None
        named.append(part)
    return ".".join(named)


def details_as_sent(details: Any, body: Any) -> Any:
    """An error's details with each `field` spelled as `body` spells it; details of another shape unchanged."""
    if not isinstance(details, list):
        return details
    return [{**detail, "field": as_sent(detail["field"], body)}
            if isinstance(detail, dict) and isinstance(detail.get("field"), str) else detail for detail in details]
