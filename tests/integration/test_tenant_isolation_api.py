"""Tenants over HTTP: another tenant with the same user id sees and changes nothing, and the tenant comes from the
token's claim, never from the body."""

from __future__ import annotations

from tests.fakes.api_calls import memories_of

USER = "/v1/users/u-1001"


def test_another_tenant_with_the_same_user_id_sees_and_changes_nothing(api):
    key = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "用户32岁", "field": "age"}
                   ).body["memory"]["memory_key"]

    assert memories_of(api, tenant="other-co") == []
    assert api.call("GET", f"{USER}/memories/{key}", tenant="other-co").status == 404
    assert api.call("DELETE", f"{USER}/memories/{key}", tenant="other-co").status == 404
    loaded = api.call("POST", f"{USER}/context/load", {"query": "年龄"}, tenant="other-co")
    assert loaded.body["total_memories"] == 0 and loaded.body["memories"] == []
    assert len(memories_of(api)) == 1


def test_tenant_comes_from_the_token_never_from_the_body(api):
    response = api.call("POST", f"{USER}/memories", {"memoryType": "FACT", "content": "x", "tenantId": "victim"})
    assert response.status == 422 and response.body["error"]["details"][0]["field"] == "tenantId"


def test_a_request_without_a_tenant_claim_is_unauthorized(api):
    response = api.call("GET", f"{USER}/memories", tenant=None)
    assert response.status == 401 and response.body["error"]["code"] == "unauthorized"
