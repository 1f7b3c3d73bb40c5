"""The injected blocks' cache: a save invalidates the user_memory block, entries expire, and the shared layer is
written behind, off the caller's path, bounded, and never raising."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache
from agent_memory.api.inject import inject_context
from agent_memory.domain.models import MemoryType
from tests.fakes.inject import build, context_text, remember, request, user
from tests.fakes.store import InMemoryMemoryStore


def test_user_memory_is_cached_and_a_save_invalidates_it():
    store, who = InMemoryMemoryStore(), user("cache")
    remember(store, who, "用户在杭州工作", 80)
    inject = build(store).inject
    ask = request(user_id=who.user_id, current_user_message="我的情况怎么样？")

    first, second = inject_context(inject, who, ask), inject_context(inject, who, ask)
    remember(store, who, "用户计划明年申请", 85, MemoryType.INTENT)
    third = inject_context(inject, who, ask)

    def memory_block(result: Any) -> Any:
        return next(b for b in result.blocks if b.type == "user_memory")

    assert (memory_block(first).cached, memory_block(second).cached, memory_block(third).cached) == (
        False, True, False)
    assert "用户计划明年申请" in context_text(third) and "用户计划明年申请" not in context_text(second)


def test_the_context_cache_expires_entries():
    from agent_memory.ports import CachedContext

    cache = LayeredContextCache(local=LocalContextCache(max_entries=2), shared=None)
    who = user("ttl")
    cache.put(who, "k", CachedContext(content="x", created_at=0, expires_at=10))
    assert cache.get(who, "k", now=5) is not None and cache.get(who, "k", now=10) is None
    for key in ("a", "b", "c"):
        cache.put(who, key, CachedContext(content=key, created_at=0, expires_at=10))
    assert cache.get(who, "a", now=1) is None and cache.get(who, "c", now=1) is not None


class _SharedCache:
    """A shared layer whose puts wait until `release` is set, and may fail."""

    def __init__(self, *, fail: bool = False) -> None:
        self.entries: dict[str, Any] = {}
        self.release = threading.Event()
        self.fail = fail

    def get(self, user: Any, key: str, *, now: float) -> Any:
        return self.entries.get(key)

    def put(self, user: Any, key: str, entry: Any) -> None:
        self.release.wait(5)
        if self.fail:
            raise RuntimeError("table unreachable")
        self.entries[key] = entry


def test_given_a_writer_when_an_entry_is_put_then_the_shared_write_runs_off_the_callers_path():
    from agent_memory.ports import CachedContext

    shared, who = _SharedCache(), user("behind")
    with ThreadPoolExecutor(max_workers=1) as writer:
        cache = LayeredContextCache(local=LocalContextCache(), shared=shared, writer=writer)
        cache.put(who, "k", CachedContext(content="x", created_at=0, expires_at=10))  # returns while put waits
        assert cache.get(who, "k", now=1).content == "x" and "k" not in shared.entries
        shared.release.set()
        cache.flush(timeout=5)
        assert shared.entries["k"].content == "x"


def test_given_a_failing_shared_layer_when_written_behind_then_the_error_is_logged_not_raised(caplog):
    from agent_memory.ports import CachedContext

    shared = _SharedCache(fail=True)
    shared.release.set()
    with ThreadPoolExecutor(max_workers=1) as writer:
        cache = LayeredContextCache(local=LocalContextCache(), shared=shared, writer=writer)
        cache.put(user("fail"), "k", CachedContext(content="x", created_at=0, expires_at=10))
        cache.flush(timeout=5)
    assert shared.entries == {} and "context cache write failed" in caplog.text


def test_given_a_stuck_table_when_writes_pile_up_then_those_past_the_bound_are_skipped():
    from agent_memory.adapters.context_cache import MAX_PENDING_WRITES
    from agent_memory.ports import CachedContext

    shared, who = _SharedCache(), user("stuck")
    with ThreadPoolExecutor(max_workers=1) as writer:
        cache = LayeredContextCache(local=LocalContextCache(), shared=shared, writer=writer)
        for i in range(MAX_PENDING_WRITES + 5):
            cache.put(who, f"k{i}", CachedContext(content=str(i), created_at=0, expires_at=10))
        shared.release.set()
        cache.flush(timeout=5)
    assert len(shared.entries) == MAX_PENDING_WRITES
    assert cache.get(who, f"k{MAX_PENDING_WRITES + 4}", now=1) is not None  # the local layer has them all


def test_given_a_shut_down_writer_when_an_entry_is_put_then_it_is_written_in_the_callers_thread():
    from agent_memory.ports import CachedContext

    shared = _SharedCache()
    shared.release.set()
    writer = ThreadPoolExecutor(max_workers=1)
    writer.shutdown()
    cache = LayeredContextCache(local=LocalContextCache(), shared=shared, writer=writer)
    cache.put(user("exit"), "k", CachedContext(content="x", created_at=0, expires_at=10))
    assert shared.entries["k"].content == "x"
