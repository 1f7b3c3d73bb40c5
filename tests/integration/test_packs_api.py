"""Domain packs over HTTP (the real handlers, moto): a tenant on the general pack (MEMORY_TENANT_PACKS) beside
one on the deployment's immigration pack — categories, the tools' category enum, extraction and the profile."""

from __future__ import annotations

import pytest

from tests.integration.conftest import reset_containers


@pytest.fixture
def packs_api(api, monkeypatch):
    monkeypatch.setenv("MEMORY_TENANT_PACKS", '{"globex": "general"}')
    reset_containers()
    return api


def save(api, tenant: str, user: str, body: dict):
    return api.call("POST", f"/v1/users/{user}/memories", body, tenant=tenant)


def test_given_a_general_tenant_then_pets_is_a_category_and_the_immigration_tenant_still_refuses_it(packs_api):
    general = save(packs_api, "globex", "lena", {"memoryType": "FACT", "content": "Has a cat", "category": "pets"})
    immigration = save(packs_api, "acme", "wang", {"memoryType": "FACT", "content": "Has a cat", "category": "pets"})

    assert general.status == 201 and general.body["memory"]["category"] == "pets"
    assert immigration.status == 422
    assert immigration.body["error"]["details"][0]["field"] == "category"


def test_the_save_tools_category_enum_is_the_tenants(packs_api):
    def category(tenant: str) -> dict:
        tools = packs_api.call("GET", "/v1/tools", tenant=tenant).body["tools"]
        save_tool = next(t for t in tools if t["name"] == "save_user_memory")
        return save_tool["input_schema"]["properties"]["category"]

    assert "enum" not in category("globex")
    assert category("acme")["enum"] == ["QMAS", "GEP", "IANG", "TTPS", "CIES", "TECHTAS"]


def test_a_general_tenants_turns_fill_its_own_profile(packs_api):
    turn = {"userMessage": "Hi! I'm a data engineer in Berlin. Just call me Lena. I'm allergic to peanuts. "
                           "Please always answer me in German."}
    extracted = packs_api.call("POST", "/v1/users/lena/memories/extract", turn, tenant="globex")
    assert extracted.status == 200, extracted.body

    profile = packs_api.call("POST", "/v1/users/lena/profile/summarize", {}, tenant="globex").body
    assert list(profile["user_profile"]) == ["basic", "work", "family", "health", "preferences", "goals"]
    assert profile["user_profile"]["health"]["allergies"] == ["peanuts"]
    assert profile["user_profile"]["preferences"]["preferredLanguage"] == "German"
    assert profile["user_profile"]["basic"]["location"] == "Berlin"
    assert profile["completeness"]["score"] >= 50
    assert "hasHKEmployer" not in str(profile)
    assert profile["narrative_summary"].startswith("The user goes by Lena")
