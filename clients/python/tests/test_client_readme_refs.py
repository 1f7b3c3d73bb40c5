"""The README sections the client's README and code name exist. (The README's Python examples run against the API
in tests/integration/test_client_readme.py.)"""

from __future__ import annotations

import re
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[1]
README = CLIENT / "README.md"
# `the README's "Retries"`, `(README: "Retries")`, `the "Retries" section`
SECTION_REFERENCE = re.compile(r"""README(?:'s|:)?\s+"([^"]+)"|"([^"]+)" section""")


def headings() -> set[str]:
    return {line.lstrip("#").strip() for line in README.read_text(encoding="utf-8").splitlines()
            if line.startswith("#")}


def test_every_readme_section_the_client_names_exists():
    texts = [README, *sorted((CLIENT / "agent_memory_client").glob("*.py"))]
    named = {(path.name, a or b) for path in texts
             for a, b in SECTION_REFERENCE.findall(path.read_text(encoding="utf-8"))}

    assert named, "no section reference found: the pattern no longer matches how the client writes them"
    assert {(name, section) for name, section in named if section not in headings()} == set()

