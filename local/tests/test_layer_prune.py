"""local.layer_prune on a made-up installed layer: what it drops, what it compiles, and that what it leaves imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from local.layer_prune import main


def write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "python"
    write(site / "plain" / "__init__.py", "from plain.core import answer\n")
    write(site / "plain" / "core.py", "def answer():\n    return 42\n")
    write(site / "plain" / "core.pyi", "def answer() -> int: ...\n")
    write(site / "plain" / "tests" / "test_core.py", "def test(): pass\n")
    write(site / "plain" / "__pycache__" / "core.cpython-312.pyc", "stale")
    write(site / "plain" / "_speedups.c", "int x;\n")
    write(site / "plain-1.0.dist-info" / "RECORD", "plain/__init__.py,,\n")
    write(site / "lazy" / "__init__.py", "import inspect, sys\nSOURCE = inspect.getsource(sys.modules[__name__])\n")
    write(site / "single.py", "VALUE = 'one file'\n")
    write(site / "ours" / "__init__.py", "def boom():\n    raise RuntimeError('with its line')\n")
    write(site / "broken" / "__init__.py", "")
    write(site / "broken" / "py2_template.py", "print 'not python 3'\n")
    write(site / "sdk" / "__init__.py", "")
    write(site / "sdk-1.0.dist-info" / "METADATA", "")
    write(site / "model" / "big.bin", "x" * 1000)
    write(site / "model" / "used.bin", "x")
    write(site / "bin" / "console-script", "#!/usr/bin/python\n")
    return site


def run(site: Path, *args: str) -> int:
    return main([str(site), "--keep-source", "ours", *args])


def test_given_a_layer_when_pruned_then_tests_stubs_sources_scripts_and_caches_are_gone(site):
    assert run(site) == 0

    assert not (site / "plain" / "tests").exists()
    assert not (site / "plain" / "core.pyi").exists()
    assert not (site / "plain" / "_speedups.c").exists()
    assert not (site / "bin").exists()
    assert (site / "plain-1.0.dist-info" / "RECORD").exists()  # metadata stays: entry points, versions


def test_given_the_drop_globs_when_pruned_then_they_are_removed_and_a_glob_matching_nothing_is_said(site, capsys):
    assert run(site, "--drop", "sdk", "--drop", "sdk-*.dist-info", "--drop", "model/big.bin", "--drop", "nothing*") == 0

    assert not (site / "sdk").exists() and not (site / "sdk-1.0.dist-info").exists()
    assert not (site / "model" / "big.bin").exists() and (site / "model" / "used.bin").exists()
    out = capsys.readouterr().out
    assert "dropped nothing*: nothing matched" in out


def test_given_a_required_file_that_a_drop_removed_when_pruned_then_it_fails(site, capsys):
    assert run(site, "--drop", "model/*.bin", "--require", "model/used.bin") == 1
    assert "required but missing: model/used.bin" in capsys.readouterr().err


def test_given_packages_when_compiled_then_only_ours_and_source_readers_keep_their_py(site, capsys):
    assert run(site) == 0

    # sourceless: the .pyc beside where the .py was
    assert (site / "plain" / "core.pyc").exists() and not (site / "plain" / "core.py").exists()
    assert (site / "single.pyc").exists() and not (site / "single.py").exists()
    assert not (site / "plain" / "__pycache__").exists()  # the stale cache went with the junk
    # kept: the .py with an unchecked-hash .pyc in __pycache__
    for kept in ("ours", "lazy"):
        assert (site / kept / "__init__.py").exists()
        pyc = site / kept / "__pycache__" / "__init__.cpython-312.pyc"
        assert int.from_bytes(pyc.read_bytes()[4:8], "little") == 0b01  # hash-based, check_source off
    # a file Python 3 cannot compile keeps its .py, and is named
    assert (site / "broken" / "py2_template.py").exists()
    out = capsys.readouterr().out
    assert "kept for lazy, ours" in out and "broken/py2_template.py" in out


def test_given_a_pruned_layer_when_imported_then_sourceless_and_sourced_modules_work(site):
    assert run(site) == 0

    script = ("import plain, single, lazy, ours, traceback\n"
              "assert plain.answer() == 42 and single.VALUE == 'one file' and 'getsource' in lazy.SOURCE\n"
              "try:\n    ours.boom()\nexcept RuntimeError:\n    print(traceback.format_exc())\n")
    result = subprocess.run([sys.executable, "-B", "-S", "-c", script], cwd=site, capture_output=True, text=True,
                            check=True, env={"PATH": "/usr/bin:/bin"})
    assert "raise RuntimeError('with its line')" in result.stdout  # our tracebacks keep their source lines
