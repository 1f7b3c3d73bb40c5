"""A JSON body's top-level object read one member at a time, so named members are checked as soon as they are read.

A route whose body names who it acts for (inject's `user_id`, up to 5 MB of conversation) refuses a caller who
may not act for them before the members after that name are parsed, and before anything is validated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

_WHITESPACE = re.compile(r"[ \t\n\r]*")

MemberCheck = Callable[[Any], None]


def _skip_whitespace(text: str, position: int) -> int:
    return _WHITESPACE.match(text, position).end()  # type: ignore[union-attr]  # the pattern matches empty text


def read_checking_members(text: str, decoder: json.JSONDecoder, checks: Mapping[str, MemberCheck],
                          members: dict[str, Any] | None = None) -> Any:
    """What `decoder.decode(text)` returns, with the same errors for malformed JSON; when the text is an object,
    `checks[name](value)` runs each time a member of that name is read (a repeated name is checked each time;
    the last value is kept, as `json.loads` keeps it), and an exception it raises ends the read there.
    `members`: filled as they are read, the member being checked included (what an error can name it by)."""
    position = _skip_whitespace(text, 0)
    if not text.startswith("{", position):
        return decoder.decode(text)
    members = {} if members is None else members
    position = _skip_whitespace(text, position + 1)
    if not text.startswith("}", position):
        while True:
            if not text.startswith('"', position):
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, position)
            name, position = decoder.raw_decode(text, position)  # a JSON string, as the quote says
            position = _skip_whitespace(text, position)
            if not text.startswith(":", position):
                raise json.JSONDecodeError("Expecting ':' delimiter", text, position)
            value, position = decoder.raw_decode(text, _skip_whitespace(text, position + 1))
            members[name] = value
            if name in checks:
                checks[name](value)
            position = _skip_whitespace(text, position)
            if text.startswith("}", position):
                break
            if not text.startswith(",", position):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, position)
            position = _skip_whitespace(text, position + 1)
    end = _skip_whitespace(text, position + 1)
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return members
