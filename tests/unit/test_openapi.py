"""The OpenAPI document against what serves it: the handlers' routes and models, and template.yaml."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from jsonschema.validators import Draft202012Validator

from agent_memory.api.openapi import openapi_document, openapi_json
from agent_memory.api.operations import OPERATIONS
from local.template import routes

ROOT = Path(__file__).resolve().parents[2]
# Served outside the document: the document itself, its page, the memory inspector's pages, and the catch-all that
# answers a JSON 404.
UNDOCUMENTED = {"GET /openapi.json", "GET /docs", "GET /docs/assets/{name}", "GET /ui", "GET /ui/{proxy+}",
                "ANY /{proxy+}"}


PARSERS = ("parse_body", "parse_optional_body", "parse_query")


def _parsed_models(handler: ast.FunctionDef) -> dict[str, str]:
    """parse_body(app, Model) and the like in a handler -> {"parse_body": "Model"}."""
    return {call.func.id: call.args[1].id for call in ast.walk(handler)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in PARSERS
            and len(call.args) > 1 and isinstance(call.args[1], ast.Name)}


def _route(decorator: ast.expr) -> str | None:
    """`@app.post("/v1/users/<user_id>/memories")` -> "POST /v1/users/{user_id}/memories"; a trailing `/.+` or `/.*`
    (the resolver's catch-all) is API Gateway's `/{proxy+}`."""
    if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) \
            and decorator.func.attr in ("get", "post", "put", "delete") and decorator.args:
        path = ast.literal_eval(decorator.args[0]).replace("<", "{").replace(">", "}")
        if path.endswith(("/.+", "/.*")):
            path = path[:-2] + "{proxy+}"
        return f"{decorator.func.attr.upper()} {path}"
    return None


def _handlers() -> dict[str, dict[str, object]]:
    """Each route a handler module registers -> its handler's name and the models it parses."""
    found: dict[str, dict[str, object]] = {}
    for module in sorted((ROOT / "functions").glob("*/*_handler.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            for route in filter(None, map(_route, node.decorator_list)):
                parsed = _parsed_models(node)
                body = parsed.get("parse_body") or parsed.get("parse_optional_body")
                found[route] = {"handler": node.name, "body": body, "query": parsed.get("parse_query"),
                                "body_required": "parse_optional_body" not in parsed if body else None}
    return found


def test_every_handler_route_is_documented_with_the_models_it_parses():
    documented = {f"{op.method} {op.path}": {"handler": op.operation_id,
                                             "body": op.body.__name__ if op.body else None,
                                             "query": op.query.__name__ if op.query else None,
                                             "body_required": op.body_required if op.body else None}
                  for op in OPERATIONS}
    handlers = {route: facts for route, facts in _handlers().items() if route not in UNDOCUMENTED}

    assert handlers == documented


def test_the_documented_routes_are_the_templates():
    deployed = {r.route_key for r in routes()} - UNDOCUMENTED

    assert deployed == {f"{op.method} {op.path}" for op in OPERATIONS}


def test_the_document_is_openapi_3_1_and_its_schemas_are_valid_json_schema():
    document = openapi_document()

    assert document["openapi"] == "3.1.0"
    for name, schema in document["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema), name
    refs = {ref for ref in _refs(document)}
    assert {ref.rsplit("/", 1)[1] for ref in refs} <= set(document["components"]["schemas"])


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


@pytest.mark.parametrize("op", [op for op in OPERATIONS if not op.public], ids=lambda op: op.operation_id)
def test_every_operation_has_request_response_and_error_schemas(op):
    spec = openapi_document()["paths"][op.path][op.method.lower()]

    assert str(op.status) in spec["responses"]
    assert {"400", "401", "403", "422", "429", "503"} <= set(spec["responses"])
    assert spec["responses"]["422"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorResponse"}
    assert ("requestBody" in spec) == (op.body is not None)
    assert spec["summary"] and spec["operationId"] == op.operation_id
    assert "security" not in spec and any(p["name"] == "X-Tenant-Id" for p in spec["parameters"])


def test_the_health_check_is_public_and_answers_its_verdict_on_503_and_its_parts_with_a_token():
    spec = openapi_document()["paths"]["/health"]["get"]
    verdict = {"$ref": "#/components/schemas/HealthStatus"}
    details = openapi_document()["paths"]["/v1/health"]["get"]

    assert spec["security"] == [] and spec["parameters"] == []
    assert {status: r["content"]["application/json"]["schema"] for status, r in spec["responses"].items()} == {
        "200": verdict, "503": verdict, "429": {"$ref": "#/components/schemas/ErrorResponse"}}
    assert "security" not in details or details["security"] != []
    assert details["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Health"}


def test_request_fields_are_documented_by_their_snake_case_names():
    schemas = openapi_document()["components"]["schemas"]

    assert {"memory_type", "content", "created_at"} <= set(schemas["CreateMemoryRequest"]["properties"])


def test_the_served_text_is_the_document_behind_a_named_stage():
    assert json.loads(openapi_json("/prod"))["servers"] == [{"url": "/prod"}]
