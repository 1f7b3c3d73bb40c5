"""The conventions every request model follows, whichever layer defines it.

Fields accept snake_case and camelCase names; unknown fields are rejected, so a typo never
silently drops data; text and JSON sizes are checked in UTF-8 bytes, the unit storage limits use; no
field's JSON nests deeper than `MAX_JSON_DEPTH` arrays and objects.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel


def _takes_a_number(annotation: Any) -> bool:
    """int or float, alone or in a union that does not also take a bool."""
    options = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    return bool not in options and any(option in (int, float) for option in options)


# How much text a memory's content (its context too) and a logged message hold, in UTF-8 bytes: a save, an
# extraction and an import alike, so a user's export always imports back.
MAX_CONTENT_BYTES = 8 * 1024
MAX_MESSAGE_BYTES = 32 * 1024

# How many arrays and objects a request field's JSON may nest, counted from the field. Deeper values
# were stored and then could not be written back out (pydantic's serializer stops near 255 levels).
MAX_JSON_DEPTH = 32


def json_depth(value: Any, stop_above: int | None = None) -> int:
    """How many arrays and objects `value` nests: a scalar 0, `[]` 1, `{"a": [1]}` 2. Iterative (no
    recursion limit); with `stop_above`, stops counting once that depth is passed."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if stop_above is not None and deepest > stop_above:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


TOO_DEEP = f"nests deeper than {MAX_JSON_DEPTH} levels of arrays and objects, the limit"


def nests_too_deep(value: Any) -> bool:
    """Whether `value` nests more than `MAX_JSON_DEPTH` arrays and objects (a value stored before the limit)."""
    return json_depth(value, stop_above=MAX_JSON_DEPTH) > MAX_JSON_DEPTH


def max_json_depth(value: Any) -> Any:
    """A validator: JSON nesting at most `MAX_JSON_DEPTH` arrays and objects."""
    if nests_too_deep(value):
        raise ValueError(TOO_DEEP)
    return value


def _holds_models(annotation: Any) -> bool:
    """Whether a field's type holds models (a page's list of records): their own fields are counted, each from
    itself, so a value nests as deep inside an import page as in the save it restores."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_models(arg) for arg in get_args(annotation))


class _Shallow(BaseModel):
    @field_validator("*", mode="before")
    @classmethod
    def _not_too_deep(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and _holds_models(field.annotation):
            return value
        return max_json_depth(value)

    @model_validator(mode="after")
    def _extras_not_too_deep(self) -> Any:
        """A field the model does not name (a caller's own, where extras are allowed) has the same limit."""
        for name, value in (self.model_extra or {}).items():
            try:
                max_json_depth(value)
            except ValueError as error:
                raise ValueError(f"{name}: {error}") from None
        return self


class _Numbers(_Shallow):
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


def _true_or_false(value: Any) -> Any:
    """A flag in a query string is the word true or false, nothing else: "1", "yes" or "TRUE" is refused rather than
    read as true (a flag may purge for good)."""
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValueError("must be true or false")


# A boolean query parameter.
QueryFlag = Annotated[bool, BeforeValidator(_true_or_false)]
