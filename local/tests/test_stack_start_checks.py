"""What `make run` checks before it starts anything: the API's settings (a bad one is one line naming it and its
valid values) and the API's port (named when another server holds it)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from local.settings import LocalSettings
from local.stack import Stack, StackError


def stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> Stack:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Stack(LocalSettings(LOCAL_DATA_DIR=tmp_path))


def test_given_an_unknown_pack_then_the_start_stops_at_once_naming_the_setting_and_the_packs(tmp_path, monkeypatch):
    with pytest.raises(StackError) as refused:
        stack(tmp_path, monkeypatch, MEMORY_PACK="personal").check_settings()

    message = str(refused.value)
    assert "MEMORY_PACK" in message and "'personal'" in message and "general, immigration" in message
    assert "\n" not in message


def test_given_valid_settings_then_the_check_passes_and_leaves_the_environment_as_it_was(tmp_path, monkeypatch):
    checked = stack(tmp_path, monkeypatch, MEMORY_PACK="general")
    before = dict(__import__("os").environ)

    checked.check_settings()

    assert dict(__import__("os").environ) == before


def test_given_the_port_held_by_another_server_then_the_start_names_the_port(tmp_path, monkeypatch):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        started = stack(tmp_path, monkeypatch)
        started.port = port

        with pytest.raises(StackError, match=f"port {port} is in use"):
            started.check_port()
