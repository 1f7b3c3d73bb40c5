"""The Claude path, through the real anthropic SDK over a mock HTTP transport (no network)."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import pytest

from agent_memory.adapters.llm import build_extractor
from agent_memory.adapters.llm.claude import SAVE_USER_MEMORY_TOOL
from agent_memory.domain.models import MemoryType
from agent_memory.errors import LlmUnavailable
from agent_memory.ports import ConversationTurn
from agent_memory.settings import Settings
from tests.fakes.claude import Recorder, overloaded

TURN = ConversationTurn(
    user_message="我今年32岁，浙大计算机硕士毕业的，现在在杭州做前端开发",
    assistant_message="感谢您分享这些信息!",
    existing_info={"currentLocation": "杭州"},
)


def message_response(*tool_inputs: dict, text: str | None = None) -> dict:
    content = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{i:02d}", "name": "save_user_memory", "input": tool_input}
        for i, tool_input in enumerate(tool_inputs)
    ]
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": content,
        "stop_reason": "tool_use" if tool_inputs else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 812, "output_tokens": 164, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 760},
    }


def extractor_with(handler: Callable, **settings: object):
    config = Settings(**{"llm_provider": "anthropic", "anthropic_api_key": "sk-ant-test", "llm_max_retries": 2,
                         **settings})
    return build_extractor(config, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def test_given_tool_calls_then_each_becomes_a_memory_in_the_users_language():
    recorder = Recorder([httpx2.Response(200, json=message_response(
        {"memoryType": "FACT", "content": "用户32岁", "field": "age", "value": 32},
        {"memoryType": "FACT", "content": "浙江大学计算机硕士毕业", "field": "education", "value": "硕士"},
        {"memoryType": "INTENT", "content": "对高才通B类非常感兴趣", "category": "TTPS", "field": "targetCategory"},
        text="好的,我来保存这些信息。",
    ))])

    memories = extractor_with(recorder).extract(TURN)

    assert [(m.memory_type, m.content, m.field, m.value) for m in memories] == [
        (MemoryType.FACT, "用户32岁", "age", 32),
        (MemoryType.FACT, "浙江大学计算机硕士毕业", "education", "硕士"),
        (MemoryType.INTENT, "对高才通B类非常感兴趣", "targetCategory", None),
    ]
    assert memories[2].category == "TTPS"


def test_given_a_retract_call_then_the_memory_takes_its_slot_back_and_a_save_beside_it_stays_a_save():
    recorder = Recorder([httpx2.Response(200, json=message_response(
        {"memoryType": "INTENT", "content": "用户不再考虑高才通", "category": "TTPS", "field": "targetCategory",
         "operation": "retract"},
        {"memoryType": "INTENT", "content": "用户改走优才", "category": "QMAS", "field": "targetCategory"},
    ))])

    memories = extractor_with(recorder).extract(TURN)

    assert [(m.content, m.category, m.retraction) for m in memories] == [
        ("用户不再考虑高才通", "TTPS", True), ("用户改走优才", "QMAS", False)]
    body = json.loads(recorder.requests[0].content)
    assert body["tools"][0]["input_schema"]["properties"]["operation"]["enum"] == ["save", "retract"]
    assert "retract" in body["system"][0]["text"]


def test_request_has_temperature_zero_a_cached_system_prompt_and_the_tool_schema():
    recorder = Recorder([httpx2.Response(200, json=message_response())])

    extractor_with(recorder, llm_model="claude-haiku-4-5").extract(TURN)

    (request,) = recorder.requests
    assert request.url.path == "/v1/messages"
    assert request.headers["authorization"] == "Bearer sk-ant-test"
    body = json.loads(request.content)
    assert body["model"] == "claude-haiku-4-5"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 1000
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "模糊信息保留模糊性" in body["system"][0]["text"]
    assert body["tools"] == [SAVE_USER_MEMORY_TOOL]
    schema = body["tools"][0]["input_schema"]
    assert schema["properties"]["memoryType"]["enum"] == ["FACT", "PREFERENCE", "INTENT"]
    assert set(schema["required"]) >= {"memoryType", "content"}
    prompt = body["messages"][0]["content"]
    assert TURN.user_message in prompt and '"currentLocation": "杭州"' in prompt


def test_given_empty_temperature_setting_then_temperature_is_omitted_for_models_that_reject_it():
    recorder = Recorder([httpx2.Response(200, json=message_response())])
    extractor_with(recorder, llm_temperature="").extract(TURN)
    assert "temperature" not in json.loads(recorder.requests[0].content)


def test_given_no_tool_calls_then_nothing_is_extracted():
    recorder = Recorder([httpx2.Response(200, json=message_response(text="无新信息"))])
    assert extractor_with(recorder).extract(TURN) == []


def test_given_malformed_tool_input_then_that_call_is_ignored_and_the_rest_kept():
    recorder = Recorder([httpx2.Response(200, json=message_response(
        {"memoryType": "OPINION", "content": "x"},
        {"content": "missing type"},
        {"memoryType": "PREFERENCE", "content": "希望尽快办理", "field": "other"},
    ))])
    memories = extractor_with(recorder).extract(TURN)
    assert [m.content for m in memories] == ["希望尽快办理"]


def test_given_overloaded_then_retried_with_backoff_and_succeeds():
    recorder = Recorder([overloaded(), httpx2.Response(200, json=message_response(
        {"memoryType": "FACT", "content": "用户32岁", "field": "age", "value": 32}))])

    memories = extractor_with(recorder).extract(TURN)

    assert len(recorder.requests) == 2
    assert [m.content for m in memories] == ["用户32岁"]


@pytest.mark.parametrize("status", [429, 500, 529])
def test_given_llm_stays_down_then_llm_unavailable_after_retries(status):
    def failing(request: httpx2.Request) -> httpx2.Response:
        failing.calls += 1
        return httpx2.Response(status, headers={"retry-after-ms": "1"},
                               json={"type": "error", "error": {"type": "api_error", "message": "down"}})
    failing.calls = 0

    with pytest.raises(LlmUnavailable) as raised:
        extractor_with(failing).extract(TURN)

    assert failing.calls == 3  # first try + llm_max_retries
    assert raised.value.details == {"provider_status": status}


def test_given_connection_failure_then_llm_unavailable():
    def broken(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    with pytest.raises(LlmUnavailable):
        extractor_with(broken, llm_max_retries=0).extract(TURN)


def test_given_the_llm_times_out_then_retried_and_llm_unavailable():
    def slow(request: httpx2.Request) -> httpx2.Response:
        slow.calls += 1
        raise httpx2.ReadTimeout("timed out", request=request)
    slow.calls = 0

    with pytest.raises(LlmUnavailable):
        extractor_with(slow, llm_max_retries=1).extract(TURN)

    assert slow.calls == 2  # the SDK retried the timeout once


def test_given_anthropic_without_key_then_a_clear_configuration_error():
    with pytest.raises(LlmUnavailable, match="ANTHROPIC_API_KEY"):
        build_extractor(Settings(llm_provider="anthropic"))


def test_given_secret_arn_then_key_is_read_from_secrets_manager():
    class FakeSecrets:
        def get_secret_value(self, SecretId: str) -> dict:
            assert SecretId.endswith(":secret:anthropic")
            return {"SecretString": json.dumps({"ANTHROPIC_API_KEY": "sk-ant-from-secret"})}

    recorder = Recorder([httpx2.Response(200, json=message_response())])
    settings = Settings(llm_provider="anthropic",
                        anthropic_api_key_secret_arn="arn:aws:secretsmanager:us-east-1:1:secret:anthropic")
    extractor = build_extractor(settings, http_client=httpx2.Client(transport=httpx2.MockTransport(recorder)),
                                secrets_client=FakeSecrets())
    extractor.extract(TURN)
    assert recorder.requests[0].headers["authorization"] == "Bearer sk-ant-from-secret"


def test_given_bedrock_then_the_model_is_invoked_through_bedrock_runtime_with_sigv4():
    recorder = Recorder([httpx2.Response(200, json=message_response(
        {"memoryType": "FACT", "content": "User is 32 years old", "field": "age", "value": 32}))])
    settings = Settings(llm_provider="bedrock")
    extractor = build_extractor(settings, http_client=httpx2.Client(transport=httpx2.MockTransport(recorder)))

    memories = extractor.extract(TURN)

    (request,) = recorder.requests
    assert request.url.host == "bedrock-runtime.us-east-1.amazonaws.com"
    assert request.url.path.startswith("/model/us.anthropic.claude-haiku-4-5")
    assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256")
    assert json.loads(request.content)["temperature"] == 0
    assert [m.content for m in memories] == ["User is 32 years old"]


def test_given_a_rotated_secret_then_the_new_key_is_used_once_the_old_one_is_five_minutes_old():
    from agent_memory.adapters.llm.claude import KeyRefreshingClient

    keys = iter(["sk-ant-old", "sk-ant-new"])
    built: list[str] = []
    now = [1000.0]

    class Client:
        def __init__(self, key: str) -> None:
            built.append(key)
            self.messages = f"messages of {key}"

    client = KeyRefreshingClient(build=Client, read_key=lambda: next(keys), clock=lambda: now[0])

    first = client.messages
    now[0] += 299
    still = client.messages
    now[0] += 1  # e.g. a SnapStart restore: wall time jumps past the key's age
    rotated = client.messages

    assert (first, still, rotated) == ("messages of sk-ant-old", "messages of sk-ant-old", "messages of sk-ant-new")
    assert built == ["sk-ant-old", "sk-ant-new"]
