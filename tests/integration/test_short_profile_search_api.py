"""Everyday questions over a short profile of extracted facts, over HTTP: the fact about what is asked comes first,
in the user's language or the other one."""

from __future__ import annotations

import pytest

USER = "/v1/users/short-profile-1"
PROFILE = [
    ("FACT", "User is 34 years old"),
    ("FACT", "Goes by Alex"),
    ("FACT", "I am Alex Chen"),
    ("FACT", "Currently based in Shanghai"),
    ("FACT", "就职于一家金融科技公司"),
    ("FACT", "Works as a product manager"),
    ("FACT", "Diet: vegetarian"),
    ("FACT", "Has a dog named Mochi"),
    ("PREFERENCE", "Likes black coffee in the morning"),
    ("PREFERENCE", "Prefers short answers by email"),
    ("FACT", "Speaks English and Mandarin"),
    ("FACT", "Allergic to peanuts"),
    ("INTENT", "Wants to run a marathon next year"),
    ("FACT", "Married, one daughter"),
    ("PREFERENCE", "Enjoys jazz concerts on weekends"),
    ("FACT", "Studied computer science at Fudan University"),
]


@pytest.fixture
def profile(api):
    response = api.call("POST", f"{USER}/memories/batch", {"memories": [
        {"memoryType": kind, "content": content} for kind, content in PROFILE]})
    assert response.status == 201, response.body
    return api


def first(api, query: str) -> str:
    response = api.call("POST", f"{USER}/memories/search", {"query": query, "limit": 3, "min_relevance_score": 0})
    assert response.status == 200, response.body
    return response.body["results"][0]["content_preview"]


@pytest.mark.parametrize(("query", "answer"), [
    ("pets", "Has a dog named Mochi"),
    ("is he allergic to anything?", "Allergic to peanuts"),
])
def test_an_everyday_question_finds_the_fact_about_it_first(profile, query, answer):
    assert first(profile, query) == answer
