"""The memory inspector's static-file routes in the docs function: a whitelist of assets with their content
types, index.html for every page route (deep links), a 404 for anything else, and no way to reach other files."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from local.runtime import LambdaContext

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "functions" / "docs"
EVENT = json.loads((ROOT / "events" / "docs-page.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def docs() -> Any:
    spec = importlib.util.spec_from_file_location("docs_app_under_test", DOCS / "docs_handler.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def get(docs: Any, path: str, *, stage: str = "$default") -> dict[str, Any]:
    """GET `path` as API Gateway sends it to the function (rawPath carries the stage's prefix)."""
    event = copy.deepcopy(EVENT)
    raw = path if stage == "$default" else f"/{stage}{path}"
    event.update(rawPath=raw, routeKey="GET /ui" if path == "/ui" else "GET /ui/{proxy+}",
                 pathParameters=None if path == "/ui" else {"proxy": path.removeprefix("/ui/")})
    event["requestContext"].update(stage=stage, routeKey=event["routeKey"])
    event["requestContext"]["http"]["path"] = raw
    return dict(docs.handler(event, LambdaContext(function_name="DocsFunction", timeout_ms=3000)))


def test_the_whitelist_is_exactly_the_files_beside_index_html(docs):
    on_disk = {p.name for p in (DOCS / "ui").iterdir() if p.is_file()} - {"index.html"}

    assert set(docs.UI_ASSETS) == on_disk


@pytest.mark.parametrize("name", sorted({p.name for p in (DOCS / "ui").iterdir()} - {"index.html"}))
def test_each_asset_is_served_with_its_content_type(docs, name):
    expected = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
                ".svg": "image/svg+xml"}[Path(name).suffix]

    response = get(docs, f"/ui/{name}")

    assert response["statusCode"] == 200
    assert response["headers"]["Content-Type"] == expected
    assert response["headers"]["X-Content-Type-Options"] == "nosniff"
    assert response["body"] == (DOCS / "ui" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("path", [
    "/ui", "/ui/", "/ui/users/u-1001", "/ui/users/u-1001/", "/ui/users/u-1001/search", "/ui/projects/p1/hot-memory",
    "/ui/users/a.b%40example.com", "/ui/users/%E5%BC%A0%E4%BC%9F/inject",
])
def test_every_page_route_answers_index_html_so_deep_links_work(docs, path):
    response = get(docs, path)

    assert response["statusCode"] == 200
    assert response["headers"]["Content-Type"] == "text/html; charset=utf-8"
    assert '<base href="/ui/">' in response["body"] and '<meta name="api-root" content="">' in response["body"]
    assert "script-src 'self'" in response["headers"]["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in response["headers"]["Content-Security-Policy"]


def test_behind_a_named_stage_the_page_links_its_assets_and_the_api_under_the_stage(docs):
    response = get(docs, "/ui/users/u-1001", stage="prod")

    assert response["statusCode"] == 200
    assert '<base href="/prod/ui/">' in response["body"]
    assert '<meta name="api-root" content="/prod">' in response["body"]


@pytest.mark.parametrize("path", [
    "/ui/missing.js", "/ui/index.html", "/ui/docs_handler.py", "/ui/inspector.css.map", "/ui/users",
    "/ui/users/u1/a/b",
    "/ui/groups/g1", "/ui/users/u1/Search",
])
def test_unknown_assets_and_paths_are_a_json_404(docs, path):
    response = get(docs, path)

    assert response["statusCode"] == 404
    assert json.loads(response["body"])["error"]["code"] == "not_found"


@pytest.mark.parametrize("path", [
    "/ui/../docs_handler.py", "/ui/..%2Fdocs_handler.py", "/ui/%2e%2e/docs_handler.py", "/ui/./docs_handler.py",
    "/ui//etc/passwd", "/ui/ui/../requirements.txt", "/ui/users/../../docs_handler.py", "/ui/..\\docs_handler.py",
    "/ui/%2e%2e%2fdocs_handler.py",
])
def test_no_path_reaches_a_file_outside_the_whitelist(docs, path):
    response = get(docs, path)

    assert response["statusCode"] == 404
    assert "http_handler" not in response["body"] and "root:" not in response["body"]


def test_an_encoded_traversal_in_an_id_is_only_an_id(docs):
    # "..%2F..%2Fdocs_handler.py" is a (strange) user id to the router: the page is served, no file is read by
    # that name.
    response = get(docs, "/ui/users/..%2F..%2Fdocs_handler.py")

    assert response["statusCode"] == 200
    assert response["body"] == get(docs, "/ui")["body"]


def test_the_docs_page_may_not_be_framed_and_loads_only_its_own_scripts(docs):
    event = copy.deepcopy(EVENT)
    event.update(rawPath="/docs", routeKey="GET /docs", pathParameters=None)
    event["requestContext"].update(routeKey="GET /docs")
    event["requestContext"]["http"]["path"] = "/docs"

    response = dict(docs.handler(event, LambdaContext(function_name="DocsFunction", timeout_ms=3000)))

    policy = response["headers"]["Content-Security-Policy"]
    assert response["statusCode"] == 200 and "swagger-ui" in response["body"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self';" in policy and "default-src 'self'" in policy
    assert response["headers"]["X-Frame-Options"] == "DENY"
    assert response["headers"]["X-Content-Type-Options"] == "nosniff"
