"""The README and docs/: a short quickstart first, every setting and route documented, and nothing in them
or in the clients that points to documents outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from agent_memory.settings import Settings
from local.template import load_template, routes

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
# The clients' code and README are read by people who have only the client package.
CLIENT_TEXTS = sorted(path for path in (ROOT / "clients").rglob("*")
                      if path.suffix in {".md", ".py", ".toml"} and ".ruff_cache" not in path.parts)
# Words naming our own design documents, which readers of the repository do not have (spelled in pieces,
# so this file does not name them itself).
OUTSIDE = re.compile(r"\b(?:" + "|".join(["P" + "RD", "the se" + "ed", "se" + "ed's", "se" + "eds/", "the gu" + "ide",
                                          "gu" + "ide's"]) + r")\b", re.IGNORECASE)


def test_the_readme_reaches_docs_within_120_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    first_link = next(i for i, line in enumerate(lines, start=1) if "docs/" in line)

    assert first_link <= 120


def test_no_document_points_outside_the_repository():
    assert CLIENT_TEXTS, "the clients' files were not found"
    found = [f"{path.relative_to(ROOT)}:{n}: {match.group(0)}" for path in [ROOT / "README.md", *DOCS, *CLIENT_TEXTS]
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             for match in OUTSIDE.finditer(line)]

    assert found == []


def test_every_setting_is_documented():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")

    assert [name.upper() for name in Settings.model_fields if name.upper() not in text] == []


def test_every_template_parameter_is_documented():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")

    assert [name for name in load_template()["Parameters"] if f"`{name}`" not in text] == []


def _documented_form(path: str) -> set[str]:
    """How docs/api.md may write a route's path: as in the template, or with its scope spelled out."""
    scoped = path.replace("{scope_type}", "{users\\|projects}").replace("{scope_id}", "{id}")
    return {path, scoped, scoped.replace("{memory_type}", "{type}")}


def test_every_route_is_documented():
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    internal = {"ANY /{proxy+}", "GET /docs/assets/{name}", "GET /ui/{proxy+}"}

    missing = [r.route_key for r in routes() if r.route_key not in internal
               and not any(f"{r.method} {form}" in text for form in _documented_form(r.path))]

    assert missing == []


def test_every_doc_the_readme_links_exists():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")

    assert [link for link in re.findall(r"\]\((docs/[^)#]+)", readme) if not (ROOT / link).exists()] == []
