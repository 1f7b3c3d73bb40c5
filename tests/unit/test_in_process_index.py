"""The serverless tier's cache: rebuilt on a content change, refreshed in place when reads are recorded."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.adapters.in_process_index import InProcessIndex
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t", user_id="u")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def indexed(refresh_seconds: float) -> tuple[InProcessIndex, InMemoryMemoryStore, Clock, str]:
    store, clock = InMemoryMemoryStore(), Clock()
    key = store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户32岁", field="age")).memory.memory_key
    index = InProcessIndex(store=store, embedder=lambda: None, access_refresh_seconds=refresh_seconds, clock=clock)
    index.current_memories(USER)  # built and cached
    return index, store, clock, key


def test_given_recorded_reads_then_the_cached_memories_get_the_new_statistics_without_a_rebuild():
    index, store, clock, key = indexed(refresh_seconds=10)
    store.record_access(USER, [key], datetime(2026, 11, 20, tzinfo=UTC))
    clock.now += 10

    (memory,) = index.current_memories(USER)

    assert memory.access_count == 1 and memory.last_accessed_at == datetime(2026, 11, 20, tzinfo=UTC)
    assert index.stats["misses"] == 1 and index.stats["access_refreshes"] == 1


def test_given_recorded_reads_within_the_refresh_interval_then_the_cache_is_served_as_it_is():
    index, store, clock, key = indexed(refresh_seconds=10)
    store.record_access(USER, [key], datetime(2026, 11, 20, tzinfo=UTC))
    clock.now += 5

    (memory,) = index.current_memories(USER)

    assert memory.access_count == 0 and "access_refreshes" not in index.stats


def test_given_a_content_change_then_the_index_is_rebuilt():
    index, store, _, _ = indexed(refresh_seconds=10)
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content="用户33岁", field="age"))

    assert [m.content for m in index.current_memories(USER)] == ["用户33岁"]
    assert index.stats["misses"] == 2
