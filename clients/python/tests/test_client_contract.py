"""The Python client's types against the server's OpenAPI document (what GET /openapi.json serves). For every
route the client calls: the body or query fields it can send (their names, that it always sends what the
operation requires, their basic JSON types, nested shapes included) match the operation's request schema, and
the TypedDict it reads the answer into (names, required keys, basic JSON types, nested TypedDicts) matches
the response schema. A field added, dropped or renamed on either side fails here.

Required keys of an answer: the client may count on a key only where the server always writes it (every
property of the model: answers are written whole, nulls included), and must count on every key the schema
requires."""

from __future__ import annotations

import inspect
import json
import re
import types
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from agent_memory.api.openapi import openapi_json
from agent_memory_client import _routes
from agent_memory_client._http import Call

# The inject request is caller-defined (a dict the caller builds from the InjectionRequest schema) and the memory
# tool's is the model's own tool input: the client sends them as given, so only their answers are compared.
PASSED_THROUGH = {"inject", "memory_tool"}
# Request fields the client never sends: the legacy action names a body may carry (`{"action": "save_info"}`), and
# the cache_control the Messages API puts on a tool_use block (the server accepts and ignores it).
NOT_SENT = {"action", "cache_control"}
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


@cache
def document() -> dict[str, Any]:
    return dict(json.loads(openapi_json()))


def resolved(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def alternatives(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema's cases: each member of an anyOf or oneOf, references resolved."""
    schema = resolved(schema)
    cases = schema.get("anyOf") or schema.get("oneOf")
    return [case for member in cases for case in alternatives(member)] if cases else [schema]


def schema_types(schema: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for case in alternatives(schema):
        kind = case.get("type")
        if kind is None and "const" in case:
            kind = JSON_TYPES[type(case["const"])]
        if kind is None:
            return {"any"}  # unconstrained: any JSON value
        found.update(kind if isinstance(kind, list) else [kind])
    return found


def object_case(schema: dict[str, Any]) -> dict[str, Any] | None:
    return next((case for case in alternatives(schema) if case.get("type") == "object"), None)


def array_case(schema: dict[str, Any]) -> dict[str, Any] | None:
    return next((case for case in alternatives(schema) if case.get("type") == "array"), None)


# ---- the client's side: types and sample values ----------------------------------------------------------

def members(tp: Any) -> list[Any]:
    return list(get_args(tp)) if get_origin(tp) in (Union, types.UnionType) else [tp]


def client_types(tp: Any) -> set[str]:
    """The JSON types an annotation of the client's allows (`any` for Any)."""
    found: set[str] = set()
    for member in members(tp):
        origin = get_origin(member) or member
        if member is Any:
            return {"any"}
        if origin is Literal:
            found.update(JSON_TYPES[type(value)] for value in get_args(member))
        elif is_typeddict(member) or origin in (dict, Mapping):
            found.add("object")
        elif origin in (list, tuple, Sequence):
            found.add("array")
        elif member is datetime:
            found.add("string")
        else:
            found.add(JSON_TYPES[member])
    return found


def sample(tp: Any, full: bool) -> Any:
    """A value of the annotation: its first non-None case; a TypedDict with all its keys (`full`) or only the
    required ones."""
    tp = next(member for member in members(tp) if member is not type(None))
    origin = get_origin(tp) or tp
    if is_typeddict(tp):
        hints = get_type_hints(tp)
        keys = hints if full else tp.__required_keys__
        return {key: sample(hints[key], full) for key in keys}
    if origin is Literal:
        return get_args(tp)[0]
    if origin in (list, Sequence):
        return [sample(get_args(tp)[0], full)]
    if origin is tuple:
        return tuple(sample(arg, full) for arg in get_args(tp))
    if origin in (dict, Mapping):
        return {"k": "v"}
    return {str: "x-1", int: 1, float: 0.5, bool: True, datetime: datetime(2026, 1, 1)}.get(tp, "x-1")


def value_types(value: Any) -> set[str]:
    if isinstance(value, Mapping):
        return {"object"}
    if isinstance(value, list | tuple):
        return {"array"}
    return {"string"} if isinstance(value, datetime) else {JSON_TYPES[type(value)]}


# ---- the routes --------------------------------------------------------------------------------------------

def routes() -> dict[str, Any]:
    return {name: function for name, function in inspect.getmembers(_routes, inspect.isfunction)
            if get_origin(get_type_hints(function).get("return")) is Call}


def called(function: Any, full: bool) -> Call[Any]:
    hints = get_type_hints(function)
    parameters = inspect.signature(function).parameters.values()
    arguments = {p.name: sample(hints[p.name], full) for p in parameters
                 if p.kind is not p.VAR_KEYWORD and (full or p.default is p.empty)}
    positional = [arguments.pop(p.name) for p in parameters if p.kind is p.POSITIONAL_ONLY and p.name in arguments]
    call: Call[Any] = function(*positional, **arguments)
    return call


def operation(call: Call[Any]) -> dict[str, Any]:
    path = call.path.split("?", 1)[0]
    for template, methods in document()["paths"].items():
        if re.fullmatch(re.sub(r"\{\w+\}", "[^/]+", template), path) and call.method.lower() in methods:
            return dict(methods[call.method.lower()])
    raise AssertionError(f"{call.method} {path} is not an operation of the OpenAPI document")


def answer_schema(op: dict[str, Any]) -> dict[str, Any]:
    status = min(code for code in op["responses"] if code.startswith("2"))
    return dict(op["responses"][status]["content"]["application/json"]["schema"])


# ---- the comparisons -------------------------------------------------------------------------------------

def sent_mismatches(value: Any, schema: dict[str, Any], where: str, full: bool) -> list[str]:
    """How a value the client sends (all of its fields, or only those it must send) departs from the schema."""
    allowed = schema_types(schema)
    if "any" not in allowed and not value_types(value) <= allowed:
        return [f"{where}: the client sends {sorted(value_types(value))}, the schema takes {sorted(allowed)}"]
    found: list[str] = []
    shape = object_case(schema)
    if isinstance(value, Mapping) and shape is not None and "properties" in shape:
        properties = shape["properties"]
        names, wanted = set(value), set(properties) - NOT_SENT
        if full and names != wanted:
            found.append(f"{where}: the client sends {sorted(names - wanted)} the schema lacks, "
                         f"and not {sorted(wanted - names)}")
        missing = set(shape.get("required", ())) - names
        if missing:
            found.append(f"{where}: the client can leave out {sorted(missing)}, which the schema requires")
        found += [problem for name in names & set(properties)
                  for problem in sent_mismatches(value[name], properties[name], f"{where}.{name}", full)]
    items = array_case(schema)
    if isinstance(value, list | tuple) and items is not None and "items" in items:
        found += [problem for item in value for problem in sent_mismatches(item, items["items"], f"{where}[]", full)]
    return found


def read_mismatches(tp: Any, schema: dict[str, Any], where: str) -> list[str]:
    """How an answer type of the client's departs from the schema of what the server writes."""
    wanted, allowed = client_types(tp), schema_types(schema)
    if "any" not in wanted | allowed and wanted != allowed:
        return [f"{where}: the client reads {sorted(wanted)}, the server writes {sorted(allowed)}"]
    found: list[str] = []
    typed = next((member for member in members(tp) if is_typeddict(member)), None)
    shape = object_case(schema)
    if typed is not None and shape is not None and "properties" in shape:
        hints, properties = get_type_hints(typed), shape["properties"]
        if set(hints) != set(properties):
            found.append(f"{where}: the client reads {sorted(set(hints) - set(properties))} the server does not "
                         f"write, and not {sorted(set(properties) - set(hints))}")
        optional = set(shape.get("required", ())) - typed.__required_keys__
        if optional:
            found.append(f"{where}: the client treats {sorted(optional)} as optional; the schema requires them")
        found += [problem for name in set(hints) & set(properties)
                  for problem in read_mismatches(hints[name], properties[name], f"{where}.{name}")]
    listed = next((member for member in members(tp) if get_origin(member) in (list, Sequence)), None)
    items = array_case(schema)
    if listed is not None and items is not None and "items" in items:
        found += read_mismatches(get_args(listed)[0], items["items"], f"{where}[]")
    return found


def request_mismatches(name: str) -> list[str]:
    function = routes()[name]
    full, minimal = called(function, full=True), called(function, full=False)
    op = operation(full)
    found: list[str] = []
    if full.params or op.get("parameters"):
        query = {p["name"]: p for p in op["parameters"] if p["in"] == "query"}
        if set(full.params) != set(query):
            found.append(f"{name} query: the client sends {sorted(full.params)}, the operation takes {sorted(query)}")
        missing = {n for n, p in query.items() if p["required"]} - set(minimal.params)
        if missing:
            found.append(f"{name} query: the client can leave out {sorted(missing)}, which the operation requires")
        hints = get_type_hints(function)
        found += [f"{name} query {n}: the client sends {sorted(client_types(hints[n]) - {'null'})}, the operation "
                  f"takes {sorted(schema_types(query[n]['schema']))}" for n in set(full.params) & set(query)
                  if not client_types(hints[n]) - {"null"} <= schema_types(query[n]["schema"])]
    body = op.get("requestBody")
    if body is None:
        return found + ([f"{name}: the client sends a body the operation does not take"] if full.body else [])
    schema = body["content"]["application/json"]["schema"]
    if full.body is None:
        return found + ([f"{name}: the client sends no body; the operation requires one"] if body["required"] else [])
    return found + sent_mismatches(full.body, schema, f"{name} body", full=True) \
        + sent_mismatches(minimal.body, schema, f"{name} body", full=False)


def answer_mismatches(name: str) -> list[str]:
    function = routes()[name]
    answer = get_args(get_type_hints(function)["return"])[0]
    return read_mismatches(answer, answer_schema(operation(called(function, full=False))), f"{name} answer")


ROUTES = sorted(routes())


def test_the_client_calls_every_documented_operation():
    called_operations = {operation(called(routes()[name], full=False))["operationId"] for name in ROUTES}
    documented = {op["operationId"] for methods in document()["paths"].values() for op in methods.values()}
    assert documented - called_operations == set()


@pytest.mark.parametrize("name", sorted(set(ROUTES) - PASSED_THROUGH))
def test_what_the_client_sends_matches_the_operations_request_schema(name):
    assert request_mismatches(name) == []


@pytest.mark.parametrize("name", ROUTES)
def test_the_type_the_client_reads_an_answer_into_matches_the_response_schema(name):
    assert answer_mismatches(name) == []
