"""Who may act for whom, from the token's claims through the deployed handlers: an end user reaches only their own
user, a service scope any user and project, and the tenant comes from the token alone."""

from __future__ import annotations


def as_token(api, monkeypatch, claims, method, path, body=None, headers=None):
    """A request carrying exactly these JWT claims (and headers), through the deployed handlers."""
    response = api.call(method, path, body, claims=claims, headers=headers)
    return response.status, response.body


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
