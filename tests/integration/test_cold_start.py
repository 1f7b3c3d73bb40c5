"""Functions that never call the LLM never import its SDK (it costs ~1.2 s of cold start)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("handler_under_test", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(sorted(m for m in ("anthropic", "httpx2", "opensearchpy") if m in sys.modules)))
"""


@pytest.mark.parametrize("function", ["load", "summarize", "inject", "rollup", "rollup_worker", "save"])
def test_importing_a_handler_does_not_import_the_llm_sdk(function):
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT / "functions" / function / f"{function}_handler.py")],
        capture_output=True, text=True, check=True, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "shared"), "PATH": "/usr/bin:/bin"},
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
