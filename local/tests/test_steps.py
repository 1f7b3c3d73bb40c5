"""`make run`'s step lines: `[ 12.3s] what`, counted from the start of `make run`, the same from the Makefile's
`step` (the set-up) and from local.stack (the start of each part)."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from local.steps import Steps, step_line

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"\[ *(\d+\.\d)s\] (.+)")


def test_a_step_line_is_the_elapsed_seconds_then_what():
    assert step_line(0.04, "starting DynamoDB Local") == "[  0.0s] starting DynamoDB Local"
    assert step_line(95.43, "API ready") == "[ 95.4s] API ready"
    assert step_line(1234.5, "slow") == "[1234.5s] slow"


def test_steps_count_from_the_given_start_and_print_one_line_each():
    out, now = io.StringIO(), [1000.0]
    step = Steps(1000.0 - 62.3, out=out, clock=lambda: now[0])

    step("fetching DynamoDB Local from npm")
    now[0] += 17.8
    step("starting DynamoDB Local")

    assert out.getvalue() == "[ 62.3s] fetching DynamoDB Local from npm\n[ 80.1s] starting DynamoDB Local\n"


def test_steps_without_a_start_count_from_their_creation():
    out = io.StringIO()
    Steps(out=out, clock=lambda: 50.0)("starting")

    assert out.getvalue() == "[  0.0s] starting\n"


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("awk") is None, reason="needs make and awk")
def test_the_makefiles_step_prints_the_same_line_from_the_same_clock():
    env = {**os.environ, "RUN_STARTED_AT": f"{time.time() - 62.3:.6f}"}
    done = subprocess.run(["make", "-s", "--no-print-directory", "--eval",
                           "_step: ; @$(call step,fetching DynamoDB Local from npm (first run only))", "_step"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True)

    found = LINE.fullmatch(done.stdout.strip())
    assert found is not None, done.stdout
    assert 62.3 <= float(found[1]) < 70
    assert done.stdout.strip() == step_line(float(found[1]), "fetching DynamoDB Local from npm (first run only)")
