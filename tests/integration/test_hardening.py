"""Bad or hostile input over HTTP: always a 4xx naming what is wrong, never a 500, nothing half-written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

USER = "/v1/users/u-hard"
LONG_WORD = "https://example.com/" + "a" * 120


def memories(api):
    return api.call("GET", f"{USER}/memories").body["items"]


# ---- words longer than a keyword can be ----------------------------------------------------------

def test_given_a_word_over_100_characters_then_save_batch_search_recall_and_load_answer(api):
    saved = api.call("POST", f"{USER}/memories", {"memory_type": "FACT", "content": f"see {LONG_WORD} for the form"})
    batch = api.call("POST", f"{USER}/memories/batch", {"memories": [{"memoryType": "FACT", "content": LONG_WORD}]})
    search = api.call("POST", f"{USER}/memories/search", {"query": f"form {LONG_WORD}"})
    recall = api.call("POST", f"{USER}/memories/recall", {"message": f"之前那个链接 {LONG_WORD}"})
    load = api.call("POST", f"{USER}/context/load", {"query": LONG_WORD})

    assert (saved.status, batch.status, search.status, recall.status, load.status) == (201, 201, 200, 200, 200)
    assert all(len(k["term"]) <= 40 for k in saved.body["memory"]["keywords"])


def test_given_such_a_word_in_the_current_message_then_inject_keeps_the_user_memory_block(api):
    api.call("POST", f"{USER}/memories", {"memory_type": "FACT", "content": "用户32岁"})

    body = api.call("POST", "/v1/context/inject", {"user_id": "u-hard", "conversation_id": "c1",
                                                   "current_user_message": f"看看这个 {LONG_WORD}"}).body

    assert "user_memory" in [b["type"] for b in body["blocks"]]
    assert body["failed_contexts"] == []


# ---- malformed bodies ------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "status"), [
    (b"[" * 50_000 + b"]" * 50_000, 400),  # nested past any recursion limit
    (b'{"query": ' + b"9" * 5000 + b"}", 400),  # an integer of 5,000 digits
    (b'{"query": "\xff\xfe"}', 400),  # not UTF-8
    (b'{"query": "x", "limit": NaN}', 400),  # NaN is not JSON
    (b'{"query": "\\ud800"}', 422),  # half of a UTF-16 pair
])
def test_given_a_malformed_body_then_a_4xx_names_it(api, raw, status):
    response = api.call("POST", f"{USER}/memories/search", raw_body=raw)

    assert response.status == status, response.body
    assert response.body["error"]["details"][0]["field"] in ("body", "query")


def test_given_an_optional_body_that_is_not_utf8_then_400(api):
    response = api.call("POST", f"{USER}/profile/summarize", raw_body=b"\xff")

    assert response.status == 400, response.body
    assert response.body["error"]["details"] == [{"field": "body"}]


def test_given_a_date_before_the_first_representable_instant_then_422(api):
    response = api.call("POST", f"{USER}/memories", {"memory_type": "FACT", "content": "x",
                                                      "created_at": "0001-01-01T00:00:00+01:00"})
    assert response.status == 422 and response.body["error"]["details"][0]["field"] == "created_at"
    assert memories(api) == []


def test_given_a_lone_surrogate_in_inject_messages_then_422_not_500(api):
    response = api.call("POST", "/v1/context/inject", raw_body=(
        b'{"user_id": "u-hard", "conversation_id": "c1", "current_user_message": "hi",'
        b' "messages": [{"role": "user", "content": "\\udc00"}]}'))
    assert response.status == 422, response.body


# ---- loose validation --------------------------------------------------------------------------------

def test_given_true_as_a_limit_then_422(api):
    response = api.call("POST", f"{USER}/memories/search", {"query": "x", "limit": True})
    assert response.status == 422 and response.body["error"]["details"][0]["field"] == "limit"


def test_given_a_whitespace_only_user_message_then_422_and_nothing_extracted(api):
    response = api.call("POST", f"{USER}/memories/extract", {"user_message": "  \n\t "})
    assert response.status == 422 and response.body["error"]["details"][0]["field"] == "user_message"


@pytest.mark.parametrize("key", ["a%00b", "abc%E2%80%AE", "%E2%80%8Fx"])
def test_given_a_hot_memory_key_with_control_or_direction_marks_then_422(api, key):
    response = api.call("PUT", f"{USER}/hot-memory/status/{key}", {"value": "x"})
    assert response.status == 422 and response.body["error"]["details"][0]["field"] == "key"


def test_given_dot_dot_as_a_project_id_then_inject_refuses_it(api):
    response = api.call("POST", "/v1/context/inject", {"user_id": "u-hard", "project_id": "..",
                                                        "conversation_id": "c1", "current_user_message": "hi"})
    assert response.status == 422


def test_given_a_created_at_in_the_future_then_422_and_nothing_stored(api):
    future = (datetime.now(UTC) + timedelta(days=400)).isoformat()
    response = api.call("POST", f"{USER}/memories", {"memory_type": "FACT", "content": "x", "created_at": future})
    assert response.status == 422 and response.body["error"]["details"][0]["field"] == "created_at"
    assert memories(api) == []


def test_given_nan_in_metadata_then_400_not_a_stored_null(api):
    response = api.call("POST", f"{USER}/memories",
                        raw_body=b'{"memory_type": "FACT", "content": "x", "metadata": {"score": NaN}}')
    assert response.status == 400 and memories(api) == []


def test_given_a_log_batch_of_100_messages_then_it_is_stored(api):
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(100)]

    response = api.call("POST", f"{USER}/conversations/c-100/messages", {"messages": messages})

    assert response.status == 201 and response.body["stored_count"] == 100


# ---- who may act for whom -------------------------------------------------------------------------------

def as_token(api, monkeypatch, claims, method, path, body=None, headers=None):
    """A request carrying exactly these JWT claims (and headers), through the deployed handlers."""
    import json as _json

    from local.runtime import http_api_event, match_route

    route, params = match_route(method, path)
    event = http_api_event(route=route, path_parameters=params, method=method, path=path, query="",
                           headers={"content-type": "application/json", **(headers or {})},
                           body=_json.dumps(body).encode() if body is not None else None)
    event["requestContext"]["authorizer"] = {"jwt": {"claims": claims}}
    result = api.functions.invoke(route.function, event)
    return result["statusCode"], _json.loads(result.get("body") or "null")


@pytest.fixture
def end_user_tokens(monkeypatch):
    from tests.integration.conftest import reset_containers

    monkeypatch.setenv("TOKEN_KIND", "end_user")
    reset_containers()
    yield
    reset_containers()


def test_given_end_user_tokens_then_a_token_reaches_its_own_user_only(api, monkeypatch, end_user_tokens):
    alice = {"sub": "alice", "tenant_id": "acme"}
    saved, _ = as_token(api, monkeypatch, alice, "POST", "/v1/users/alice/memories",
                        {"memoryType": "FACT", "content": "用户32岁"})
    own, _ = as_token(api, monkeypatch, alice, "GET", "/v1/users/alice/memories")
    other, error = as_token(api, monkeypatch, alice, "GET", "/v1/users/bob/memories")
    deleted, _ = as_token(api, monkeypatch, alice, "DELETE", "/v1/users/bob/memories/mem_01jd0000000000000000000000")
    project, _ = as_token(api, monkeypatch, alice, "GET", "/v1/projects/p-1/hot-memory")
    injected, _ = as_token(api, monkeypatch, alice, "POST", "/v1/context/inject",
                           {"user_id": "bob", "conversation_id": "c1", "current_user_message": "hi"})

    assert (saved, own) == (201, 200)
    assert (other, deleted, project, injected) == (403, 403, 403, 403)
    assert error["error"]["code"] == "forbidden" and error["error"]["details"][0]["field"] == "user_id"


def test_given_end_user_tokens_then_the_service_scope_acts_for_any_user_and_project(api, monkeypatch,
                                                                                      end_user_tokens):
    backend = {"sub": "svc-1", "tenant_id": "acme", "scope": "openid memory:any-user"}

    user, _ = as_token(api, monkeypatch, backend, "GET", "/v1/users/bob/memories")
    project, _ = as_token(api, monkeypatch, backend, "GET", "/v1/projects/p-1/hot-memory")

    assert (user, project) == (200, 200)


def test_given_service_tokens_then_any_user_of_the_tenant_is_reachable(api, monkeypatch):
    status, _ = as_token(api, monkeypatch, {"sub": "svc", "tenant_id": "acme"}, "GET", "/v1/users/bob/memories")
    assert status == 200


def test_the_tenant_comes_only_from_the_token_never_from_a_header_or_the_body(api, monkeypatch):
    claims = {"sub": "svc", "tenant_id": "acme"}
    as_token(api, monkeypatch, claims, "POST", "/v1/users/u-t/memories",
             {"memoryType": "FACT", "content": "只属于acme"}, headers={"x-tenant-id": "evil"})

    in_acme, body = as_token(api, monkeypatch, claims, "GET", "/v1/users/u-t/memories")
    in_evil, other = as_token(api, monkeypatch, {"sub": "svc", "tenant_id": "evil"}, "GET", "/v1/users/u-t/memories")
    no_tenant, _ = as_token(api, monkeypatch, {"sub": "svc"}, "GET", "/v1/users/u-t/memories",
                            headers={"x-tenant-id": "acme"})

    assert [m["content"] for m in body["items"]] == ["只属于acme"] and other["items"] == []
    assert (in_acme, in_evil, no_tenant) == (200, 200, 401)
