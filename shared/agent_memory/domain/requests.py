"""The conventions every request model follows, whichever layer defines it.

Fields accept snake_case and camelCase names; unknown fields are rejected, so a typo never
silently drops data; text and JSON sizes are checked in UTF-8 bytes, the unit storage limits use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class RequestModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class OpenRequestModel(BaseModel):
    """Caller state: the known fields are typed, anything else the caller keeps is passed through."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


def max_utf8_bytes(limit: int) -> Callable[[Any], Any]:
    """A validator: text (or anything else, as JSON) of at most `limit` UTF-8 bytes."""

    def check(value: Any) -> Any:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        size = len(text.encode("utf-8"))
        if size > limit:
            raise ValueError(f"is {size} bytes; the limit is {limit} bytes (UTF-8)")
        return value

    return check
