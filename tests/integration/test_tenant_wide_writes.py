"""Writes every user of a tenant sees (its synonyms), over HTTP through the deployed handlers: with end-user
tokens only a token holding the service scope makes them; a user's own token cannot change another's search."""

from __future__ import annotations

from typing import Any

import pytest

ALICE = {"sub": "alice", "tenant_id": "acme"}
BOB = {"sub": "bob", "tenant_id": "acme"}
BACKEND = {"sub": "svc-1", "tenant_id": "acme", "scope": "openid memory:any-user"}
PLANT = {"keyword": "coffee", "synonyms": ["casino"], "similarity_score": 0.99}


def call(
    api: Any, claims: dict[str, str], method: str, path: str, body: Any = None, query: str = ""
) -> tuple[int, Any]:
    response = api.call(method, path, body, claims=claims, query=query)
    return response.status, response.body


def bobs_search(api: Any) -> dict[str, Any]:
    status, body = call(api, BOB, "POST", "/v1/users/bob/memories/search", {"query": "coffee"})
    assert status == 200
    return {"expanded_keywords": body["expanded_keywords"] or [], "hits": [r["memory_key"] for r in body["results"]]}


def stored_synonyms(dynamodb_client: Any) -> list[dict[str, Any]]:
    from agent_memory.settings import get_settings

    return dynamodb_client.query(
        TableName=get_settings().memory_table_name,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "T#acme#SYN"}},
    )["Items"]


@pytest.fixture
def bob_memories(api: Any) -> None:
    for content in ("Bob drinks coffee every morning", "Bob went to the casino in Macau last year"):
        status, _ = call(api, BOB, "POST", "/v1/users/bob/memories", {"memory_type": "FACT", "content": content})
        assert status == 201


def test_given_an_end_user_token_when_it_adds_synonyms_then_403_names_the_scope_and_nothing_changes(
    api, lambda_env, end_user_tokens, bob_memories
):
    before = bobs_search(api)

    status, body = call(api, ALICE, "POST", "/v1/synonyms", PLANT)

    assert status == 403
    assert body["error"]["code"] == "forbidden" and "memory:any-user" in body["error"]["message"]
    assert body["error"]["details"][0]["field"] == "scope"
    assert stored_synonyms(lambda_env) == []
    assert bobs_search(api) == before and "casino" not in before["expanded_keywords"]
    listed, found = call(api, BOB, "GET", "/v1/synonyms", query="keyword=coffee")
    assert listed == 200 and found["synonyms"] == []


def test_given_an_end_user_token_when_its_synonyms_body_is_invalid_then_still_403_not_422(api, end_user_tokens):
    status, body = call(api, ALICE, "POST", "/v1/synonyms", {"keyword": ""})
    assert (status, body["error"]["code"]) == (403, "forbidden")


def test_given_the_service_scope_when_it_adds_synonyms_then_every_users_search_expands_with_them(
    api, lambda_env, end_user_tokens, bob_memories
):
    status, body = call(api, BACKEND, "POST", "/v1/synonyms", PLANT)

    assert (status, body["stored_pairs"]) == (201, 2)
    assert len(stored_synonyms(lambda_env)) == 2
    assert "casino" in bobs_search(api)["expanded_keywords"]


def test_given_service_tokens_when_one_adds_synonyms_then_they_are_stored(api, lambda_env):
    status, _ = call(api, {"sub": "svc", "tenant_id": "acme"}, "POST", "/v1/synonyms", PLANT)
    assert status == 201 and len(stored_synonyms(lambda_env)) == 2
