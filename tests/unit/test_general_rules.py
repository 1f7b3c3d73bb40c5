"""The general pack's offline rules: everyday personal statements in English and Chinese, each read into the
pack's field and worded as the user says it; list fields one memory per value; nothing from somebody else's
facts, wishes, questions or the past."""

from __future__ import annotations

import pytest

from agent_memory.domain.models import MemoryType
from agent_memory.domain.packs import pack_named
from agent_memory.extraction import OfflineExtractor
from agent_memory.ports import ConversationTurn

GENERAL = OfflineExtractor(pack_named("general").extraction)


def read(message: str, assistant: str = "") -> list[tuple[str, str, object]]:
    found = GENERAL.extract(ConversationTurn(user_message=message, assistant_message=assistant))
    return [(m.memory_type.value, m.field or "", m.value) for m in found]


# The agreed example of every field of the pack, in both languages.
@pytest.mark.parametrize(("message", "memory_type", "field", "value"), [
    ("Call me Sam", "FACT", "preferredName", "Sam"),
    ("叫我小王就行", "FACT", "preferredName", "小王"),
    ("I'm 34", "FACT", "age", 34),
    ("我今年34岁", "FACT", "age", 34),
    ("I live in Berlin", "FACT", "currentLocation", "Berlin"),
    ("我住在成都", "FACT", "currentLocation", "成都"),
    ("I'm Canadian", "FACT", "nationality", "Canadian"),
    ("我是新加坡人", "FACT", "nationality", "新加坡"),
    ("I work as a data engineer", "FACT", "currentJobTitle", "data engineer"),
    ("我是一名护士", "FACT", "currentJobTitle", "护士"),
    ("I work at Siemens", "FACT", "currentCompany", "Siemens"),
    ("我在腾讯上班", "FACT", "currentCompany", "腾讯"),
    ("I have a master's degree", "FACT", "education", "Master's"),
    ("我本科毕业", "FACT", "education", "本科"),
    ("I'm married", "FACT", "maritalStatus", "married"),
    ("我已婚", "FACT", "maritalStatus", "已婚"),
    ("I have two kids", "FACT", "hasChildren", True),
    ("我没有孩子", "FACT", "hasChildren", False),
    ("I have a cat named Luna", "FACT", "pet", "cat (Luna)"),
    ("我养了一只狗", "FACT", "pet", "狗"),
    ("I'm allergic to peanuts", "FACT", "allergy", "peanuts"),
    ("我对花生过敏", "FACT", "allergy", "花生"),
    ("I have type 2 diabetes", "FACT", "healthCondition", "type 2 diabetes"),
    ("我有高血压", "FACT", "healthCondition", "高血压"),
    ("I'm vegetarian", "PREFERENCE", "diet", "vegetarian"),
    ("我吃素", "PREFERENCE", "diet", "素食"),
    ("我会说粤语", "FACT", "languageSkills", "粤语"),
    ("Please always answer me in German", "PREFERENCE", "preferredLanguage", "German"),
    ("请用中文回答我", "PREFERENCE", "preferredLanguage", "中文"),
    ("Keep your answers short", "PREFERENCE", "responseStyle", "short"),
    ("回答简短一点", "PREFERENCE", "responseStyle", "简短"),
    ("Email me rather than calling", "PREFERENCE", "communicationChannel", "email"),
    ("微信联系我", "PREFERENCE", "communicationChannel", "微信"),
    ("I prefer Python over Java", "PREFERENCE", "preference", "Python"),
    ("我喜欢喝绿茶", "PREFERENCE", "preference", "绿茶"),
    ("I hate cilantro", "PREFERENCE", "dislike", "cilantro"),
    ("我不喜欢香菜", "PREFERENCE", "dislike", "香菜"),
    ("I'm planning to run a marathon next spring", "INTENT", "goal", "run a marathon"),
    ("我打算明年学日语", "INTENT", "goal", "学日语"),
])
def test_given_a_statement_of_a_field_then_the_general_rules_read_it_as_said(message, memory_type, field, value):
    assert read(message) == [(memory_type, field, value)]


def test_given_a_list_of_values_then_each_is_a_memory_of_its_own():
    assert read("I speak French and Spanish.") == [("FACT", "languageSkills", "French"),
                                                   ("FACT", "languageSkills", "Spanish")]
    assert read("I'm allergic to penicillin and shellfish.") == [("FACT", "allergy", "penicillin"),
                                                                 ("FACT", "allergy", "shellfish")]
    assert read("我对青霉素过敏，还有点花粉过敏。") == [("FACT", "allergy", "青霉素"), ("FACT", "allergy", "花粉")]
    assert read("I've got two cats and a rabbit.") == [("FACT", "pet", "cat"), ("FACT", "pet", "rabbit")]


def test_given_a_diet_and_a_liking_in_one_turn_then_both_and_the_option_turned_down_is_not_liked():
    assert read("I'm vegetarian and I prefer Python over Java.") == [("PREFERENCE", "diet", "vegetarian"),
                                                                    ("PREFERENCE", "preference", "Python")]


def test_given_a_berlin_engineers_introduction_then_every_fact_is_read():
    found = read("Hi! I'm a data engineer in Berlin. Just call me Lena. I'm allergic to peanuts and I have a cat. "
                 "Please always answer me in German.")
    assert set(found) == {("FACT", "currentJobTitle", "data engineer"), ("FACT", "currentLocation", "Berlin"),
                          ("FACT", "preferredName", "Lena"), ("FACT", "allergy", "peanuts"), ("FACT", "pet", "cat"),
                          ("PREFERENCE", "preferredLanguage", "German")}


@pytest.mark.parametrize("message", [
    "My friend is allergic to cats.", "我朋友对猫过敏。", "我妈有高血压。", "My brother is a doctor in Boston.",
    "If I were rich I'd move to Italy.", "如果我有钱，我就去环游世界。", "What's the weather like in Berlin tomorrow?",
    "I used to live in Paris.", "我以前在北京住过三年。",
    "I'm flying to Tokyo next week.", "Help me write an email to my boss.", "I want to make pasta tonight.",
    "帮我写一封请假邮件。", "Thanks, that was really helpful!", "I'd like to book a table for two.",
])
def test_given_no_statement_of_the_users_own_then_nothing_is_read(message):
    assert read(message) == []


def test_given_a_terse_answer_then_the_assistants_question_says_what_it_fills():
    assert read("Just tree nuts.", "Do you have any food allergies?") == [("FACT", "allergy", "tree nuts")]
    assert read("Hamburg.", "Where are you based?") == [("FACT", "currentLocation", "Hamburg")]
    assert read("不吃牛肉。", "有什么忌口吗？") == [("PREFERENCE", "diet", "不吃牛肉")]


def test_the_general_rules_never_read_the_immigration_fields():
    found = read("我35岁，想申请高才通，明年就走，我在香港有雇主，预算200万")
    assert {field for _, field, _ in found} <= {"age", "goal", "currentLocation"}
    assert ("FACT", "age", 35) in found


def test_the_immigration_pack_reads_as_it_did():
    immigration = OfflineExtractor()
    found = immigration.extract(ConversationTurn(user_message="我对高才通B类非常感兴趣,希望尽快办理"))
    assert [(m.memory_type, m.field, m.value) for m in found] == [
        (MemoryType.INTENT, "targetCategory", "TTPS"), (MemoryType.PREFERENCE, "immigrationTimeline", "尽快")]
