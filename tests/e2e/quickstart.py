"""The README's quickstart: its calls, verbatim but for the port and the user, run as shell commands, and what
their answers must say."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.e2e.stack import ROOT, Stack


def quickstart_calls(stack: Stack, user: str) -> list[str]:
    """The README's five calls, verbatim but for the port and the user, as five shell commands."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    script = readme.split("<!-- quickstart:begin -->", 1)[1].split("<!-- quickstart:end -->", 1)[0]
    script = script.split("```bash", 1)[1].rsplit("```", 1)[0].replace("localhost:3000", stack.url.removeprefix(
        "http://")).replace("/users/u1/", f"/users/{user}/").replace('"user_id":"u1"', f'"user_id":"{user}"')
    calls, current = [], ""
    for line in script.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        current += line + "\n"
        if line.rstrip().endswith("'"):  # a call's last line closes its JSON body
            calls.append(current)
            current = ""
    return calls


def run_calls(calls: list[str]) -> list[Any]:
    """Each call's JSON answer."""
    answers = []
    for call in calls:
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", call], capture_output=True, text=True, timeout=120,
                             check=True)
        answers.append(json.loads(run.stdout))
    return answers


def assert_quickstart_answers(answers: list[Any]) -> None:
    first, second, saved, found, injected = answers
    assert first["extracted_info"]["age"] == 32 and second["extracted_info"]["age"] == 33
    assert saved["outcome"] == "created"
    assert found["results"][0]["content_preview"] == "Prefers short answers by email"
    assert "user_memory" in injected["injected_contexts"] and "33" in injected["messages"][0]["content"]
