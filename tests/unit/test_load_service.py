"""The load service over the in-memory fakes: ranking by importance and relevance, and the profile summary."""

from __future__ import annotations

from agent_memory.domain.models import MemoryType, NewMemory
from agent_memory.services.load import profile_summary
from tests.fakes.services import USER, services


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
