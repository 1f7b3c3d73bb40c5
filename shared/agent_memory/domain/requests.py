"""The conventions every request model follows, whichever layer defines it.

Fields accept snake_case and camelCase names; unknown fields are rejected, so a typo never
silently drops data; text and JSON sizes are checked in UTF-8 bytes, the unit storage limits use.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel


def _takes_a_number(annotation: Any) -> bool:
    """int or float, alone or in a union that does not also take a bool."""
    options = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    return bool not in options and any(option in (int, float) for option in options)


class _Numbers(BaseModel):
    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """JSON's true is not the number 1: a limit of `true` is refused, not read as 1."""
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and _takes_a_number(field.annotation):
            raise ValueError("must be a number, not true or false")
        return value


class RequestModel(_Numbers):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class OpenRequestModel(_Numbers):
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
