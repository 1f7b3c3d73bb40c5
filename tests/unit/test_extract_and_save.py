"""Save and load services over the in-memory fakes."""

from __future__ import annotations

import pytest

from agent_memory.bootstrap import build_services, read_fields
from agent_memory.domain.models import ExtractedMemory, MemoryType, NewMemory, SaveOutcome, ScopeRef
from agent_memory.domain.profile import build_profile
from agent_memory.extraction import OfflineExtractor
from agent_memory.ports import ConversationTurn
from agent_memory.services.load import LoadService, profile_summary
from agent_memory.services.save import SaveService
from agent_memory.settings import Settings
from tests.fakes.extractor import FakeExtractor
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t", user_id="u")


def extracted(field: str | None, content: str, value: object = None, memory_type: str = "FACT") -> ExtractedMemory:
    return ExtractedMemory(memory_type=MemoryType(memory_type), content=content, field=field, value=value)


def services(memories: list[ExtractedMemory]) -> tuple[SaveService, LoadService, InMemoryMemoryStore, FakeExtractor]:
    store, extractor = InMemoryMemoryStore(), FakeExtractor(memories)
    built = build_services(Settings(), store=store, extractor=extractor, embedder=None, synonyms=None)
    return built.save, built.load, store, extractor


def test_extract_reports_the_save_info_output_and_stores_values_in_metadata():
    save, _, store, extractor = services(
        [extracted("age", "用户32岁", 32), extracted("major", "专业：计算机", "计算机")]
    )

    output = save.extract_and_save(USER, ConversationTurn(user_message="..."), conversation_id="c-1")

    assert output.model_dump() == {
        "action": "save_info",
        "extracted_info": {"age": 32, "major": "计算机"},
        "saved_count": 2,
        "saved_memories": [
            {"memoryType": MemoryType.FACT, "content": "用户32岁", "field": "age"},
            {"memoryType": MemoryType.FACT, "content": "专业：计算机", "field": "major"},
        ],
        "skipped_fields": [],
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
    built = build_services(Settings(), store=InMemoryMemoryStore(), embedder=None, synonyms=None)
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


def test_warm_up_builds_the_extractor_once():
    built = []
    store = InMemoryMemoryStore()

    def provider() -> FakeExtractor:
        built.append(1)
        return FakeExtractor()

    from functools import cache

    save = SaveService(store=store, extractor=cache(provider))
    save.warm_up()
    save.extract_and_save(USER, ConversationTurn(user_message="hi"))
    assert built == [1]


def test_load_ranks_by_importance_and_relevance_and_counts_all():
    _, load, store, _ = services([])
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户32岁", field="age"))
    store.save(USER, NewMemory(memory_type=MemoryType.INTENT, content="对高才通B类非常感兴趣", category="TTPS"))
    store.save(USER, NewMemory(memory_type=MemoryType.PREFERENCE, content="希望尽快办理"))

    by_relevance = load.load_context(USER, "高才通", limit=2)
    assert [m.content for m in by_relevance.memories] == ["对高才通B类非常感兴趣", "用户32岁"]
    assert by_relevance.total_memories == 3

    by_importance = load.load_context(USER, "", limit=3)
    assert [m.importance for m in by_importance.memories] == [80, 70, 60]


def test_profile_summary_needs_enough_fields_and_keeps_the_language():
    _, _, store, _ = services([])
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户32岁", field="age"))
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="目前在杭州", field="currentLocation"))
    assert profile_summary(store.all_current(USER)) is None
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="最高学历：硕士", field="education"))
    assert profile_summary(store.all_current(USER)) == "用户32岁，最高学历：硕士，目前在杭州。"


def test_snapshot_warm_up_registers_only_on_lambda(monkeypatch):
    import sys
    import types

    from agent_memory.api.http import warm_before_snapshot
    from agent_memory.observability import tracer

    registered = []
    monkeypatch.setitem(sys.modules, "snapshot_restore_py",
                        types.SimpleNamespace(register_before_snapshot=registered.append))
    warm_before_snapshot(print)
    assert registered == [tracer.warm, print]  # the tracer's patching precedes the clients `warm` makes
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)  # not on Lambda: import fails
    warm_before_snapshot(print)
    assert registered == [tracer.warm, print]


def test_given_a_category_outside_the_configured_set_then_the_save_is_a_422_and_nothing_is_written():
    from agent_memory.errors import InvalidInput
    from agent_memory.services.save import SaveService

    store = InMemoryMemoryStore()
    service = SaveService(store=store, extractor=lambda: None, categories=["TTPS", "QMAS"])  # type: ignore[arg-type]
    who = ScopeRef(tenant_id="t", user_id="categories")
    with pytest.raises(InvalidInput) as raised:
        service.save_batch(who, [NewMemory(memory_type=MemoryType.INTENT, content="想走高才通", category="ttps"),
                                 NewMemory(memory_type=MemoryType.INTENT, content="想走EB5", category="EB5")])
    assert raised.value.details == [{"field": "memories.1.category", "type": "enum",
                                     "message": "must be one of TTPS, QMAS"}]
    assert store.all_current(who) == []
    saved = service.save(who, NewMemory(memory_type=MemoryType.INTENT, content="想走高才通", category="ttps"))
    assert saved.memory.category == "TTPS"  # the configured spelling
    anything = SaveService(store=store, extractor=lambda: None, categories=[])  # type: ignore[arg-type]
    assert anything.save(who, NewMemory(memory_type=MemoryType.INTENT, content="想走EB5", category="EB5")).memory


def test_categories_come_from_the_environment_as_a_list_or_comma_separated(monkeypatch):
    from agent_memory.settings import Settings

    monkeypatch.setenv("MEMORY_CATEGORIES", "PHASE1, PHASE2")
    assert Settings().memory_categories == ["PHASE1", "PHASE2"]
    monkeypatch.setenv("MEMORY_CATEGORIES", '["A","B"]')
    assert Settings().memory_categories == ["A", "B"]
    monkeypatch.delenv("MEMORY_CATEGORIES")
    assert Settings().memory_categories == ["QMAS", "GEP", "IANG", "TTPS", "CIES", "TECHTAS"]


def inferring(store: InMemoryMemoryStore, extractor: object = None) -> SaveService:
    return SaveService(store=store, extractor=lambda: extractor or OfflineExtractor(),  # type: ignore[arg-type,return-value]
                       field_reader=read_fields)


def test_given_the_four_memories_of_the_profile_scenario_saved_without_field_then_the_profile_is_filled():
    store = InMemoryMemoryStore()
    save = inferring(store)
    save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户35岁"))
    save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="本科毕业于浙江大学"))
    save.save(USER, NewMemory(memory_type=MemoryType.INTENT, content="对高才通B类感兴趣", category="TTPS"))
    save.save(USER, NewMemory(memory_type=MemoryType.PREFERENCE, content="希望尽快办理"))

    profile = build_profile(store.all_current(USER))

    assert profile.user_profile["basic"] == {"age": "35岁", "education": "学士", "university": "浙江大学"}
    assert profile.user_profile["immigration"] == {"targetCategories": ["TTPS"], "timeline": "尽快"}
    assert profile.completeness.score > 0
    assert profile_summary(store.all_current(USER)) is not None


def test_given_a_direct_age_then_an_extracted_one_then_only_the_newer_is_current():
    store = InMemoryMemoryStore()
    save = inferring(store)
    save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户32岁"))

    save.extract_and_save(USER, ConversationTurn(user_message="我今年33岁"))

    assert [m.content for m in store.all_current(USER)] == ["用户33岁"]


def test_given_turns_of_a_transcript_then_no_field_is_inferred_and_none_retires_another():
    store = InMemoryMemoryStore()
    save = inferring(store)
    save.save_batch(USER, [NewMemory(memory_type=MemoryType.FACT, content=text, conversation_id="c1",
                                     source="transcript")
                           for text in ("Caroline: I'm 29", "Caroline: I'm 30 now")])

    assert [(m.field, m.content) for m in store.all_current(USER)] == [
        (None, "Caroline: I'm 29"), (None, "Caroline: I'm 30 now")]


def test_given_a_memory_saved_with_a_conversation_id_then_its_field_is_read_and_a_newer_one_supersedes_it():
    store = InMemoryMemoryStore()
    save = inferring(store)
    first = save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户今年32岁", conversation_id="c1",
                                      source="conversation"))
    newer = save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户今年33岁", conversation_id="c2",
                                      source="conversation"))

    assert first.memory.field == "age"
    assert newer.outcome is SaveOutcome.SUPERSEDED and newer.superseded.memory_key == first.memory.memory_key
    assert [m.content for m in store.all_current(USER)] == ["用户今年33岁"]


def test_given_a_field_the_caller_named_then_it_is_kept_as_given():
    store = InMemoryMemoryStore()
    result = inferring(store).save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户35岁", field="custom"))
    assert result.memory.field == "custom" and "field_inferred" not in result.memory.metadata


def test_extracted_memories_keep_the_question_they_answer_as_search_context():
    save, _, store, _ = services([extracted("age", "用户32岁", 32)])

    save.extract_and_save(USER, ConversationTurn(user_message="32", assistant_message="请问您今年多大？"))

    assert [m.context for m in store.all_current(USER)] == ["请问您今年多大？"]
    long = "问" * 5000
    save2, _, store2, _ = services([extracted("major", "专业：计算机", "计算机")])
    save2.extract_and_save(USER, ConversationTurn(user_message="计算机", assistant_message=long))
    assert len(store2.all_current(USER)[0].context.encode()) <= 8 * 1024


def test_given_turns_saved_one_call_each_then_each_gets_the_turn_before_it_as_context():
    store = InMemoryMemoryStore()
    save = inferring(store)
    turns = ["Joanna: How long have you had the turtles?", "Nate: Three years now!", "Joanna: Wow, that long?"]
    for text in turns:
        save.save(USER, NewMemory(memory_type=MemoryType.FACT, content=text, conversation_id="c1"))
    save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="Nate: New topic", conversation_id="c2"))
    save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="Nate: As said", conversation_id="c1",
                              context="a context the caller gave"))

    contexts = {m.content: m.context for m in store.all_current(USER)}
    assert contexts == {turns[0]: None, turns[1]: turns[0], turns[2]: turns[1], "Nate: New topic": None,
                        "Nate: As said": "a context the caller gave"}


def test_given_a_batch_resent_after_a_partial_write_then_no_turn_becomes_its_own_context():
    store = InMemoryMemoryStore()
    save = inferring(store)
    first = NewMemory(memory_type=MemoryType.FACT, content="Joanna: Hi Nate!", conversation_id="c1")
    save.save(USER, first)
    batch = [NewMemory(memory_type=MemoryType.FACT, content=text, conversation_id="c1")
             for text in ("Nate: Hey Joanna!", "Joanna: How are the turtles?")]
    save.save_batch(USER, batch[:1])  # the first attempt wrote one item
    save.save_batch(USER, batch)  # resent whole: the written one is recognised, the other links to it

    contexts = {m.content: m.context for m in store.all_current(USER)}
    assert contexts == {"Joanna: Hi Nate!": None, "Nate: Hey Joanna!": "Joanna: Hi Nate!",
                        "Joanna: How are the turtles?": "Nate: Hey Joanna!"}


def test_given_the_turn_before_beyond_the_recent_memories_then_no_context_is_guessed():
    from agent_memory.services.save import RECENT_TURNS

    store = InMemoryMemoryStore()
    save = inferring(store)
    save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="Joanna: Hi!", conversation_id="old"))
    save.save_batch(USER, [NewMemory(memory_type=MemoryType.FACT, content=f"note {i}") for i in range(RECENT_TURNS)])
    result = save.save(USER, NewMemory(memory_type=MemoryType.FACT, content="Nate: Hello", conversation_id="old"))

    assert result.memory.context is None
