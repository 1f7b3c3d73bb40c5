"""Facts that matter to any request reach inject's user_memory block whatever the message asks: a general
tenant's allergies and diet beside a dinner question that names neither, over HTTP (moto)."""

from __future__ import annotations

import pytest

from tests.integration.conftest import reset_containers

TENANT = "globex"
USER = "dinner-1"
MEMORIES = [
    ("FACT", "I'm allergic to peanuts"), ("FACT", "I'm allergic to shellfish"), ("FACT", "Speaks German fluently"),
    ("PREFERENCE", "Loves jazz, especially Coltrane"), ("INTENT", "Wants to run a marathon next spring"),
    ("FACT", "Works as a UX designer at a bank"), ("PREFERENCE", "Prefers replies in bullet points"),
    ("INTENT", "Plans to learn Italian this year"), ("FACT", "Has two kids, 6 and 9"),
    ("PREFERENCE", "Likes hiking on weekends"), ("FACT", "Grew up in Lyon"),
    ("INTENT", "Wants to read 20 books this year"),
]


@pytest.fixture
def general_api(api, monkeypatch):
    monkeypatch.setenv("MEMORY_TENANT_PACKS", f'{{"{TENANT}": "general"}}')
    reset_containers()
    return api


def test_a_dinner_request_carries_both_allergies_in_the_user_memory_block(general_api):
    saved = general_api.call("POST", f"/v1/users/{USER}/memories/batch", {"memories": [
        {"memoryType": kind, "content": content} for kind, content in MEMORIES]}, tenant=TENANT)
    assert saved.status == 201, saved.body
    listed = general_api.call("GET", f"/v1/users/{USER}/memories", tenant=TENANT).body["items"]
    fields = {m["content"]: m.get("field") or "" for m in listed}
    assert fields["I'm allergic to peanuts"].startswith("allergy"), fields

    response = general_api.call("POST", "/v1/context/inject", {
        "user_id": USER, "conversation_id": "c-dinner", "max_context_tokens": 4000,
        "messages": [{"role": "user", "content": "Can you suggest a restaurant for dinner?"}]}, tenant=TENANT)

    assert response.status == 200, response.body
    assert "user_memory" in response.body["injected_contexts"], response.body["injected_contexts"]
    text = response.body["messages"][0]["content"]
    assert "allergic to peanuts" in text and "allergic to shellfish" in text, text
    lines = [line for line in text.splitlines() if line.startswith("- [")]
    assert {i for i, line in enumerate(lines) if "allergic" in line} == {0, 1}  # before the ranked memories
    # The block's least number of lines (5 top slots + 3 relevant) still holds, each memory once.
    assert len(lines) >= 8 and len(set(lines)) == len(lines), lines
