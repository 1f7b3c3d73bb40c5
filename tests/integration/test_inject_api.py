"""POST /v1/context/inject through the Lambda handler on moto: save → inject, the shared cache, errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.adapters.retriever_http import HttpRetriever
from agent_memory.api.inject import InjectionRequest, inject_context
from agent_memory.bootstrap import get_services
from agent_memory.bootstrap.services import build_services
from agent_memory.domain.inject.conversation import validate_messages
from agent_memory.domain.keys import cache_partition_key
from agent_memory.domain.models import ScopeRef
from agent_memory.settings import Settings, get_settings
from tests.fakes.retriever_service import RetrieverService

USER = "/v1/users/u-inject"
INJECT = "/v1/context/inject"


def ask(message: str, **extra: Any) -> dict[str, Any]:
    return {"user_id": "u-inject", "conversation_id": "c-1", "current_user_message": message, **extra}


def memory_block(body: dict[str, Any]) -> dict[str, Any]:
    return next(b for b in body["blocks"] if b["type"] == "user_memory")


def test_saved_memories_are_injected_and_a_save_invalidates_the_cached_block(api):
    api.call("POST", f"{USER}/memories/extract", {"user_message": "我今年32岁，在杭州做前端开发，工作8年了"})

    first = api.call("POST", INJECT, ask("我适合高才通吗？"))
    second = api.call("POST", INJECT, ask("我适合高才通吗？"))
    api.call("POST", f"{USER}/memories", {"memoryType": "INTENT", "content": "用户计划明年上半年递交申请"})
    third = api.call("POST", INJECT, ask("我适合高才通吗？"))

    assert first.status == 200, first.body
    context = first.body["messages"][0]["content"]
    assert "<user_memory>" in context and "用户32岁" in context
    assert first.body["messages"][-1] == {"role": "user", "content": "我适合高才通吗？"}
    assert validate_messages(first.body["messages"]) == []
    assert [memory_block(r.body)["cached"] for r in (first, second, third)] == [False, True, False]
    assert "用户计划明年上半年递交申请" in third.body["messages"][0]["content"]


@pytest.mark.parametrize(("window", "available"), [(4_000, 2_600), (8_000, 5_200)])
def test_given_a_small_window_when_injected_then_it_answers_200_with_the_users_memories(api, window, available):
    api.call("POST", f"{USER}/memories", {"memory_type": "FACT", "content": "用户在杭州做前端开发，工作8年了"})
    history = [{"role": "user", "content": "你好，我想了解香港身份"},
               {"role": "assistant", "content": "好的。请问您的学历和工作年限？"}]

    response = api.call("POST", INJECT, ask("我适合高才通吗？", messages=history, max_context_tokens=window))

    assert response.status == 200, response.body
    assert "user_memory" in response.body["injected_contexts"]
    assert "前端开发" in response.body["messages"][0]["content"]
    usage = response.body["token_usage"]
    assert (usage["available"], usage["within_budget"]) == (available, True)
    assert usage["reserved_output"] + usage["reserved_system"] == window - available


@pytest.mark.parametrize(("spelling", "field"), [("snake", "max_context_tokens"), ("camel", "maxContextTokens")])
def test_given_reserves_taking_the_window_then_the_422_names_the_field_as_the_body_spells_it(api, spelling, field):
    body = {"user_id": "u-inject", "conversation_id": "c-1", "current_user_message": "hi",
            "reserved_output_tokens": 4_000, "reserved_system_tokens": 4_000}
    if spelling == "camel":
        body = {"userId": "u-inject", "conversationId": "c-1", "currentUserMessage": "hi",
                "reservedOutputTokens": 4_000, "reservedSystemTokens": 4_000}

    response = api.call("POST", INJECT, {**body, field: 8_000})

    assert response.status == 422, response.body
    assert [d["field"] for d in response.body["error"]["details"]] == [field]


def test_the_cache_is_shared_through_the_table_across_containers(api, lambda_env):
    api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户是注册会计师"})
    assert api.call("POST", INJECT, ask("我的背景如何？")).status == 200
    get_services().inject.flush_cache_writes()  # the table's copies are written off the request path

    items = lambda_env.query(
        TableName=get_settings().memory_table_name, KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": cache_partition_key(ScopeRef(tenant_id="acme", user_id="u-inject"))}},
    )["Items"]
    parts = sorted(i["sk"]["S"].split("#")[1] for i in items if i["sk"]["S"].startswith("user_memory#"))
    assert parts == ["rel", "top"]  # user_memory's two parts
    assert "expires_at" in items[0]  # the table's TTL attribute

    # A new container (empty local layer) reads the block from the table.
    fresh = build_services(get_settings(), dynamodb_client=lambda_env)
    result = inject_context(fresh.inject, ScopeRef(tenant_id="acme", user_id="u-inject"),
                            _request(ask("我的背景如何？")))
    assert next(b for b in result.blocks if b.type == "user_memory").cached


def _request(body: dict[str, Any]) -> InjectionRequest:
    return InjectionRequest.model_validate(body)


def test_tenants_never_share_injected_memories(api):
    api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户的护照号码已提交"})
    other = api.call("POST", INJECT, ask("我的护照呢？"), tenant="other-tenant")
    assert other.status == 200 and "护照号码" not in json.dumps(other.body, ensure_ascii=False)


def test_camel_case_requests_and_system_placement(api):
    response = api.call("POST", INJECT, {
        "userId": "u-inject", "conversationId": "c-9", "currentUserMessage": "Plan my week",
        "placement": "system", "deviceInfo": {"deviceType": "desktop", "timezone": "UTC+8"},
        "maxContextTokens": 50_000,
    })
    assert response.status == 200, response.body
    assert response.body["messages"] == [{"role": "user", "content": "Plan my week"}]
    assert "<device_context>" in response.body["system"][-1]["text"] or any(
        "<device_context>" in b["text"] for b in response.body["system"])


@pytest.mark.parametrize(("body", "field"), [
    ({"conversation_id": "c", "current_user_message": "hi"}, "user_id"),
    ({"conversationId": "c", "currentUserMessage": "hi"}, "userId"),
    (ask("hi", max_context_tokens=10), "max_context_tokens"),
    (ask("hi", max_context_tokens=8_000, reserved_output_tokens=4_000, reserved_system_tokens=4_000),
     "max_context_tokens"),
    (ask("hi", reserved_output_tokens=-1), "reserved_output_tokens"),
    (ask("hi", messages=[{"role": "system", "content": "x"}]), "messages.0.role"),
    (ask("hi", messages=[{"role": "assistant", "content": "first"}]), "messages"),
    (ask("hi", placement="sidebar"), "placement"),
    (ask("hi", surprise=True), "surprise"),
    ({"user_id": "u-inject", "conversation_id": "c", "messages": [{"role": "user", "content": "a"},
                                                                  {"role": "assistant", "content": "b"}]},
     "current_user_message"),
])
def test_bad_requests_are_422_naming_the_field(api, body, field):
    response = api.call("POST", INJECT, body)
    assert response.status == 422, response.body
    fields = [d["field"] for d in response.body["error"]["details"]]
    assert any(f == field or f.startswith(field) for f in fields), fields


def test_malformed_json_is_400(api):
    assert api.call("POST", INJECT, raw_body=b"{nope").status == 400


# ---- the HTTP retriever --------------------------------------------------------------------------

POLICY_ITEM = {"source": "优才计划评分标准", "content": "综合计分制下学历最高可得45分", "similarity": 0.85}


@pytest.fixture
def knowledge() -> Iterator[RetrieverService]:
    with RetrieverService(lambda path, body: [POLICY_ITEM]) as service:
        yield service


@pytest.fixture
def knowledge_url(knowledge: RetrieverService) -> str:
    return f"{knowledge.url}/retrieve"


def test_a_configured_retriever_fills_relevant_knowledge_only_for_policy_questions_and_is_cached(
        knowledge, knowledge_url, lambda_env):
    services = build_services(Settings(context_knowledge_url=knowledge_url), dynamodb_client=lambda_env)
    who = ScopeRef(tenant_id="acme", user_id="u-knowledge")

    policy = inject_context(services.inject, who, _request({**ask("优才的评分标准是什么？"), "user_id": who.user_id}))
    again = inject_context(services.inject, who, _request({**ask("优才的评分标准是什么？"), "user_id": who.user_id}))
    chat = inject_context(services.inject, who, _request({**ask("今天天气不错"), "user_id": who.user_id}))

    assert "relevant_knowledge" in policy.injected_contexts
    assert "来源：优才计划评分标准 (相似度: 0.85)" in policy.messages[0]["content"]
    assert next(b for b in again.blocks if b.type == "relevant_knowledge").cached
    assert "relevant_knowledge" not in chat.injected_contexts
    assert len(knowledge.calls) == 1 and knowledge.calls[0]["tenant_id"] == "acme"


def test_an_unreachable_retriever_reads_as_nothing_found():
    retriever = HttpRetriever(url="http://127.0.0.1:9/nothing", timeout_seconds=0.2)
    assert retriever.retrieve(ScopeRef(tenant_id="t", user_id="u"), "q", 3) == []
