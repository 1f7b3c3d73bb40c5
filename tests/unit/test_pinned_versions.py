"""Version counters pinned for a request: read once inside `pinned_versions()`, every time outside it."""

from __future__ import annotations

import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from agent_memory.adapters.pinned_versions import VersionPinningStore, pinned_versions
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef, StoreVersions
from tests.fakes.store import InMemoryMemoryStore

ALICE = ScopeRef(tenant_id="t-pins", user_id="alice")
BOB = ScopeRef(tenant_id="t-pins", user_id="bob")


class CountingStore(InMemoryMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads: list[ScopeRef] = []
        self.fail_next = False
        self.gate: threading.Event | None = None

    def versions(self, user: ScopeRef) -> StoreVersions:
        self.reads.append(user)
        if self.gate is not None:
            self.gate.wait(5)
        if self.fail_next:
            self.fail_next = False
            raise ConnectionError("table unreachable")
        return super().versions(user)


def save(store: InMemoryMemoryStore, user: ScopeRef, content: str) -> None:
    store.save(user, NewMemory(memory_type=MemoryType.FACT, content=content))


def test_outside_a_request_every_ask_reads_the_store():
    inner = CountingStore()
    store = VersionPinningStore(inner)
    save(store, ALICE, "likes tea")

    assert store.versions(ALICE).content == 1
    save(store, ALICE, "likes coffee")
    assert store.versions(ALICE).content == 2 and store.user_version(ALICE) == 2
    assert inner.reads == [ALICE, ALICE]  # user_version outside a request is the store's own


def test_inside_a_request_each_user_is_read_once_and_keeps_that_version():
    inner = CountingStore()
    store = VersionPinningStore(inner)
    save(store, ALICE, "likes tea")

    with pinned_versions():
        first = store.versions(ALICE)
        save(inner, ALICE, "likes coffee")  # a save during the request
        assert store.versions(ALICE) == first and store.user_version(ALICE) == 1
        assert store.versions(BOB).content == 0
    assert inner.reads == [ALICE, BOB]
    assert store.versions(ALICE).content == 2  # the next request sees the save


def test_threads_running_in_the_requests_context_share_its_pins_and_concurrent_first_asks_read_once():
    inner = CountingStore()
    store = VersionPinningStore(inner)
    save(store, ALICE, "likes tea")
    inner.gate = threading.Event()

    with pinned_versions(), ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(contextvars.copy_context().run, store.versions, ALICE) for _ in range(4)]
        inner.gate.set()
        assert {f.result().content for f in futures} == {1}
        assert pool.submit(store.versions, ALICE).result().content == 1  # no context: reads, unpinned
    assert inner.reads == [ALICE, ALICE]


def test_a_failed_read_is_raised_and_not_pinned():
    inner = CountingStore()
    store = VersionPinningStore(inner)

    with pinned_versions():
        inner.fail_next = True
        with pytest.raises(ConnectionError):
            store.versions(ALICE)
        assert store.versions(ALICE).content == 0
    assert inner.reads == [ALICE, ALICE]


def test_a_nested_scope_keeps_the_outer_pins():
    inner = CountingStore()
    store = VersionPinningStore(inner)

    with pinned_versions():
        store.versions(ALICE)
        with pinned_versions():
            store.versions(ALICE)
        store.versions(ALICE)
    assert inner.reads == [ALICE]


def test_every_other_call_reaches_the_store_unchanged():
    inner = CountingStore()
    store = VersionPinningStore(inner)
    save(store, ALICE, "likes tea")
    [result] = store.save_many(ALICE, [NewMemory(memory_type=MemoryType.FACT, content="likes jazz")])
    memory = result.memory

    assert store.get(ALICE, memory.memory_key) == memory
    assert store.history(ALICE, memory) == [memory]
    assert [m.content for m in store.all_current(ALICE)] == [m.content for m in inner.all_current(ALICE)]
    assert store.list_current(ALICE, limit=1).items == inner.list_current(ALICE, limit=1).items
    store.record_access(ALICE, [memory.memory_key], memory.created_at)
    assert store.access_stats(ALICE)[memory.memory_key].access_count == 1
    assert store.delete(ALICE, memory.memory_key).memory_key == memory.memory_key
    assert store.get(ALICE, memory.memory_key) is None


def test_every_other_member_of_the_store_port_is_the_inner_stores_own():
    from agent_memory.ports import MemoryStore

    inner = CountingStore()
    store = VersionPinningStore(inner)
    members = [name for name in vars(MemoryStore) if not name.startswith("_") and callable(getattr(MemoryStore, name))]

    assert len(members) > 10
    for name in set(members) - {"versions", "user_version"}:
        assert getattr(store, name) == getattr(inner, name), name
