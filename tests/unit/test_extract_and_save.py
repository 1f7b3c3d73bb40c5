"""Extract and save over the in-memory fakes: what save_info reports, which fields are skipped, stored or
superseded, and which memories add up instead."""

from __future__ import annotations

import pytest

from agent_memory.api.save import SaveInfoOutput
from agent_memory.domain.models import ExtractedMemory, MemoryType, NewMemory
from agent_memory.ports import ConversationTurn
from agent_memory.settings import Settings
from tests.fakes.services import USER, extracted, services, services_over_fakes
from tests.fakes.store import InMemoryMemoryStore


def test_extract_reports_the_save_info_output_and_stores_values_in_metadata():
    save, _, store, extractor = services(
        [extracted("age", "用户32岁", 32), extracted("major", "专业：计算机", "计算机")]
    )

    output = save.extract_and_save(USER, ConversationTurn(user_message="..."), conversation_id="c-1")

    assert SaveInfoOutput.of(output).model_dump() == {
        "action": "save_info",
        "extracted_info": {"age": 32, "major": "计算机"},
        "saved_count": 2,
        "saved_memories": [
            {"memoryType": MemoryType.FACT, "content": "用户32岁", "field": "age"},
            {"memoryType": MemoryType.FACT, "content": "专业：计算机", "field": "major"},
        ],
        "skipped_fields": [],
        "skipped_sentences": [],
        "note": None,
    }
    stored = {m.field: m for m in store.all_current(USER)}
    assert stored["age"].metadata["value"] == 32
    assert stored["age"].source == "conversation" and stored["age"].conversation_id == "c-1"
    assert extractor.turns[0].user_message == "..."


def test_fields_known_to_the_caller_are_skipped_and_not_stored():
    save, _, store, _ = services([extracted("age", "用户32岁", 32), extracted("major", "专业：计算机", "计算机")])

    output = save.extract_and_save(USER, ConversationTurn(user_message="...", existing_info={"age": 32, "x": ""}))

    assert output.skipped_fields == ["age"]
    assert [m.field for m in store.all_current(USER)] == ["major"]


def test_a_known_field_the_turn_changes_is_saved_and_supersedes_the_stored_value():
    save, _, store, _ = services([extracted("age", "用户33岁", 33), extracted("city", "现居伦敦", "London ")])
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户30岁", field="age"))

    output = save.extract_and_save(USER, ConversationTurn(user_message="我今年33岁",
                                                          existing_info={"age": "30", "city": "london"}))

    assert output.skipped_fields == ["city"]
    assert output.extracted_info == {"age": 33}
    assert [m.content for m in store.all_current(USER)] == ["用户33岁"]


@pytest.mark.parametrize(("known", "stated", "same"), [
    (30, "30", True), ("30.0", 30, True), ("London", " london ", True), (True, "true", True),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True), (30, 33, False), ("London", "Paris", False), ("30", "30岁", False),
])
def test_same_value_compares_what_caller_and_extraction_write(known, stated, same):
    from agent_memory.services.save import same_value

    assert same_value(known, stated) is same


def test_likings_dislikes_and_allergies_add_up_instead_of_superseding_each_other():
    built = services_over_fakes(Settings(), store=InMemoryMemoryStore(), embedder=None)
    for message in ("我喜欢打篮球", "我喜欢游泳", "I hate spicy food", "I don't like long emails",
                    "I'm allergic to peanuts", "我对猫过敏", "I'm vegetarian"):
        built.save.extract_and_save(USER, ConversationTurn(user_message=message))
    built.save.save(USER, NewMemory(memory_type=MemoryType.PREFERENCE, content="I love jazz"))

    current = {m.content for m in built.store.all_current(USER)}
    assert current == {"喜欢打篮球", "喜欢游泳", "Dislikes spicy food", "Dislikes long emails", "Allergic to peanuts",
                       "对猫过敏", "Diet: vegetarian", "I love jazz"}


def test_free_form_memories_have_no_upsert_slot():
    save, _, store, _ = services([
        extracted("other", "希望尽快办理", memory_type="PREFERENCE"),
        extracted("other", "喜欢香港的生活节奏", memory_type="PREFERENCE"),
    ])

    output = save.extract_and_save(USER, ConversationTurn(user_message="..."))

    assert output.saved_count == 2 and len(store.all_current(USER)) == 2
    assert all(m.field is None for m in store.all_current(USER))


def test_given_the_offline_rules_then_the_answer_lists_the_sentences_they_read_nothing_and_says_an_llm_reads_more():
    from agent_memory.api.save import OFFLINE_RULES_NOTE

    built = services_over_fakes(Settings(), store=InMemoryMemoryStore(), embedder=None)

    output = built.save.extract_and_save(USER, ConversationTurn(
        user_message="Hi! I'm allergic to peanuts. My friend is allergic to cats.\n我在跑马拉松。"))

    answer = SaveInfoOutput.of(output)
    assert answer.extracted_info == {"allergy": "peanuts"}
    assert answer.skipped_sentences == ["Hi!", "My friend is allergic to cats.", "我在跑马拉松。"]
    assert answer.note == OFFLINE_RULES_NOTE and "LLM_PROVIDER" in answer.note


def test_given_an_llm_extractor_then_sentences_its_memories_came_from_are_not_listed_even_when_not_saved_and_no_note():
    save, _, _, _ = services([extracted("age", "User is 34", 34),
                              extracted(None, "Enjoys long walks by the sea", None, "PREFERENCE")])

    output = save.extract_and_save(USER, ConversationTurn(
        user_message="Good morning. I'm 34. I love walking by the sea. Any tips for Lisbon?",
        existing_info={"age": 34}))

    answer = SaveInfoOutput.of(output)
    assert answer.skipped_fields == ["age"]  # known already: its sentence still gave it
    assert answer.skipped_sentences == ["Good morning.", "Any tips for Lisbon?"]
    assert answer.note is None


def test_given_an_llm_provider_configured_then_the_answer_has_no_offline_note(monkeypatch):
    import agent_memory.adapters.llm as llm
    from tests.fakes.extractor import FakeExtractor

    monkeypatch.setattr(llm, "build_extractor", lambda settings, **_: FakeExtractor([]))
    built = services_over_fakes(Settings(llm_provider="anthropic", anthropic_api_key="sk-ant-test"),
                                store=InMemoryMemoryStore(), embedder=None)

    answer = SaveInfoOutput.of(built.save.extract_and_save(USER, ConversationTurn(user_message="Hello there.")))

    assert (answer.skipped_sentences, answer.note) == (["Hello there."], None)


def test_extract_reports_the_slot_each_memory_is_stored_under_as_save_and_search_answer_it():
    built = services_over_fakes(Settings(), store=InMemoryMemoryStore(), embedder=None)

    output = SaveInfoOutput.of(built.save.extract_and_save(USER, ConversationTurn(user_message="I prefer tea")))
    again = built.save.extract_and_save(USER, ConversationTurn(user_message="I prefer tea"))

    stored = [m.field for m in built.store.all_current(USER)]
    assert stored == ["preference.tea"]
    assert [m.field for m in output.saved_memories] == stored
    assert output.extracted_info == {"preference": "tea"}  # the field read, and its value
    assert again.skipped_fields == stored  # said already: named by its slot too


def test_a_retraction_supersedes_its_slot_and_says_so_and_a_whole_list_field_ends_every_item():
    cat = ExtractedMemory(memory_type=MemoryType.FACT, content="Has a cat", field="allergy", value="cats")
    save, _, store, extractor = services([cat])
    save.extract_and_save(USER, ConversationTurn(user_message="I'm allergic to cats"))
    extractor.memories = [ExtractedMemory(memory_type=MemoryType.FACT, content="Allergic to dust", field="allergy",
                                          value="dust")]
    save.extract_and_save(USER, ConversationTurn(user_message="and to dust"))
    extractor.memories = [ExtractedMemory(memory_type=MemoryType.FACT, content="I'm not allergic to cats",
                                          field="allergy", value="cats", retraction=True)]

    output = save.extract_and_save(USER, ConversationTurn(user_message="I'm not allergic to cats"))

    assert (output.extracted_info, output.retracted_info) == ({}, {"allergy": "cats"})
    current = {m.content: m for m in store.all_current(USER)}
    assert set(current) == {"Allergic to dust", "I'm not allergic to cats"}
    assert current["I'm not allergic to cats"].retraction
    retired = next(m for m in store.all_versions(USER) if m.content == "Has a cat")
    assert retired.superseded_by == current["I'm not allergic to cats"].memory_key

    extractor.memories = [ExtractedMemory(memory_type=MemoryType.FACT, content="No allergies at all", field="allergy",
                                          retraction=True)]
    save.extract_and_save(USER, ConversationTurn(user_message="I have no allergies at all"))

    assert {m.content for m in store.all_current(USER)} == {"I'm not allergic to cats", "No allergies at all"}
    assert next(m for m in store.all_versions(USER) if m.content == "Allergic to dust").is_deleted
