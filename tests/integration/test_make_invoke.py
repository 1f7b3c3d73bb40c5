"""`make invoke`: the function's result alone on stdout (pipeable to jq), its logs and metrics on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_result_is_the_only_thing_on_stdout():
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'shared'}:{ROOT}", "POWERTOOLS_LOG_LEVEL": "DEBUG"}
    run = subprocess.run([sys.executable, "-m", "local.invoke", "SaveFunction", "events/save-create-memory.json"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)

    assert json.loads(run.stdout)["statusCode"] == 201
    assert '"_aws"' in run.stderr  # the EMF metrics line, apart from the result
