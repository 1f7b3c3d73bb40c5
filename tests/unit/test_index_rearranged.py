"""What an index brought up to date rearranges, against the same built from scratch: BM25 postings (remapped, the
old documents never tokenised again), conversation neighbours from turn links, and the rows of merged memories."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.domain.models import Memory, MemoryType
from agent_memory.domain.search.bm25 import Bm25Index
from agent_memory.domain.search.index_snapshot import MergedMemories
from agent_memory.domain.search.neighbours import previous_from_links, previous_turns, turn_links

WORDS = ["apple", "banana", "香港", "优才", "cherry", "dog", "计算机", "硕士", "kite", "lemon", "running", "runs"]
documents = st.lists(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join), max_size=12)


@settings(max_examples=150, deadline=None)
@given(old=documents, added=documents, data=st.data())
def test_rearranged_postings_score_as_an_index_built_from_the_documents_in_their_new_order(old, added, data):
    kept = [i for i in range(len(old)) if data.draw(st.booleans())]
    rows = [("old", i) for i in kept] + [("added", j) for j in range(len(added))]
    rows = data.draw(st.permutations(rows))
    order = np.array([i if kind == "old" else -(i + 1) for kind, i in rows], dtype=np.int64)
    texts = [old[i] if kind == "old" else added[i] for kind, i in rows]

    rearranged, built = Bm25Index(old).rearranged(order, added), Bm25Index(texts)

    for terms in (WORDS[:3], WORDS[3:7], ["running"], WORDS):
        assert np.array_equal(rearranged.scores(terms), built.scores(terms))
    assert np.array_equal(rearranged.state().lengths, built.state().lengths)
    assert sorted(rearranged.state().terms) == sorted(built.state().terms)  # a term no document holds is dropped


turns = st.lists(st.builds(SimpleNamespace, conversation_id=st.sampled_from([None, "c1", "c2"]),
                           content=st.sampled_from("wxyz"), context=st.sampled_from([None, "w", "x", "y", "z"])),
                 max_size=14)


@settings(max_examples=300, deadline=None)
@given(memories=turns)
def test_neighbours_found_from_turn_links_are_those_found_from_the_memories(memories):
    assert np.array_equal(previous_from_links(turn_links(memories)), previous_turns(memories))


def memory(key: str) -> Memory:
    return Memory.model_construct(memory_key=key, memory_type=MemoryType.FACT, content=key)


def test_merged_memories_read_each_row_from_its_part_and_let_go_of_parts_no_row_uses():
    base = MergedMemories.of([memory("a"), memory("c"), memory("e")], ["a", "c", "e"])

    once = base.arranged(np.array([0, -1, 2]), [memory("b")], ["a", "b", "e"])  # c replaced by b
    twice = once.arranged(np.array([-1, 2]), [memory("d")], ["d", "e"])  # a and b gone, d first

    assert [m.memory_key for m in once] == ["a", "b", "e"]
    assert [m.memory_key for m in twice] == ["d", "e"] and twice.keys == ["d", "e"]
    assert len(twice._parts) == 2  # the base (for e) and d's: b's part is let go
    assert [m.memory_key for m in twice.replaced({1: memory("e2")})] == ["d", "e2"]
