"""The cached indexes are frozen out of the cyclic collector's sight; garbage frozen with them is freed later."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from agent_memory.adapters.in_process_index import _FrozenHeap


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def unreachable_cycles(count: int) -> weakref.ref[Node]:
    """`count` objects in reference cycles, already unreachable; a weak reference to one of them."""
    nodes = [Node() for _ in range(count // 2)]  # a Node and its __dict__ are two tracked objects
    probe = weakref.ref(nodes[0])
    del nodes
    return probe


@pytest.fixture
def collector_off() -> Iterator[None]:
    """No automatic collection during the test: only the heap's own passes free cycles."""
    was_enabled = gc.isenabled()
    gc.unfreeze()
    gc.collect()
    gc.disable()
    yield
    gc.unfreeze()
    gc.collect()
    (gc.enable if was_enabled else gc.disable)()


def test_given_garbage_frozen_with_an_index_then_it_is_freed_once_the_frozen_heap_grows_by_half(collector_off):
    heap = _FrozenHeap(regrowth=0.5)
    heap.freeze()  # the first freeze takes the heap as it is
    after_first = gc.get_freeze_count()

    small = unreachable_cycles(after_first // 10)
    heap.freeze()
    kept = small() is not None and gc.get_freeze_count() >= after_first  # frozen, under the bound: kept

    large = unreachable_cycles(after_first)  # the frozen heap would double: past the bound
    heap.freeze()

    assert kept
    assert small() is None and large() is None  # the full pass freed both
    assert gc.get_freeze_count() < after_first * 1.1


def test_given_no_heap_growth_then_freezing_again_runs_no_full_pass(collector_off):
    heap = _FrozenHeap(regrowth=0.5)
    heap.freeze()
    probe = unreachable_cycles(100)
    heap.freeze()
    assert probe() is not None  # frozen until the heap has grown enough to pay for a full pass


def test_the_first_freeze_takes_the_heap_as_it_is_without_a_full_pass(collector_off):
    heap = _FrozenHeap(regrowth=0.5)
    probe = unreachable_cycles(100)

    heap.freeze()

    assert probe() is not None  # not collected: a new container's first search walks no heap
