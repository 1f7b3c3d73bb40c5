"""Extraction over HTTP with the offline rules: the statements a user found missed when saved through the API."""

from __future__ import annotations

import uuid

import pytest

TURNS = [
    ("", "我英语还可以，雅思考过7分", "languageSkills", "英语还可以，雅思7分"),
    ("", "My English is fine, IELTS 7", "languageSkills", "fine English, IELTS 7"),
    ("", "最好能在明年年底前拿到身份", "immigrationTimeline", "明年年底前"),
    ("", "可能过几年再考虑吧", "immigrationTimeline", "过几年"),
    ("Do you currently have a job offer from a Hong Kong company?", "Yes, from HSBC", "hasHKEmployer", True),
    ("", "叫我小王就行", "preferredName", "小王"),
    ("", "just call me Wang", "preferredName", "Wang"),
    ("How long have you been in this line of work?", "about 10 years now", "totalYearsOfExperience", 10),
]


@pytest.mark.parametrize(("assistant", "user", "field", "value"), TURNS)
def test_given_a_statement_the_rules_used_to_miss_when_extracted_over_http_then_its_field_is_saved(
        api, assistant, user, field, value):
    said = api.call("POST", f"/v1/users/u-kinds-{uuid.uuid4().hex[:8]}/memories/extract",
                    {"userMessage": user, "assistantMessage": assistant})

    assert said.status == 200, said.body
    assert said.body["extracted_info"] == {field: value}
    assert [m["field"] for m in said.body["saved_memories"]] == [field]


def test_given_a_yes_to_a_question_about_the_users_husband_when_extracted_over_http_then_nothing_is_saved(api):
    said = api.call("POST", "/v1/users/u-kinds-husband/memories/extract",
                    {"userMessage": "Yes", "assistantMessage": "Does your husband have a Hong Kong employer?"})

    assert (said.status, said.body["saved_count"], said.body["extracted_info"]) == (200, 0, {})
