"""Who an inject request acts for is in its body: with end-user tokens the body's user (and project) is checked
as it is read, so a token for another user gets 403 before the megabytes after it are parsed or validated."""

from __future__ import annotations

import json
from typing import Any

ALICE = {"sub": "alice", "tenant_id": "acme"}
INJECT = "/v1/context/inject"
FOUR_MB = 4 * 1024 * 1024


def post_inject(api: Any, claims: dict[str, str], body: str) -> tuple[int, Any]:
    response = api.call("POST", INJECT, raw_body=body.encode(), claims=claims)
    return response.status, response.body


def messages_refused_by_validation() -> str:
    """About 4 MB of messages the request model refuses (no such role): read and validated, they are a 422."""
    turn = json.dumps({"role": "robot", "content": "x" * 4000})
    return "[" + ", ".join([turn] * (FOUR_MB // len(turn))) + "]"


def test_given_alices_token_when_a_4mb_body_that_would_fail_validation_names_bob_then_403_not_422(api, end_user_tokens):
    body = f'{{"user_id": "bob", "conversation_id": "c1", "messages": {messages_refused_by_validation()}}}'
    assert len(body) > FOUR_MB - 8192

    status, answer = post_inject(api, ALICE, body)

    assert status == 403, answer
    assert answer["error"]["code"] == "forbidden" and answer["error"]["details"][0]["field"] == "user_id"


def test_given_alices_token_when_bob_is_named_before_4mb_that_is_not_json_then_403_not_400(api, end_user_tokens):
    # Parsed, the tail would be a 400 malformed_json: the 403 shows it was never read.
    body = '{"userId": "bob", "conversation_id": "c1", "messages": [' + "not json, " * (FOUR_MB // 10)

    status, answer = post_inject(api, ALICE, body)

    assert status == 403, answer
    assert answer["error"]["details"][0]["field"] == "userId"  # named as the body spells it


def test_given_alices_token_when_bob_is_named_after_4mb_of_messages_then_still_403_not_422(api, end_user_tokens):
    body = f'{{"conversation_id": "c1", "messages": {messages_refused_by_validation()}, "user_id": "bob"}}'

    status, _ = post_inject(api, ALICE, body)

    assert status == 403


def test_given_alices_token_when_her_body_names_a_project_then_403_before_validation(api, end_user_tokens):
    body = f'{{"user_id": "alice", "project_id": "p-1", "messages": {messages_refused_by_validation()}}}'

    status, answer = post_inject(api, ALICE, body)

    assert status == 403 and answer["error"]["details"][0]["field"] == "project_id"


def test_given_alices_token_when_she_injects_for_herself_then_200_and_her_invalid_body_is_422(api, end_user_tokens):
    own = json.dumps({"user_id": "alice", "conversation_id": "c1", "current_user_message": "我适合高才通吗？"})
    invalid = f'{{"user_id": "alice", "conversation_id": "c1", "messages": {messages_refused_by_validation()}}}'

    status, answer = post_inject(api, ALICE, own)
    refused, error = post_inject(api, ALICE, invalid)

    assert status == 200, answer
    assert answer["messages"][-1] == {"role": "user", "content": "我适合高才通吗？"}
    assert refused == 422 and error["error"]["details"][0]["field"].startswith("messages.0.role")


def test_given_a_token_without_a_tenant_then_401_before_the_body_is_read(api, end_user_tokens):
    status, _ = post_inject(api, {"sub": "alice"}, "{" + "not json" * 1000)

    assert status == 401
