"""The layer's dependency rule, read from the imports themselves: domain imports only domain (never the API);
ports import only domain; adapters never import services (so a service can be built from any adapter); block
sources never import the inject service; services never import api (the HTTP wire contract lives in api, which
maps requests to service calls and service results to answers, never the other way)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "agent_memory"

# layer -> the agent_memory modules it may not import (by prefix)
FORBIDDEN = {
    "domain": ("agent_memory.ports", "agent_memory.services", "agent_memory.adapters", "agent_memory.bootstrap"),
    "ports": ("agent_memory.services", "agent_memory.adapters", "agent_memory.api", "agent_memory.bootstrap"),
    "adapters": ("agent_memory.services", "agent_memory.api", "agent_memory.bootstrap"),
    "extraction": ("agent_memory.services", "agent_memory.adapters", "agent_memory.api", "agent_memory.bootstrap"),
    "services": ("agent_memory.api", "agent_memory.bootstrap"),
}
# A file in the layer holds one job; past this many lines it is doing several.
MAX_LINES = 450


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def files_of(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_each_layer_imports_only_what_is_below_it(layer):
    crossings = [f"{path.relative_to(PACKAGE)} imports {module}"
                 for path in files_of(layer) for module in sorted(imported_modules(path))
                 if module.startswith(FORBIDDEN[layer])]
    assert crossings == []


def test_block_sources_never_import_the_inject_service_and_the_domain_never_imports_the_api():
    sources = sorted((PACKAGE / "services" / "blocks").glob("*.py"))
    assert sources and all("agent_memory.services.inject" not in imported_modules(p) for p in sources)
    domain = sorted((PACKAGE / "domain").rglob("*.py"))
    assert [p.name for p in domain if any(m.startswith("agent_memory.api") for m in imported_modules(p))] == []


def test_no_file_in_the_layer_grows_past_the_line_bound():
    too_long = {str(path.relative_to(PACKAGE)): n for path in sorted(PACKAGE.rglob("*.py"))
                if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert too_long == {}


# Comments, docstrings and names say what the code does: they never send a reader to a document the
# repo does not have. PRD is matched as written; the phrases in any case. "seeded", `seed_memories`
# and random seeds do not match.
OUTSIDE_DOCUMENTS = re.compile(r"\b(?:PRD|(?i:the seed|seed's|seeds?/|the guide|guide's))\b")
SOURCE_DIRS = ("shared", "functions", "local", "layers", "benchmarks", "clients/python/tests", "tests")


def test_no_source_file_points_to_documents_outside_the_repo():
    root, this = PACKAGE.parents[1], Path(__file__).resolve()
    offenders = [f"{path.relative_to(root)}:{number}: {line.strip()}"
                 for folder in SOURCE_DIRS for path in sorted((root / folder).rglob("*.py")) if path.resolve() != this
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                 if OUTSIDE_DOCUMENTS.search(line)]
    assert offenders == []
