"""What the API answers when what it depends on fails: the LLM down is a 503 with Retry-After and nothing stored,
an unexpected error a 500 with a request id and no details."""

from __future__ import annotations

import json

from agent_memory.bootstrap.services import build_services
from agent_memory.errors import LlmUnavailable
from agent_memory.ports import ConversationTurn
from agent_memory.settings import get_settings
from tests.fakes.api_calls import SELF_INTRODUCTION, memories_of

USER = "/v1/users/u-1001"


class _DownExtractor:
    def extract(self, turn: ConversationTurn):
        raise LlmUnavailable("the LLM is unavailable; nothing was stored, retry this turn")


class _BrokenStore:
    def __getattr__(self, name: str):
        def fail(*args: object, **kwargs: object):
            raise RuntimeError("disk on fire: secret detail")
        return fail


def test_llm_down_gives_503_with_retry_after_and_stores_nothing(api, monkeypatch, lambda_env):
    services = build_services(get_settings(), extractor=_DownExtractor(), dynamodb_client=lambda_env)
    monkeypatch.setattr("agent_memory.bootstrap.get_services", lambda: services)
    monkeypatch.setitem(api.functions.container("SaveFunction").__dict__, "get_services", lambda: services)

    response = api.call("POST", f"{USER}/memories/extract", {"user_message": SELF_INTRODUCTION})

    assert response.status == 503
    assert response.body["error"]["code"] == "llm_unavailable"
    assert response.headers["retry-after"] == "5"
    assert memories_of(api) == []


def test_unexpected_failure_is_a_500_with_request_id_and_no_details(api, monkeypatch, lambda_env):
    services = build_services(get_settings(), store=_BrokenStore())
    monkeypatch.setitem(api.functions.container("LoadFunction").__dict__, "get_services", lambda: services)

    response = api.call("GET", f"{USER}/memories")

    assert response.status == 500
    assert response.body["error"]["code"] == "internal_error"
    assert response.body["error"]["details"]["request_id"]
    assert "disk on fire" not in json.dumps(response.body)
