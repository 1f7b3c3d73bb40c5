"""What holds for every test in the repository (tests/, and the tests beside the benchmarks, the client and the
build tools): none reaches AWS or Anthropic."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _offline_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach AWS: fake credentials, a fixed region, no endpoint from the developer's shell."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "ANTHROPIC_API_KEY", "LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
