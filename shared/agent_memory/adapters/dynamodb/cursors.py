"""The listing's page cursors: the last memory key of a page, opaque to callers."""

from __future__ import annotations

import base64
import binascii

from agent_memory.domain.keys import is_valid_memory_key
from agent_memory.errors import InvalidInput


def encode_cursor(memory_key: str) -> str:
    return base64.urlsafe_b64encode(memory_key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        memory_key = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        memory_key = ""
    if not is_valid_memory_key(memory_key):
        raise InvalidInput("cursor: not a cursor this API returned", details=[{"field": "cursor"}])
    return memory_key
