"""Test modules are leaves: fakes and helpers shared by several tests live in modules of their own (tests/fakes/,
tests/e2e/stack.py), so no test module is imported by another, nor by a benchmark or the client."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("tests", "benchmarks", "clients", "local", "layers", "functions", "shared")


def python_files() -> Iterator[Path]:
    for top in SOURCE_DIRS:
        for folder, dirs, files in os.walk(ROOT / top):  # symlinked folders (built artefacts) are not followed
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            yield from (Path(folder) / name for name in files if name.endswith(".py"))


def is_test_module(dotted: str) -> bool:
    return dotted.rsplit(".", 1)[-1].startswith("test_")


def imported_test_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if is_test_module(alias.name))
        elif isinstance(node, ast.ImportFrom) and node.module:
            if is_test_module(node.module):
                found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names if is_test_module(alias.name))
    return found


def test_no_module_imports_a_test_module():
    crossings = {str(path.relative_to(ROOT)): sorted(modules) for path in python_files()
                 if (modules := imported_test_modules(path))}
    assert crossings == {}


def test_the_rule_sees_every_form_of_importing_a_test_module(tmp_path):
    module = tmp_path / "helper.py"
    module.write_text("import tests.unit.test_a\nfrom tests.unit.test_b import thing\nfrom tests.e2e import test_c\n"
                      "from tests.fakes.store import InMemoryMemoryStore\n", encoding="utf-8")

    assert imported_test_modules(module) == {"tests.unit.test_a", "tests.unit.test_b", "tests.e2e.test_c"}
