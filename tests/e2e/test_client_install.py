"""`pip install ./clients/python` in a fresh venv, then save and search against `make run`'s stack."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.stack import ROOT, Stack, running_stack

pytestmark = pytest.mark.e2e

SCRIPT = """
import sys
from agent_memory_client import MemoryClient
with MemoryClient(sys.argv[1], tenant_id="install-check") as memory:
    saved = memory.save("u-install", memory_type="FACT", content="用户35岁，在深圳做数据分析")
    hits = memory.search("u-install", "深圳数据分析")["results"]
    print(saved["outcome"], [h["memory_key"] for h in hits] == [saved["memory"]["memory_key"]])
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("install-stack")) as running:
        yield running


def test_the_client_installs_into_a_fresh_venv_and_saves_and_searches(stack, tmp_path: Path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(ROOT / "clients" / "python")],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr

    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed package, nothing else
    run = subprocess.run([str(venv / "bin" / "python"), "-c", SCRIPT, stack.url], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path, env=clean)

    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["created", "True"]
