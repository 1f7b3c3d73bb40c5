"""The client's exceptions, and the one function that turns an HTTP error answer into one of them.

Every exception derives from `MemoryClientError`. An answer with an error status is a `MemoryApiError`
(a subclass per status, so callers catch `NotFoundError`, never compare strings); a request that got
no answer is a `MemoryConnectionError` (a `ConnectionError` too), or `MemoryTimeoutError` when it timed out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "MemoryApiError",
    "MemoryClientError",
    "MemoryConnectionError",
    "MemoryTimeoutError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "ServiceUnavailableError",
    "ValidationError",
    "error_from_response",
    "parse_retry_after",
]

# The headers API Gateway (HTTP and REST APIs) and common proxies put the request id in.
_REQUEST_ID_HEADERS = ("apigw-requestid", "x-amzn-requestid", "x-request-id")


class MemoryClientError(Exception):
    """Base class of every error this client raises."""


class MemoryConnectionError(MemoryClientError, ConnectionError):
    """The request got no answer (DNS, refused or reset connection, TLS, timeout) after the retries allowed."""


class MemoryTimeoutError(MemoryConnectionError):
    """The request timed out (connecting, writing, reading, or waiting for a pooled connection)."""


class MemoryApiError(MemoryClientError):
    """The API answered with an error status; the body was `{"error": {"code", "message", "details"}}`.

    `details` is what the server gave: for a validation error a list of `{field, message, type}`, for a
    500 `{"request_id": ...}`, for an interrupted batch `{cause, written, not_written}`. `retry_after` is
    the `Retry-After` header in seconds, when the answer carried one.
    """

    def __init__(self, status: int, code: str, message: str, details: Any = None, *,
                 request_id: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.request_id = request_id
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, message={self.message!r})"


class BadRequestError(MemoryApiError):
    """400: malformed JSON or a malformed request."""


class AuthenticationError(MemoryApiError):
    """401: no valid token, or no tenant claim in it."""


class PermissionDeniedError(MemoryApiError):
    """403: the token may not act for this user or project, or change the whole tenant (its synonyms)."""


class NotFoundError(MemoryApiError):
    """404: no such memory, hot-memory entry or route."""


class ConflictError(MemoryApiError):
    """409: too many concurrent writers on one field; retried automatically when the request allows."""


class PayloadTooLargeError(MemoryApiError):
    """413: the body is over the size limit (256 KB; 5 MB for inject)."""


class ValidationError(MemoryApiError):
    """422: a field is invalid; `details` names each one (`[{field, message, type}]`)."""


class RateLimitError(MemoryApiError):
    """429: throttled (nothing was written); retried automatically, honouring `Retry-After`."""


class ServerError(MemoryApiError):
    """A 5xx answer. 500 carries the `request_id` to quote when reporting it."""


class ServiceUnavailableError(ServerError):
    """503: a dependency (LLM, embedder, search index) is down; nothing was stored. Retried automatically."""


_BY_STATUS: dict[int, type[MemoryApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: ValidationError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def error_class(status: int) -> type[MemoryApiError]:
    return _BY_STATUS.get(status) or (ServerError if status >= 500 else MemoryApiError)


def error_from_response(status: int, headers: Mapping[str, str], body: bytes) -> MemoryApiError:
    """The typed error for an error answer. The API's own body is `{"error": {code, message, details}}`;
    anything else (API Gateway's `{"message": ...}`, an HTML page from a proxy) keeps its text as the message."""
    code, message, details = _error_body(status, body)
    request_id = _request_id(details, headers)
    return error_class(status)(status, code, message, details, request_id=request_id,
                               retry_after=parse_retry_after(headers.get("retry-after")))


def _error_body(status: int, body: bytes) -> tuple[str, str, Any]:
    fallback = f"http_{status}"
    text = body.decode("utf-8", errors="replace").strip()
    try:
        payload = json.loads(text) if text else None
    except ValueError:
        return fallback, text[:500] or f"HTTP {status}", None
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):
            return (str(error.get("code") or fallback), str(error.get("message") or f"HTTP {status}"),
                    error.get("details"))
        if isinstance(payload.get("message"), str):  # API Gateway: {"message": "Unauthorized"}
            return fallback, payload["message"], None
    return fallback, text[:500], None


def _request_id(details: Any, headers: Mapping[str, str]) -> str | None:
    if isinstance(details, dict):
        request_id = details.get("request_id")
        if isinstance(request_id, str):
            return request_id
    for name in _REQUEST_ID_HEADERS:
        if headers.get(name):
            return headers[name]
    return None


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` in seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
