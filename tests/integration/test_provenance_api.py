"""Provenance over the real handlers: every version records how it came (`origin`) and the token subject that
wrote it (`written_by`), and the history shows both for each version."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.integration.conftest import reset_containers


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def _detail(api: Any, user: str, memory_key: str) -> dict[str, Any]:
    found = api.call("GET", f"/v1/users/{user}/memories/{memory_key}")
    assert found.status == 200, found.body
    return dict(found.body)


def test_given_a_token_when_a_memory_is_saved_directly_then_it_records_direct_save_and_the_subject(api):
    user = _user()

    saved = api.call("POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": "Lives in Berlin"},
                     claims={"sub": "agent-7", "tenant_id": "acme"})

    assert saved.status == 201, saved.body
    assert (saved.body["memory"]["origin"], saved.body["memory"]["written_by"]) == ("direct_save", "agent-7")


def test_given_a_batch_when_it_is_saved_then_every_item_records_direct_save(api):
    user = _user()

    saved = api.call("POST", f"/v1/users/{user}/memories/batch", {"memories": [
        {"memory_type": "FACT", "content": "Has a dog called Rex"},
        {"memory_type": "PREFERENCE", "content": "喜欢喝绿茶"}]})

    assert saved.status == 201, saved.body
    for key in saved.body["memory_keys"]:
        memory = _detail(api, user, key)["memory"]
        assert (memory["origin"], memory["written_by"]) == ("direct_save", "svc")


def test_given_a_turn_when_it_is_extracted_then_its_memories_record_extract(api):
    user = _user()

    extracted = api.call("POST", f"/v1/users/{user}/memories/extract", {"user_message": "我今年32岁"})

    assert extracted.status == 200, extracted.body
    (memory,) = api.call("GET", f"/v1/users/{user}/memories").body["items"]
    assert (memory["origin"], memory["written_by"]) == ("extract", "svc")


def test_given_a_model_tool_call_when_the_executor_saves_then_the_memory_records_tool_executor(api):
    user = _user()

    result = api.call("POST", f"/v1/users/{user}/tools/execute", {
        "type": "tool_use", "id": "toolu_1", "name": "save_user_memory",
        "input": {"memory_type": "PREFERENCE", "content": "Prefers answers in German"}},
        claims={"sub": "model-runner", "tenant_id": "acme"})

    assert result.status == 200 and not result.body.get("is_error"), result.body
    (memory,) = api.call("GET", f"/v1/users/{user}/memories").body["items"]
    assert (memory["origin"], memory["written_by"]) == ("tool_executor", "model-runner")


def test_given_a_field_written_by_two_subjects_when_its_history_is_read_then_each_version_shows_its_own(api):
    user = _user()
    first = api.call("POST", f"/v1/users/{user}/memories",
                     {"memory_type": "FACT", "content": "用户32岁", "field": "age"},
                     claims={"sub": "alice", "tenant_id": "acme"}).body["memory"]
    api.call("POST", f"/v1/users/{user}/memories/extract", {"user_message": "我今年33岁"},
             claims={"sub": "bob", "tenant_id": "acme"})

    history = _detail(api, user, first["memory_key"])["history"]

    assert [(m["version"], m["origin"], m["written_by"]) for m in history] == [
        (1, "direct_save", "alice"), (2, "extract", "bob")]


@pytest.fixture
def header_tenancy(monkeypatch: pytest.MonkeyPatch, lambda_env: Any) -> Any:
    """No authorizer: the tenant from X-Tenant-Id, as on the local stack."""
    monkeypatch.setenv("TENANT_SOURCE", "header")
    reset_containers()
    return lambda_env


def test_given_no_token_when_a_memory_is_saved_then_it_records_no_subject(api, header_tenancy):
    user = _user()

    saved = api.call("POST", f"/v1/users/{user}/memories", {"memory_type": "FACT", "content": "Speaks Polish"},
                     tenant=None, headers={"x-tenant-id": "acme"})

    assert saved.status == 201, saved.body
    assert (saved.body["memory"]["origin"], saved.body["memory"]["written_by"]) == ("direct_save", None)
