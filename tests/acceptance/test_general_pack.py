"""The general pack (a personal assistant's memory), over HTTP as deployed, for a tenant on that pack: a Berlin
data engineer and a Chengdu nurse tell the assistant about themselves, and the profile, the categories, the
tools and the injected context are a personal assistant's, in the user's language."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.api_calls import (
    block_body,
    context_text,
    current_memories,
    extract,
    inject,
    is_chinese,
    ok,
    save,
    summarize,
)

# Every test here is a tenant on the general pack (conftest.py).
PACKS = ("general",)

SECTIONS = ["basic", "work", "family", "health", "preferences", "goals"]
# Three turns of each user's first conversation.
TURNS = {
    "en": ["Hi! I'm a data engineer in Berlin. Just call me Lena.",
           "I'm allergic to peanuts, so please never suggest recipes with them. I have a cat named Luna.",
           "Please always answer me in German. I'm planning to run a marathon next spring."],
    "zh": ["我叫李娜，大家都叫我娜娜。我住在成都，是华西医院的一名护士。",
           "我对花生过敏。我养了一只狗，叫豆豆。",
           "请用中文回答我。我打算明年学日语。"],
}


def introduced(api: Any, lang: str) -> str:
    user = f"u-{lang}"
    for turn in TURNS[lang]:
        extract(api, user, turn)
    return user


def by_field(api: Any, user: str) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for memory in current_memories(api, user):
        found.setdefault(memory["field"].split(".")[0] if memory["field"] else "", []).append(
            memory["metadata"].get("value"))
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_general_pack_an_introduction_fills_the_personal_profile(api, lang):
    user = introduced(api, lang)
    profile = summarize(api, user)

    assert list(profile["user_profile"]) == SECTIONS
    basic, health = profile["user_profile"]["basic"], profile["user_profile"]["health"]
    assert basic["location"] == {"en": "Berlin", "zh": "成都"}[lang]
    assert basic["preferredName"] == {"en": "Lena", "zh": "娜娜"}[lang]
    assert profile["user_profile"]["work"]["jobTitle"] == {"en": "data engineer", "zh": "护士"}[lang]
    assert health["allergies"] == [{"en": "peanuts", "zh": "花生"}[lang]]  # the allergy is in the profile
    assert profile["user_profile"]["family"]["pets"] == [{"en": "cat (Luna)", "zh": "狗 (豆豆)"}[lang]]
    assert profile["user_profile"]["preferences"]["preferredLanguage"] == {"en": "German", "zh": "中文"}[lang]
    assert len(profile["user_profile"]["goals"]["goals"]) == 1
    # completeness over the pack's own fields: what is asked of everybody, and what else the user said
    completeness = profile["completeness"]
    assert completeness["missing_fields"] == ["age", "maritalStatus", "hasChildren"]
    assert 60 <= completeness["score"] <= 80
    assert is_chinese(profile["narrative_summary"]) == (lang == "zh")
    assert {"en": "peanuts", "zh": "花生"}[lang] in profile["narrative_summary"]


def test_general_pack_the_german_answer_preference_is_saved_as_a_preference(api):
    body = extract(api, "u-de", "Please always answer me in German.")
    assert body["extracted_info"] == {"preferredLanguage": "German"}
    [memory] = current_memories(api, "u-de")
    assert (memory["memory_type"], memory["field"], memory["metadata"]["value"]) == (
        "PREFERENCE", "preferredLanguage", "German")


def test_general_pack_pets_is_a_category_and_any_short_text_or_none_is_too(api):
    pets = save(api, "u-cat", "FACT", "Has a cat named Luna", category="pets")
    travel = save(api, "u-cat", "INTENT", "Wants to visit Japan in April", category="travel plans")
    plain = save(api, "u-cat", "PREFERENCE", "Prefers tea to coffee")

    assert (pets["memory"]["category"], travel["memory"]["category"], plain["memory"]["category"]) == (
        "pets", "travel plans", None)
    schema = {t["name"]: t for t in ok(api.call("GET", "/v1/tools"))["tools"]}["save_user_memory"]["input_schema"]
    assert schema["properties"]["category"] == {"type": "string",
                                                "description": schema["properties"]["category"]["description"]}


def test_general_pack_two_allergies_and_two_pets_are_each_kept(api):
    extract(api, "u-two", "I'm allergic to penicillin and shellfish.")
    extract(api, "u-two", "I've got two cats and a rabbit.")
    extract(api, "u-two", "Oh, and I'm also allergic to peanuts.")

    fields = by_field(api, "u-two")
    assert sorted(fields["allergy"]) == ["peanuts", "penicillin", "shellfish"]
    assert sorted(fields["pet"]) == ["cat", "rabbit"]
    assert summarize(api, "u-two")["user_profile"]["health"]["allergies"] == ["penicillin", "shellfish", "peanuts"]


def test_general_pack_a_newer_value_supersedes_the_older(api):
    extract(api, "u-move", "I live in Berlin.")
    extract(api, "u-move", "I just moved to Munich.")
    assert by_field(api, "u-move")["currentLocation"] == ["Munich"]


def test_general_pack_inject_shows_the_allergy_when_food_comes_up(api):
    introduced(api, "en")
    result = inject(api, {"user_id": "u-en", "conversation_id": "c-1",
                          "current_user_message": "Can you suggest a quick dinner recipe with nuts?"})
    assert "peanuts" in block_body(context_text(result), "user_memory")


def test_general_pack_knowledge_is_retrieved_for_every_message(api):
    knowledge = [{"source": "Recipes", "similarity": 0.9, "content": "A peanut-free pad thai uses sunflower butter."}]
    result = inject(api, {"user_id": "u-k", "conversation_id": "c-1", "relevantKnowledge": knowledge,
                          "current_user_message": "What should I cook tonight?"})
    assert "relevant_knowledge" in result["injected_contexts"]


def test_general_pack_someone_elses_facts_are_not_the_users(api):
    body = extract(api, "u-other", "My brother is a doctor in Boston and my friend is allergic to cats.")
    assert body["saved_count"] == 0 and current_memories(api, "u-other") == []
