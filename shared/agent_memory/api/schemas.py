"""What HTTP requests share: the body limits and the field types several request models use. Limits here
are part of the API contract, not deployment settings."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, StringConstraints

from agent_memory.domain.keys import FIELD_PATTERN
from agent_memory.domain.requests import MAX_CONTENT_BYTES as MAX_CONTENT_BYTES
from agent_memory.domain.requests import MAX_MESSAGE_BYTES as MAX_MESSAGE_BYTES
from agent_memory.domain.requests import max_utf8_bytes

MAX_BODY_BYTES = 256 * 1024
# Inject carries whole conversations: up to Lambda's 6 MB synchronous payload, less the envelope.
MAX_INJECT_BODY_BYTES = 5 * 1024 * 1024
MAX_BATCH_ITEMS = 100
MAX_METADATA_BYTES = 4 * 1024


NonBlank = StringConstraints(strip_whitespace=True, min_length=1)
Content = Annotated[str, NonBlank, AfterValidator(max_utf8_bytes(MAX_CONTENT_BYTES))]
Message = Annotated[str, AfterValidator(max_utf8_bytes(MAX_MESSAGE_BYTES))]
ShortText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
FieldName = Annotated[str, StringConstraints(pattern=FIELD_PATTERN)]
Metadata = Annotated[dict[str, Any], AfterValidator(max_utf8_bytes(MAX_METADATA_BYTES))]
