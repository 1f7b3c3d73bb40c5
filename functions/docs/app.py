"""Docs function: the OpenAPI document and an offline Swagger UI page over it. No auth, no user data."""

from importlib.util import find_spec
from pathlib import Path

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.http import http_handler, new_resolver
from agent_memory.api.openapi import DOCS_INIT_JS, docs_page, openapi_json
from agent_memory.errors import NotFound

app = new_resolver()

# The assets the page loads, from the swagger-ui-py wheel's files (finding the package does not run it).
_ASSETS = {"swagger-ui.css": "text/css; charset=utf-8", "swagger-ui-bundle.js": "text/javascript; charset=utf-8"}
_CACHED = {"Cache-Control": "public, max-age=86400"}


def _base_path() -> str:
    """The stage's prefix in the URL ('' for the $default stage), so links work behind a named stage."""
    stage = str((app.current_event.get("requestContext") or {}).get("stage") or "$default")
    return "" if stage == "$default" else f"/{stage}"


def _assets_dir() -> Path:
    spec = find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise NotFound("the docs page's assets are not installed (swagger-ui-py)")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


@app.get("/openapi.json")
def openapi() -> Response:
    return Response(200, "application/json", openapi_json(_base_path() or "/"))


@app.get("/docs")
def docs() -> Response:
    base = _base_path()
    return Response(200, "text/html; charset=utf-8", docs_page(f"{base}/openapi.json", f"{base}/docs/assets"))


@app.get("/docs/assets/<name>")
def asset(name: str) -> Response:
    if name == "docs-init.js":
        return Response(200, "text/javascript; charset=utf-8", DOCS_INIT_JS, headers=_CACHED)
    if name not in _ASSETS:
        raise NotFound(f"no docs asset {name!r}")
    return Response(200, _ASSETS[name], (_assets_dir() / name).read_text(encoding="utf-8"), headers=_CACHED)


handler = http_handler(app)
