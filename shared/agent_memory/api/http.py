"""What every HTTP function shares: the resolver, tenancy, body parsing, and the error table."""

from __future__ import annotations

import binascii
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2
from pydantic import BaseModel, ValidationError

from agent_memory.api.body_members import MemberCheck, read_checking_members
from agent_memory.api.schemas import MAX_BODY_BYTES
from agent_memory.api.sent_names import as_sent, details_as_sent
from agent_memory.domain.keys import is_valid_id, is_valid_memory_key
from agent_memory.domain.models import Origin, Provenance, ScopeRef
from agent_memory.errors import (
    AgentMemoryError,
    BatchInterrupted,
    Conflict,
    EmbeddingUnavailable,
    Forbidden,
    InvalidInput,
    LlmUnavailable,
    MalformedJson,
    NotFound,
    PayloadTooLarge,
    SearchUnavailable,
    StoreUnavailable,
    Throttled,
    Unauthorized,
)
from agent_memory.observability import error_fields, logger, metrics, record_request_outcome, tracer
from agent_memory.settings import get_settings

# The one table from domain errors to HTTP.
STATUS_BY_ERROR: dict[type[AgentMemoryError], int] = {
    MalformedJson: 400,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    PayloadTooLarge: 413,
    InvalidInput: 422,
    Throttled: 429,
    LlmUnavailable: 503,
    EmbeddingUnavailable: 503,
    SearchUnavailable: 503,
    StoreUnavailable: 503,
}
RETRY_AFTER_SECONDS: dict[type[AgentMemoryError], str] = {
    Throttled: "1", LlmUnavailable: "5", EmbeddingUnavailable: "5", SearchUnavailable: "5", Conflict: "1",
    StoreUnavailable: "5",
}


def error_response(status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
                   ) -> Response[str]:
    body = {"error": {"code": code, "message": message, "details": details}}
    return Response(status, "application/json", json.dumps(body, ensure_ascii=False), headers=headers)


def json_response(status: int, payload: BaseModel | dict[str, Any]) -> Response[str]:
    if isinstance(payload, BaseModel):
        body = payload.model_dump_json(exclude_none=False)
    else:
        body = json.dumps(payload, ensure_ascii=False, default=str)
    return Response(status, "application/json", body)


def validation_details(error: ValidationError, prefix: str = "", sent: Any = None) -> list[dict[str, str]]:
    """One detail per problem, its field named as `sent` (the decoded body or query) spells it."""
    details = []
    for e in error.errors(include_url=False, include_input=False):
        field = ".".join(str(part) for part in (prefix, *e["loc"]) if part != "")
        message = e["msg"]
        # A model-level check names its field as "field: message" (it has no location of its own).
        named = _NAMED_MESSAGE.match(message)
        if named and not e["loc"]:
            field, message = ".".join(p for p in (prefix, named["field"]) if p), named["message"]
        details.append({"field": as_sent(field, sent), "message": message, "type": e["type"]})
    return details


_SURROGATE = re.compile(r"[\ud800-\udfff]")
# The routing context's key for the request's decoded body (or query): error details name fields as it does.
_SENT = "request_members"
_NAMED_MESSAGE = re.compile(r"^(?:Value error, )?(?P<field>[a-z][a-z0-9_]*): (?P<message>.+)$", re.DOTALL)


def invalid(details: list[dict[str, str]]) -> InvalidInput:
    summary = "; ".join(f"{d['field'] or 'body'}: {d['message']}" for d in details[:5])
    return InvalidInput(f"invalid request: {summary}", details=details)


class _Resolver(APIGatewayHttpResolver):
    """powertools keeps the request's event on its BaseRouter class: one per process, which is right in Lambda
    (one invocation at a time per process) but not in the local server, whose simulated containers share one
    process and run at once. Each resolver keeps its own: what routing and handlers read through it
    (`app.current_event`) is the request it is resolving, never another's (its path, its tenant header)."""

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        self.current_event = APIGatewayProxyEventV2(dict(event), self._json_body_deserializer)
        self.lambda_context = context
        return super().resolve(event, context)


def _exception_handler[E: Exception](app: APIGatewayHttpResolver, kind: type[E]
                                      ) -> Callable[[Callable[[E], Response[str]]], Callable[[E], Response[str]]]:
    """`app.exception_handler(kind)` with its types: powertools leaves that decorator unannotated. It registers
    the handler for `kind` and returns it unchanged."""

    def register(handle: Callable[[E], Response[str]]) -> Callable[[E], Response[str]]:
        app.exception_handler(kind)(handle)
        return handle

    return register


def new_resolver() -> APIGatewayHttpResolver:
    app = _Resolver()

    @_exception_handler(app, AgentMemoryError)
    def _domain_error(error: AgentMemoryError) -> Response[str]:
        # An interrupted batch answers with its cause's status (and Retry-After), and says what was written.
        kind = type(error.cause) if isinstance(error, BatchInterrupted) else type(error)
        status = STATUS_BY_ERROR.get(kind, 500)
        retry = RETRY_AFTER_SECONDS.get(kind)
        headers = {"Retry-After": retry} if retry else None
        # A service names a field in snake_case: the answer names it as the body (what of it was read) spells it.
        sent = app.context.get(_SENT)
        details = error.details if sent is None else details_as_sent(error.details, sent)
        return error_response(status, error.code, error.message, details, headers)

    @_exception_handler(app, Exception)
    def _unexpected(error: Exception) -> Response[str]:
        request_id = getattr(app.lambda_context, "aws_request_id", None)
        logger.error("unhandled error", extra=error_fields(error))
        return error_response(
            500, "internal_error", "an unexpected error occurred; quote the request id when reporting it",
            {"request_id": request_id},
        )

    @app.not_found
    def _not_found(_: Exception) -> Response[str]:
        event = app.current_event
        return error_response(404, "route_not_found", f"no route for {event.http_method} {event.path}")

    return app


def current_user(app: APIGatewayHttpResolver, user_id: str) -> ScopeRef:
    """The caller's tenant and the path's user. The tenant never comes from the body."""
    if not is_valid_id(user_id):
        raise invalid([{"field": "user_id", "message": "must be 1-128 of A-Z a-z 0-9 . _ : @ -", "type": "pattern"}])
    tenant_id = current_tenant(app)
    logger.append_keys(user_id=user_id)
    authorize(app, "users", user_id)
    return ScopeRef(tenant_id=tenant_id, user_id=user_id)


def authorize(app: APIGatewayHttpResolver, scope_type: str, scope_id: str, field: str | None = None) -> None:
    """With end-user tokens, a token reaches its own user only, unless it holds the service scope. `field`: the
    request member that named the scope (default: the path's, user_id or scope_id)."""
    settings = get_settings()
    if _acts_for_any_user(app):
        return
    if scope_type == "users" and str(_claims(app).get(settings.user_claim, "")) == scope_id:
        return
    raise Forbidden(f"this token may not act for {scope_type.rstrip('s')} {scope_id!r}",
                    details=[{"field": field or ("user_id" if scope_type == "users" else "scope_id")}])


def authorize_tenant_write(app: APIGatewayHttpResolver, what: str) -> None:
    """A change every user of the tenant sees (`what`, e.g. "adding synonyms"): with end-user tokens, only a
    token holding the service scope may make it, as no single user owns it."""
    if _acts_for_any_user(app):
        return
    scope = get_settings().service_scope
    raise Forbidden(f"{what} changes the whole tenant: it needs a token whose scope claim holds {scope!r}",
                    details=[{"field": "scope", "message": f"must hold {scope}", "type": "missing_scope"}])


def may_act_for(app: APIGatewayHttpResolver, scope_type: str, scope_id: str) -> bool:
    """Whether the caller may act for the scope (as `authorize` decides), without refusing."""
    try:
        authorize(app, scope_type, scope_id)
    except Forbidden:
        return False
    return True


# The most of a token subject recorded with what it writes (a subject is an id, far shorter in practice).
MAX_SUBJECT_CHARS = 256


def token_subject(app: APIGatewayHttpResolver) -> str | None:
    """The token's subject (USER_CLAIM, `sub` by default), when the request carried a token with one; None
    without a token (no authorizer: the local stack, or auth off)."""
    subject = _claims(app).get(get_settings().user_claim)
    return str(subject)[:MAX_SUBJECT_CHARS] if subject else None


def _acts_for_any_user(app: APIGatewayHttpResolver) -> bool:
    """Service tokens (or no authorizer: the local stack) act for the whole tenant; an end-user token only when
    its space-separated `scope` claim holds the service scope."""
    settings = get_settings()
    if settings.token_kind != "end_user" or settings.tenant_source != "jwt":
        return True
    return settings.service_scope in str(_claims(app).get("scope", "")).split()


def provenance(app: APIGatewayHttpResolver, origin: Origin) -> Provenance:
    """What a write through this request records of how it came: `origin`, and the token's subject."""
    return Provenance(origin=origin, written_by=token_subject(app))


def _claims(app: APIGatewayHttpResolver) -> dict[str, Any]:
    authorizer = (app.current_event.get("requestContext") or {}).get("authorizer") or {}
    return dict((authorizer.get("jwt") or {}).get("claims") or {})


def current_scope(app: APIGatewayHttpResolver, scope_type: str, scope_id: str) -> ScopeRef:
    """A user or a project under the caller's tenant (routes `/v1/{scope_type}/{scope_id}/...`)."""
    if scope_type not in ("users", "projects"):
        raise NotFound(f"no such scope type {scope_type!r}: use users or projects")
    if not is_valid_id(scope_id):
        raise invalid([{"field": "scope_id", "message": "must be 1-128 of A-Z a-z 0-9 . _ : @ -", "type": "pattern"}])
    from agent_memory.domain.tiers.memory_layers import scope_ref

    logger.append_keys(scope_type=scope_type, scope_id=scope_id)
    tenant_id = current_tenant(app)
    authorize(app, scope_type, scope_id)
    return scope_ref(tenant_id, "users" if scope_type == "users" else "projects", scope_id)


def hot_memory_slot(memory_type: str, key: str) -> tuple[Any, str]:
    """A hot-memory entry's (type, key) from the path; the key arrives URL-encoded (it may be Chinese)."""
    from urllib.parse import unquote

    from agent_memory.domain.tiers.memory_layers import HOT_MEMORY_KEY_PATTERN, HotMemoryType

    try:
        type_ = HotMemoryType(memory_type)
    except ValueError:
        raise invalid([{"field": "type", "message": "must be one of meta, status, decision, preference",
                        "type": "enum"}]) from None
    name = unquote(key).strip()
    if not re.fullmatch(HOT_MEMORY_KEY_PATTERN, name):
        raise invalid([{"field": "key", "message": "must be 1-128 characters without '#', '/', control or "
                                                   "direction-changing characters", "type": "pattern"}])
    return type_, name


def current_tenant(app: APIGatewayHttpResolver) -> str:
    settings = get_settings()
    event = app.current_event
    if settings.tenant_source == "jwt":
        authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
        claims = (authorizer.get("jwt") or {}).get("claims") or {}
        tenant_id = str(claims.get(settings.tenant_claim, ""))
        if not is_valid_id(tenant_id):
            raise Unauthorized(f"the token carries no valid '{settings.tenant_claim}' claim")
    else:
        headers = {k.lower(): v for k, v in (event.headers or {}).items()}
        tenant_id = headers.get("x-tenant-id") or settings.default_tenant
        if "," in tenant_id:  # HTTP APIs join a repeated header with commas: which tenant was meant is unknown
            raise invalid([{"field": "X-Tenant-Id", "message": "must be sent once", "type": "duplicate"}])
        if not is_valid_id(tenant_id):
            raise invalid([{"field": "X-Tenant-Id", "message": "must be 1-128 of A-Z a-z 0-9 . _ : @ -",
                            "type": "pattern"}])
    logger.append_keys(tenant_id=tenant_id)
    return tenant_id


# The POST-only sub-resources of /memories: a GET of one lands on GET /memories/{memory_key}.
_POST_ONLY_UNDER_MEMORIES = frozenset({"search", "batch", "extract", "recall"})


def memory_key_param(memory_key: str) -> str:
    if not is_valid_memory_key(memory_key):
        message = (f"{memory_key!r} is no memory key: memories/{memory_key} takes POST"
                   if memory_key in _POST_ONLY_UNDER_MEMORIES else "not a memory key this API issued")
        raise invalid([{"field": "memory_key", "message": message, "type": "pattern"}])
    return memory_key


def id_param(name: str, value: str) -> str:
    """An id from the path (e.g. a conversation id): the same alphabet as user and tenant ids."""
    if not is_valid_id(value):
        raise invalid([{"field": name, "message": "must be 1-128 of A-Z a-z 0-9 . _ : @ -", "type": "pattern"}])
    return value


def _not_a_json_number(name: str) -> None:
    raise MalformedJson(f"body is not valid JSON: {name} is not a JSON number", details=[{"field": "body"}])


def _lone_surrogate_path(data: Any) -> str | None:
    """Where a string holds half of a UTF-16 pair ("\ud800"): such text cannot be stored or sent back."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str) and _SURROGATE.search(value):
            return path or "body"
        if isinstance(value, dict):
            stack += [(f"{path}.{k}" if path else str(k), v) for k, v in value.items()]
            if any(isinstance(k, str) and _SURROGATE.search(k) for k in value):
                return path or "body"
        elif isinstance(value, list):
            stack += [(f"{path}.{i}" if path else str(i), v) for i, v in enumerate(value)]
    return None


def _raw_body(app: APIGatewayHttpResolver, max_bytes: int) -> str:
    try:
        raw = app.current_event.decoded_body or ""
    except (UnicodeDecodeError, binascii.Error, ValueError) as error:
        raise MalformedJson("body is not valid UTF-8 text", details=[{"field": "body"}]) from error
    size = len(raw.encode("utf-8", errors="surrogatepass"))
    if size > max_bytes:
        raise PayloadTooLarge(f"body is {size} bytes; the limit is {max_bytes}", details=[{"field": "body"}])
    return raw


def parse_optional_body[M: BaseModel](app: APIGatewayHttpResolver, model: type[M]) -> M | None:
    """A body the route may go without: None when it is empty, else as `parse_body` reads it."""
    return parse_body(app, model) if _raw_body(app, MAX_BODY_BYTES).strip() else None


def parse_body[M: BaseModel](app: APIGatewayHttpResolver, model: type[M], *, max_bytes: int = MAX_BODY_BYTES,
                             checks: Mapping[str, MemberCheck] | None = None) -> M:
    """`checks` name top-level members checked as soon as each is read (who the body acts for): a refusal
    answers before the members after it are parsed or anything is validated."""
    raw = _raw_body(app, max_bytes)
    if not raw.strip():
        raise MalformedJson("a JSON object body is required", details=[{"field": "body"}])
    read: dict[str, Any] = {}  # the members read so far: how an error names a field
    app.context[_SENT] = read
    try:
        if checks:
            data = read_checking_members(raw, json.JSONDecoder(parse_constant=_not_a_json_number), checks, read)
        else:
            data = json.loads(raw, parse_constant=_not_a_json_number)
    except json.JSONDecodeError as error:
        raise MalformedJson(
            f"body is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})",
            details=[{"field": "body"}],
        ) from error
    except RecursionError as error:
        raise MalformedJson("body nests too deeply to read", details=[{"field": "body"}]) from error
    except ValueError as error:  # an integer of thousands of digits
        raise MalformedJson(f"body is not readable JSON: {error}", details=[{"field": "body"}]) from error
    if not isinstance(data, dict):
        raise invalid([{"field": "body", "message": "must be a JSON object", "type": "type"}])
    app.context[_SENT] = data
    broken = _lone_surrogate_path(data)
    if broken is not None:
        raise invalid([{"field": broken, "message": "holds an unpaired UTF-16 surrogate, which is not text",
                        "type": "string_unicode"}])
    return parse_model(model, data)


def parse_query[M: BaseModel](app: APIGatewayHttpResolver, model: type[M]) -> M:
    query = dict(app.current_event.query_string_parameters or {})
    app.context[_SENT] = query
    return parse_model(model, query)


def no_query(app: APIGatewayHttpResolver) -> None:
    """A route that takes no query parameters refuses them, as the others refuse unknown ones."""
    names = sorted(app.current_event.query_string_parameters or {})
    if names:
        raise invalid([{"field": name, "message": "this route takes no query parameters", "type": "extra_forbidden"}
                       for name in names])


def parse_model[M: BaseModel](model: type[M], data: dict[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise invalid(validation_details(error, sent=data)) from error


def http_handler(app: APIGatewayHttpResolver) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """The Lambda entry point for a resolver: logging, tracing, metrics, then the route."""

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
    @tracer.capture_lambda_handler(capture_response=False)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        response = app.resolve(event, context)
        # Every answer is what its Content-Type says: a browser never sniffs JSON into a page or a script.
        response["headers"] = {**(response.get("headers") or {}), "X-Content-Type-Options": "nosniff"}
        record_request_outcome(event.get("routeKey") or "unknown", int(response.get("statusCode", 500)))
        return response

    return handler


def warm_before_snapshot(warm: Callable[[], None]) -> None:
    """On Lambda with SnapStart, run `warm` before the snapshot is taken (heavy imports and model
    loads then cost nothing per cold start); elsewhere this registers nothing. The tracer is built there
    too: the X-Ray SDK's import and patching are then in the snapshot, not in the first invocation."""
    try:
        from snapshot_restore_py import register_before_snapshot
    except ImportError:  # not on Lambda
        return
    register_before_snapshot(tracer.warm)
    register_before_snapshot(warm)
