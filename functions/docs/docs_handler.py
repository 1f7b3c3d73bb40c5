"""Docs function: the OpenAPI document, an offline Swagger UI page over it, and the memory inspector's static
pages. No auth, no user data: the inspector's pages call the API from the browser with the token entered in them."""

import html
import re
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

# The memory inspector: plain ES modules and one style sheet in ui/ beside this file. Only these names are served
# (a request never names a file on disk); every page route answers index.html, whose router draws the page.
UI_DIR = Path(__file__).resolve().parent / "ui"
_JS = "text/javascript; charset=utf-8"
UI_ASSETS = {
    "inspector.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
    "main.js": _JS, "api.js": _JS, "dom.js": _JS, "router.js": _JS, "settings.js": _JS, "scopes.js": _JS,
    "memories.js": _JS, "search.js": _JS, "hot-memory.js": _JS, "reports.js": _JS, "inject.js": _JS,
}
# "", "users/<id>", "projects/<id>/<tab>": the router's pages (ids percent-encoded as the browser sends them).
_UI_PAGE = re.compile(r"(?:(?:users|projects)/[A-Za-z0-9._:@%-]{1,400}(?:/[a-z-]{1,40})?/?)?")
# Scripts, styles and calls only from this origin; the page holds a token, so it may not be framed either.
_UI_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
}


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
def openapi() -> Response[str]:
    return Response(200, "application/json", openapi_json(_base_path() or "/"))


# The Swagger UI page loads only its own assets and calls only this origin, and may not be framed (clickjacking);
# its script sets inline styles, hence 'unsafe-inline' for styles only.
_DOCS_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "img-src 'self' data:; connect-src 'self'; base-uri 'self'; form-action 'self'; "
                               "frame-ancestors 'none'",
}


@app.get("/docs")
def docs() -> Response[str]:
    base = _base_path()
    page = docs_page(f"{base}/openapi.json", f"{base}/docs/assets")
    return Response(200, "text/html; charset=utf-8", page, headers=_DOCS_HEADERS)


@app.get("/docs/assets/<name>")
def asset(name: str) -> Response[str]:
    if name == "docs-init.js":
        return Response(200, "text/javascript; charset=utf-8", DOCS_INIT_JS, headers=_CACHED)
    if name not in _ASSETS:
        raise NotFound(f"no docs asset {name!r}")
    return Response(200, _ASSETS[name], (_assets_dir() / name).read_text(encoding="utf-8"), headers=_CACHED)


@app.get("/ui")
def inspector() -> Response[str]:
    return _inspector_page()


# `.*`: API Gateway's greedy `/ui/{proxy+}` also takes `/ui/` (an empty tail), the page's own address.
@app.get("/ui/.*")
def inspector_file() -> Response[str]:
    """A whitelisted asset, else index.html for a page route (deep links, and `/ui/` itself), else a 404."""
    name = app.current_event.path.removeprefix("/ui/")
    if name in UI_ASSETS:
        return Response(200, UI_ASSETS[name], (UI_DIR / name).read_text(encoding="utf-8"), headers=_UI_HEADERS)
    if _UI_PAGE.fullmatch(name):
        return _inspector_page()
    raise NotFound(f"no inspector page or asset {name!r}")


def _inspector_page() -> Response[str]:
    """index.html with the stage's prefix filled in: the page's <base> and the API's root."""
    page = (UI_DIR / "index.html").read_text(encoding="utf-8").replace("{{base}}", html.escape(_base_path()))
    return Response(200, "text/html; charset=utf-8", page, headers=_UI_HEADERS)


handler = http_handler(app)
