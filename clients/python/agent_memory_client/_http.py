"""The pure core both clients share: what a call is, how its URL, headers and body are written, how an
answer is decoded, and when (and how long after) a failed attempt is tried again.

Nothing here does I/O. `MemoryClient` and `AsyncMemoryClient` are thin loops around these functions:
send, decode or decide, sleep.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from agent_memory_client._extras import DISTRIBUTION
from agent_memory_client.errors import (
    MemoryApiError,
    MemoryConnectionError,
    MemoryTimeoutError,
    error_from_response,
    parse_retry_after,
)

__version__ = "0.1.0"

T = TypeVar("T")

USER_AGENT = f"{DISTRIBUTION}/{__version__}"


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call, before it is sent: `T` is the TypedDict its answer decodes to.

    `retry_safe` says whether sending it twice does no harm (reads, and writes the API makes idempotent).
    Such a call is retried after any transient failure; any other call only when the failure shows it was
    not applied (see `retry_delay`).
    """

    method: str
    path: str  # already encoded: every segment went through `segment`
    retry_safe: bool
    params: dict[str, str] = field(default_factory=dict)
    body: Any = None  # JSON-able, or None for no body
    # Error statuses whose body is the answer, returned and never retried (the health check's 503 names the
    # part that is down).
    answers: frozenset[int] = frozenset()


@dataclass(frozen=True)
class RetryPolicy:
    """How failed attempts are tried again.

    Attempt n (0-based) waits `Retry-After` when the answer carried one (at most `max_retry_after`
    seconds, plus up to 10 % jitter so clients that were throttled together do not return together), else
    an exponential backoff with jitter: a uniform draw in [b/2, b], b = min(max_backoff, initial_backoff * 2**n).
    """

    max_retries: int = 3
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None, draw: float | None = None) -> float:
        jitter = random.random() if draw is None else draw
        if retry_after is not None:
            wait = min(retry_after, self.max_retry_after)
            return wait + wait * 0.1 * jitter
        ceiling = min(self.max_backoff, self.initial_backoff * 2.0**attempt)
        return ceiling / 2 + ceiling / 2 * jitter


# Answers that show nothing was applied: the API throttled the request or a dependency was down before
# anything was written (nothing is half-written: the API's docs/api.md, "Faults and what they cause"), so any call
# may be sent again.
NOT_APPLIED_STATUSES = frozenset({429, 503})
# Answers after which the handler may have run (API Gateway's bad gateway and timeout): idempotent calls only.
MAYBE_APPLIED_STATUSES = frozenset({502, 504})
# A 409 with Retry-After is the API's "too many concurrent writers on this field, retry": nothing written.
CONFLICT = 409
# Transport failures before the request left: it cannot have been applied.
NOT_SENT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def retry_delay(policy: RetryPolicy, call: Call[Any], attempt: int, outcome: httpx.Response | Exception
                ) -> float | None:
    """Seconds to wait before the next attempt, or None to stop and report `outcome`.

    `attempt` is the 0-based number of the attempt that just failed.
    """
    if attempt >= policy.max_retries:
        return None
    if isinstance(outcome, httpx.Response) and outcome.status_code in call.answers:
        return None
    if isinstance(outcome, Exception):
        if not isinstance(outcome, httpx.TransportError):
            return None
        retry = call.retry_safe or isinstance(outcome, NOT_SENT_ERRORS)
        return policy.delay(attempt, None) if retry else None
    status, retry_after = outcome.status_code, parse_retry_after(outcome.headers.get("retry-after"))
    if status in NOT_APPLIED_STATUSES or (status == CONFLICT and retry_after is not None):
        return policy.delay(attempt, retry_after)
    if status in MAYBE_APPLIED_STATUSES and call.retry_safe:
        return policy.delay(attempt, retry_after)
    return None


# ------------------------------------------------------------------------------------------------ writing


def segment(value: str, name: str) -> str:
    """One path segment, percent-encoded (UTF-8: Chinese keys work). Ids may hold ':' and '@', which a path
    segment allows as they are; '/', '?', '#', '%' and spaces are encoded, and '.'/'..' never collapse."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    encoded = quote(value, safe=":@")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


def url(base_url: str, call: Call[Any]) -> str:
    return base_url.rstrip("/") + call.path


def headers(tenant_id: str | None, token: str | None, *, has_body: bool) -> dict[str, str]:
    result = {"Accept": "application/json", "User-Agent": USER_AGENT}
    if has_body:
        result["Content-Type"] = "application/json"
    if token:
        result["Authorization"] = f"Bearer {token}"
    if tenant_id:
        result["X-Tenant-Id"] = tenant_id
    return result


def encode_body(body: Any) -> bytes | None:
    if body is None:
        return None
    return json.dumps(body, ensure_ascii=False, allow_nan=False, default=_json_default).encode("utf-8")


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if hasattr(value, "model_dump"):  # a pydantic model (an SDK block, say)
        return value.model_dump(mode="json", exclude_none=True)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def request(client: httpx.Client | httpx.AsyncClient, base_url: str, call: Call[Any], tenant_id: str | None,
            token: str | None) -> httpx.Request:
    content = encode_body(call.body)
    return client.build_request(call.method, url(base_url, call), params=call.params or None, content=content,
                                headers=headers(tenant_id, token, has_body=content is not None))


# ------------------------------------------------------------------------------------------------ reading


def decode(response: httpx.Response, answers: frozenset[int] = frozenset()) -> Any:
    """The answer's JSON, or the typed error for an error status (other than one of `answers`)."""
    if response.status_code >= 400 and response.status_code not in answers:
        raise error_from_response(response.status_code, response.headers, response.content)
    if not response.content:
        return {}
    try:
        return response.json()
    except ValueError:
        raise MemoryApiError(response.status_code, "invalid_response", "the answer is not JSON",
                             response.text[:500]) from None


def connection_error(error: httpx.TransportError, call: Call[Any]) -> MemoryConnectionError:
    what = f"{call.method} {call.path}"
    if isinstance(error, httpx.TimeoutException):
        return MemoryTimeoutError(f"{what} timed out: {error!r}")
    return MemoryConnectionError(f"{what} failed: {error!r}")


def compact(**fields: Any) -> dict[str, Any]:
    """The fields that were given (None means: the server's default)."""
    return {name: value for name, value in fields.items() if value is not None}


def query_params(**fields: Any) -> dict[str, str]:
    return {name: str(value) for name, value in compact(**fields).items()}


def as_dict(value: Mapping[str, Any] | Any, what: str) -> dict[str, Any]:
    """A mapping, or a pydantic model (an Anthropic SDK object) as its JSON-mode dump."""
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        dumped = dump(mode="json", exclude_none=True)
        if isinstance(dumped, dict):
            return dumped
    raise TypeError(f"{what} must be a mapping or a pydantic model, got {type(value).__name__}")
