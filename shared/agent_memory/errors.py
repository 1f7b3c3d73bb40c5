"""Typed domain errors. The HTTP layer maps them to status codes in one table (api/http.py)."""

from __future__ import annotations

from typing import Any


class AgentMemoryError(Exception):
    code = "internal_error"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(AgentMemoryError):
    code = "validation_error"


class MalformedJson(AgentMemoryError):
    code = "invalid_json"


class PayloadTooLarge(AgentMemoryError):
    code = "payload_too_large"


class Unauthorized(AgentMemoryError):
    code = "unauthorized"


class Forbidden(AgentMemoryError):
    code = "forbidden"


class NotFound(AgentMemoryError):
    code = "not_found"


class Conflict(AgentMemoryError):
    code = "conflict"


class Throttled(AgentMemoryError):
    """The store pushed back; the caller should retry shortly."""

    code = "throttled"


class StoreUnavailable(AgentMemoryError):
    """The table could not be reached (connection refused or dropped, a timeout) or answered 5xx; what the
    request would have written was not written, the caller should retry."""

    code = "store_unavailable"


class LlmUnavailable(AgentMemoryError):
    """The LLM stayed down after retries; nothing was stored, the caller should retry the turn."""

    code = "llm_unavailable"


class SearchUnavailable(AgentMemoryError):
    """The search index could not be reached or failed; nothing was changed."""

    code = "search_unavailable"


class SearchIndexMismatch(AgentMemoryError):
    """The search index was built for another embedder (its vector dimension differs): an operator must rebuild
    it; retrying cannot help."""

    code = "search_index_mismatch"


class EmbeddingUnavailable(AgentMemoryError):
    """The embedding model could not be reached; nothing was stored."""

    code = "embedding_unavailable"


class QueueUnavailable(AgentMemoryError):
    """A work queue refused messages after retries; the caller's own retry (schedule, SQS) takes over."""

    code = "queue_unavailable"


class BatchInterrupted(AgentMemoryError):
    """A fault stopped a batch part-way. `details` says which items were written and which were not;
    the HTTP status is the cause's. Saves are idempotent by content, so resending the batch is safe."""

    code = "batch_interrupted"

    def __init__(self, message: str, *, cause: AgentMemoryError, details: Any = None) -> None:
        super().__init__(message, details=details)
        self.cause = cause
