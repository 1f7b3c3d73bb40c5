"""Fields read from what a memory says when the caller names none, and what a read field supersedes."""

from __future__ import annotations

from agent_memory.domain.models import MemoryType, NewMemory, SaveOutcome
from agent_memory.domain.profile.profile import build_profile
from agent_memory.ports import ConversationTurn
from agent_memory.services.load import profile_summary
from tests.fakes.services import USER, inferring
from tests.fakes.store import InMemoryMemoryStore


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
