"""Helpers for the inject service's tests: a fixed clock, requests, the injected context's text and memory
layers with nothing in them."""

from __future__ import annotations

from typing import Any

from agent_memory.api.inject_models import InjectionRequest
from agent_memory.domain.models import ScopeRef

NOW = 1_795_309_200.0  # 2026-11-22T01:00:00Z


def request(**fields: Any) -> InjectionRequest:
    fields.setdefault("user_id", "u")
    fields.setdefault("conversation_id", "c-1")
    return InjectionRequest.model_validate(fields)


def context_text(result: Any) -> str:
    return result.messages[0]["content"] if result.injected_contexts else ""


class NoHistory:
    """The memory layers with nothing logged and no reports."""

    def context_for_prompt(self, scope: ScopeRef, request: Any, *, hot_memory: bool = True) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(parts=[])
