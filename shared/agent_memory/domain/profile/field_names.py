"""Memory field names that were answered under another name before. A caller may still send a former
name, and memories stored under one are still in tables: both are read as the current name."""

from __future__ import annotations

from types import MappingProxyType
from typing import Annotated

from pydantic import BeforeValidator

# former name -> current name
FORMER_FIELD_NAMES = MappingProxyType(
    {
        "hasHongKongEmployer": "hasHKEmployer",
        "investmentAmount": "investmentCapacity",
    }
)


def current_field_name(name: str) -> str:
    return FORMER_FIELD_NAMES.get(name, name)


def _current_or_unchanged(value: object) -> object:
    return current_field_name(value) if isinstance(value, str) else value


# A memory's `field` as every model holds it: a former name becomes the current one wherever a memory is
# built, from a request or from a stored item alike (so no stored data has to be rewritten).
MemoryFieldName = Annotated[str | None, BeforeValidator(_current_or_unchanged)]
