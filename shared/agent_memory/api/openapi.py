"""The OpenAPI 3.1 document, built from the operation table and the pydantic models the handlers
validate with (pydantic's JSON Schema is 2020-12, which OpenAPI 3.1 uses as is)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from agent_memory.api.operations import OPERATIONS, Operation
from agent_memory.api.responses import ErrorResponse
from agent_memory.domain.keys import ID_PATTERN, MEMORY_KEY_PATTERN
from agent_memory.domain.lifecycle.erasure import ERASURE_ID_PATTERN
from agent_memory.domain.tiers.memory_layers import HOT_MEMORY_KEY_PATTERN

TITLE = "agent-memory"
VERSION = "1.0.0"
DESCRIPTION = (
    "Long-term memory for LLM agents: save and extract memories, search them, summarise a profile, and "
    "inject context into Anthropic Messages requests.\n\n"
    "Names are snake_case. Requests accept camelCase too (`memoryType` for `memory_type`); unknown fields are "
    "refused. Answers are snake_case except two names the memory manager's actions specify: extract's "
    "`saved_memories[].memoryType` (save_info) and load_context's `memories[].createdAt`. Field names that are "
    "data (a profile's `jobTitle`, a memory's `field` value, the keys of `extracted_info`) keep "
    "their own spelling. Every error answers `{error: {code, message, details}}`, `details[].field` naming a "
    "field as the request spelled it (a field it left out: in the convention of the fields beside it, "
    "snake_case when in doubt); 429 and 503 carry `Retry-After`."
)

_ID = {"type": "string", "pattern": ID_PATTERN, "maxLength": 128}
_PATH_PARAMETERS: dict[str, tuple[dict[str, Any], str]] = {
    "user_id": (_ID, "the user"),
    "scope_type": ({"type": "string", "enum": ["users", "projects"]}, "a user's or a project's memory"),
    "scope_id": (_ID, "the user or project id"),
    "memory_key": ({"type": "string", "pattern": MEMORY_KEY_PATTERN}, "a key this API issued"),
    "memory_type": ({"type": "string", "enum": ["meta", "status", "decision", "preference"]},
                    "the hot-memory section"),
    "key": ({"type": "string", "pattern": HOT_MEMORY_KEY_PATTERN},
            "the entry's name, URL-encoded (it may be Chinese)"),
    "conversation_id": (_ID, "the conversation"),
    "erasure_id": ({"type": "string", "pattern": ERASURE_ID_PATTERN}, "an erasure id DELETE answered"),
}
_ERRORS = {
    "400": "malformed JSON or a malformed request",
    "401": "no valid token (or tenant claim)",
    "403": "the token may not act for this user or project, or change the whole tenant",
    "404": "no such memory or route",
    "409": "concurrent writers: retry",
    "413": "the body is over the size limit",
    "422": "a field is invalid: `details` names each one",
    "429": "throttled: retry after `Retry-After` seconds",
    "503": "a dependency (LLM, embedder, search index) is unavailable: retry after `Retry-After` seconds",
}
# A public operation reads nothing of anyone's: only API Gateway's throttling can refuse it.
_PUBLIC_ERRORS = ("429",)
_PATH_PARAMETER = re.compile(r"{(\w+)}")


# (model, "validation" | "serialization") -> its {"$ref": ...}
_Refs = dict[tuple[Any, str], dict[str, Any]]


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _schemas(operations: Iterable[Operation]) -> tuple[_Refs, dict[str, Any]]:
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = [(ErrorResponse, "serialization")]
    for op in operations:
        models.append((op.response, "serialization"))
        models += [(model, "validation") for model in (op.body, op.query) if model is not None]
    unique = list(dict.fromkeys(models))
    refs, definitions = models_json_schema(unique, by_alias=False, ref_template="#/components/schemas/{model}")
    return {(model, str(mode)): schema for (model, mode), schema in refs.items()}, definitions.get("$defs", {})


def _query_parameters(model: type[BaseModel], definitions: dict[str, Any]) -> list[dict[str, Any]]:
    schema = definitions[model.__name__]
    required = set(schema.get("required", ()))
    return [{"name": name, "in": "query", "required": name in required, "schema": prop}
            for name, prop in schema.get("properties", {}).items()]


def _operation(op: Operation, refs: _Refs, definitions: dict[str, Any]
               ) -> dict[str, Any]:
    parameters = [{"name": name, "in": "path", "required": True, "description": _PATH_PARAMETERS[name][1],
                   "schema": _PATH_PARAMETERS[name][0]} for name in _PATH_PARAMETER.findall(op.path)]
    if not op.public:
        parameters.append({"name": "X-Tenant-Id", "in": "header", "required": False, "schema": _ID,
                           "description": "the tenant, where the deployment takes it from a header (locally); "
                                          "with JWT auth the token's claim decides and this is ignored"})
    if op.query is not None:
        parameters += _query_parameters(op.query, definitions)
    body = _json(refs[(op.response, "serialization")])
    responses: dict[str, Any] = {str(status): {"description": "OK" if status < 300 else "a part is down: the body "
                                                              "names it", "content": body}
                                 for status in (op.status, *op.also)}
    error = {"content": _json(refs[(ErrorResponse, "serialization")])}
    responses |= {status: {"description": text, **error} for status, text in _ERRORS.items()
                  if status not in responses and (not op.public or status in _PUBLIC_ERRORS)}
    spec: dict[str, Any] = {"operationId": op.operation_id, "tags": [op.tag], "summary": op.summary,
                            "parameters": parameters, "responses": responses}
    if op.public:
        spec["security"] = []
    if op.body is not None:
        spec["requestBody"] = {"required": op.body_required, "content": _json(refs[(op.body, "validation")])}
    return spec


@cache
def openapi_json(server_url: str = "/") -> str:
    return json.dumps(openapi_document(server_url), ensure_ascii=False)


def openapi_document(server_url: str = "/") -> dict[str, Any]:
    refs, definitions = _schemas(OPERATIONS)
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, refs, definitions)
    return {
        "openapi": "3.1.0",
        "info": {"title": TITLE, "version": VERSION, "description": DESCRIPTION},
        "servers": [{"url": server_url}],
        "tags": [{"name": tag} for tag in dict.fromkeys(op.tag for op in OPERATIONS)],
        "paths": paths,
        "components": {
            "schemas": definitions,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        },
        "security": [{"bearer": []}, {}],
    }


def docs_page(spec_url: str, assets_url: str) -> str:
    """Swagger UI over the document, from assets this deployment serves itself (no CDN)."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{TITLE} API</title>
<link rel="stylesheet" href="{assets_url}/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="{assets_url}/swagger-ui-bundle.js"></script>
<script src="{assets_url}/docs-init.js" data-spec="{spec_url}"></script>
</body></html>"""


DOCS_INIT_JS = """const spec = document.currentScript.dataset.spec;
window.ui = SwaggerUIBundle({url: spec, dom_id: "#swagger-ui", deepLinking: true});
"""
