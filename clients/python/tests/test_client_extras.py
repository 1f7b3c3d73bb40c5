"""The client's optional parts without their extras: importing the MCP server or the memory tool names the extra and
the pip command that installs it (the SDK's modules are hidden from the import system; nothing is uninstalled)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT_ROOT = Path(__file__).resolve().parents[1]


def hide(monkeypatch: pytest.MonkeyPatch, *packages: str) -> None:
    """Imports of these packages (and of any module under them) fail as if they were not installed."""
    for name in [n for n in list(sys.modules) if n.split(".")[0] in packages] + list(packages):
        monkeypatch.setitem(sys.modules, name, None)


def fresh_import(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.delitem(sys.modules, module, raising=False)
    importlib.import_module(module)


def test_given_no_mcp_extra_then_importing_the_mcp_server_names_the_extra_to_install(monkeypatch):
    hide(monkeypatch, "mcp", "mcp_types")

    with pytest.raises(ModuleNotFoundError) as raised:
        fresh_import(monkeypatch, "agent_memory_client.mcp_server")

    assert str(raised.value).startswith(
        "the MCP server needs the mcp extra: pip install 'agent-memory-serverless-client[mcp]'")


def test_given_no_mcp_extra_then_running_the_mcp_server_prints_the_extra_and_exits_1_without_a_traceback():
    hidden = ("import runpy, sys; sys.modules['mcp'] = sys.modules['mcp_types'] = None; "
              "runpy.run_module('agent_memory_client.mcp_server', run_name='__main__')")
    env = {**os.environ, "PYTHONPATH": str(CLIENT_ROOT)}

    run = subprocess.run([sys.executable, "-c", hidden, "--user", "u-1"], capture_output=True, text=True,
                         timeout=60, env=env)

    assert run.returncode == 1
    assert run.stderr.startswith(
        "the MCP server needs the mcp extra: pip install 'agent-memory-serverless-client[mcp]'")
    assert "Traceback" not in run.stderr


def test_given_no_anthropic_extra_then_importing_the_memory_tool_names_the_extra_to_install(monkeypatch):
    hide(monkeypatch, "anthropic")

    with pytest.raises(ModuleNotFoundError) as raised:
        fresh_import(monkeypatch, "agent_memory_client.memory_tool")

    assert str(raised.value).startswith(
        "the memory tool needs the anthropic extra: pip install 'agent-memory-serverless-client[anthropic]'")


def test_with_the_extras_installed_both_modules_import(monkeypatch):
    fresh_import(monkeypatch, "agent_memory_client.mcp_server")
    fresh_import(monkeypatch, "agent_memory_client.memory_tool")
