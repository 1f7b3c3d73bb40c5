"""What importing the load and inject handlers leaves for later: the X-Ray SDK (built on the first
invocation), numpy and the services (imported by the first request or the SnapStart hook). How long the
import takes is make bench-scale's to measure; this only keeps the heavy modules out of it. And every handler
module is under mypy's strict flags, checked with the layer."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from fnmatch import fnmatch

import pytest

from benchmarks.scale import IMPORTS, lambda_environment
from local.template import ROOT, functions

DEFERRED = ("aws_xray_sdk.core", "numpy", "agent_memory.bootstrap", "agent_memory.services.search",
            "agent_memory.services.memory_layers", "botocore.client", "httpx")
# The module Lambda's runtime imports: the one _HANDLER names (`load_handler` of `load_handler.handler`).
PROBE = f"""
import importlib, os, sys
module = importlib.import_module(os.environ["_HANDLER"].rsplit(".", 1)[0])
assert callable(module.handler)
print(",".join(m for m in {DEFERRED!r} if m in sys.modules))
"""


@pytest.mark.parametrize("logical_id", sorted(IMPORTS.values()))
def test_importing_the_handler_in_lambdas_environment_leaves_the_heavy_modules_unimported(logical_id: str):
    env, task_root = lambda_environment(logical_id)

    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=task_root, capture_output=True, text=True,
                          timeout=120)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_every_handler_module_is_type_checked_strictly_with_the_layer():
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    checked = [ROOT / path for path in mypy["files"]]
    handlers = {function.module: function.handler_file for function in functions().values()}

    assert mypy["strict"] is True
    assert "functions" in mypy["files"]
    for module, path in handlers.items():
        assert any(path.is_relative_to(root) for root in checked), module
        assert not any(re.search(pattern, path.relative_to(ROOT).as_posix()) for pattern in mypy.get("exclude", []))
    # No override loosens a handler: strict is the only setting they get.
    overridden = {pattern for override in mypy.get("overrides", []) for pattern in _modules(override["module"])}
    assert not {module for module in handlers if any(fnmatch(module, pattern) for pattern in overridden)}


def _modules(module: str | list[str]) -> list[str]:
    return [module] if isinstance(module, str) else module
