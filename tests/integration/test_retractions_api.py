"""Retractions over HTTP (the real handlers, moto, the offline rules): what a user denies, withdraws or ends is
taken back, never stored as its opposite, and the profile and its narrative read what is true now."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.integration.conftest import reset_containers


@pytest.fixture
def packs_api(api, monkeypatch):
    monkeypatch.setenv("MEMORY_TENANT_PACKS", '{"globex": "general"}')
    reset_containers()
    return api


def extract(api: Any, user: str, message: str, tenant: str = "acme") -> dict[str, Any]:
    said = api.call("POST", f"/v1/users/{user}/memories/extract", {"userMessage": message}, tenant=tenant)
    assert said.status == 200, said.body
    return said.body


def profile(api: Any, user: str, tenant: str = "acme") -> dict[str, Any]:
    answer = api.call("POST", f"/v1/users/{user}/profile/summarize", {}, tenant=tenant)
    assert answer.status == 200, answer.body
    return answer.body


def a_user() -> str:
    return f"u-retract-{uuid.uuid4().hex[:8]}"


def test_a_withdrawn_scheme_leaves_the_profile_and_its_replacement_stays(api):
    user = a_user()
    extract(api, user, "我对高才通很感兴趣")

    said = extract(api, user, "我不考虑高才通了，改走优才")

    assert said["retracted_info"] == {"targetCategory": "TTPS"}
    assert said["extracted_info"] == {"targetCategory": "QMAS"}
    assert {(m["field"], m.get("retraction", False)) for m in said["saved_memories"]} == {
        ("targetCategory.TTPS", True), ("targetCategory.QMAS", False)}
    assert profile(api, user)["user_profile"]["immigration"]["targetCategories"] == ["QMAS"]
    # the withdrawn interest is history: superseded by the retraction, still read as of before it
    current = api.call("GET", f"/v1/users/{user}/memories").body["items"]
    retraction = next(m for m in current if m["retraction"])
    detail = api.call("GET", f"/v1/users/{user}/memories/{retraction['memory_key']}").body
    assert [(m["content"], m["superseded_by"]) for m in detail["history"] if m["content"] == "对高才通感兴趣"] == [
        ("对高才通感兴趣", retraction["memory_key"])]


def test_a_direct_save_whose_field_is_inferred_takes_the_scheme_back(api):
    user = a_user()
    extract(api, user, "我对高才通很感兴趣")

    saved = api.call("POST", f"/v1/users/{user}/memories",
                     {"memory_type": "INTENT", "content": "我对高才通已经不感兴趣了", "category": "TTPS"})

    assert saved.status == 201, saved.body
    assert (saved.body["memory"]["field"], saved.body["memory"]["retraction"]) == ("targetCategory.TTPS", True)
    assert "targetCategories" not in profile(api, user)["completeness"]["filled_fields"]


def test_a_retraction_without_a_field_is_refused_naming_it(api):
    refused = api.call("POST", f"/v1/users/{a_user()}/memories",
                       {"memory_type": "FACT", "content": "not any more", "retraction": True})

    assert refused.status == 422
    assert "retraction" in str(refused.body)


def test_leaving_hong_kong_altogether_takes_back_every_scheme(api):
    user = a_user()
    extract(api, user, "我对高才通和优才都感兴趣")

    said = extract(api, user, "我已经不想去香港了")

    assert said["saved_count"] == 1 and said["retracted_info"] == {"targetCategory": None}
    assert "targetCategories" not in profile(api, user)["completeness"]["filled_fields"]


@pytest.mark.parametrize("denial", ["I'm not allergic to peanuts",
                                    "I used to be allergic to peanuts but not anymore"])
def test_a_denied_allergy_is_no_allergy_and_ends_the_one_stated_before(packs_api, denial):
    user = a_user()
    extract(packs_api, user, "I'm allergic to peanuts.", tenant="globex")

    said = extract(packs_api, user, denial, tenant="globex")

    assert said["extracted_info"] == {} and said["retracted_info"] == {"allergy": "peanuts"}
    summary = profile(packs_api, user, tenant="globex")
    assert "allergies" not in summary["user_profile"]["health"]
    assert "allergic" not in summary["narrative_summary"]


@pytest.mark.parametrize(("owned", "ending"), [
    (["I have a dog called Mochi.", "I have a cat."], "My dog passed away last year"),
    (["我养了一只狗", "我养了一只猫"], "我的狗去年去世了"),
])
def test_a_pet_that_died_leaves_the_profile_and_the_others_stay(packs_api, owned, ending):
    user = a_user()
    for message in owned:
        extract(packs_api, user, message, tenant="globex")

    extract(packs_api, user, ending, tenant="globex")

    pets = profile(packs_api, user, tenant="globex")["user_profile"]["family"]["pets"]
    assert pets in (["cat"], ["猫"])


@pytest.mark.parametrize("denial", ["I don't have any pets", "我没有养宠物"])
def test_no_pets_at_all_ends_every_pet_and_says_nothing_about_children(packs_api, denial):
    user = a_user()
    extract(packs_api, user, "I have a cat.", tenant="globex")
    extract(packs_api, user, "I have a dog.", tenant="globex")

    said = extract(packs_api, user, denial, tenant="globex")

    assert said["retracted_info"] == {"pet": None} and "hasChildren" not in said["extracted_info"]
    family = profile(packs_api, user, tenant="globex")["user_profile"]["family"]
    assert "pets" not in family and family.get("hasChildren") is None


def test_a_job_quit_leaves_the_profile(packs_api):
    user = a_user()
    extract(packs_api, user, "I work as a data engineer at Google.", tenant="globex")

    said = extract(packs_api, user, "I quit my job at Google", tenant="globex")

    assert set(said["retracted_info"]) == {"currentJobTitle", "currentCompany"}
    assert said["skipped_sentences"] == []
    work = profile(packs_api, user, tenant="globex")["user_profile"]["work"]
    assert not work.get("jobTitle") and not work.get("company")


@pytest.mark.parametrize("message", ["My friend isn't allergic to nuts.", "如果我不走优才的话，还有什么选择？",
                                     "我同事说他老婆不想去香港", "It's not that I'm not interested in GEP."])
def test_somebody_elses_denial_a_condition_or_two_negations_take_nothing_back(api, message):
    user = a_user()
    extract(api, user, "我对专才很感兴趣")

    said = extract(api, user, message)

    assert "retracted_info" not in said
    assert profile(api, user)["user_profile"]["immigration"]["targetCategories"] == ["GEP"]
