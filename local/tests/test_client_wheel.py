"""local.client_wheel's checks of what the client's sdist and wheel hold, on made-up archives (the build and the
throw-away venvs run in `make client-wheel`)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

from local.client_wheel import package_files, sdist_problems, wheel_problems

DIST = "agent-memory-serverless-client"
INFO = "agent_memory_serverless_client-0.1.0.dist-info"


def a_wheel(path: Path, *, leave_out: str = "", name: str = DIST) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for member in [*sorted(package_files()), f"{INFO}/licenses/LICENSE"]:
            if member != leave_out:
                archive.writestr(member, "")
        archive.writestr(f"{INFO}/METADATA", f"Metadata-Version: 2.4\nName: {name}\nVersion: 0.1.0\n")
    return path


def an_sdist(path: Path, *, leave_out: str = "") -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for member in [*sorted(package_files()), "LICENSE", "README.md", "pyproject.toml", "PKG-INFO"]:
            if member != leave_out:
                archive.addfile(tarfile.TarInfo(f"agent_memory_serverless_client-0.1.0/{member}"), io.BytesIO())
    return path


def test_a_complete_wheel_and_sdist_have_no_problems(tmp_path):
    assert wheel_problems(a_wheel(tmp_path / "w.whl"), DIST) == []
    assert sdist_problems(an_sdist(tmp_path / "s.tar.gz")) == []


def test_given_a_wheel_without_its_license_or_a_module_or_under_another_name_then_each_is_named(tmp_path):
    assert wheel_problems(a_wheel(tmp_path / "a.whl", leave_out=f"{INFO}/licenses/LICENSE"), DIST) == [
        "the wheel lacks its LICENSE"]
    assert wheel_problems(a_wheel(tmp_path / "b.whl", leave_out="agent_memory_client/py.typed"), DIST) == [
        "the wheel lacks agent_memory_client/py.typed"]
    assert wheel_problems(a_wheel(tmp_path / "c.whl", name="agent-memory-client"), DIST) == [
        "the wheel's distribution is 'agent-memory-client', not 'agent-memory-serverless-client'"]


def test_given_an_sdist_without_the_license_or_a_module_then_each_is_named(tmp_path):
    assert sdist_problems(an_sdist(tmp_path / "a.tar.gz", leave_out="LICENSE")) == ["the sdist lacks LICENSE"]
    assert sdist_problems(an_sdist(tmp_path / "b.tar.gz", leave_out="agent_memory_client/mcp_server.py")) == [
        "the sdist lacks agent_memory_client/mcp_server.py"]


def test_the_package_files_are_the_client_modules_and_its_type_marker():
    assert {"agent_memory_client/__init__.py", "agent_memory_client/mcp_server.py",
            "agent_memory_client/py.typed"} <= package_files()
    assert not any("__pycache__" in path for path in package_files())
