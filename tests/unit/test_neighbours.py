"""Conversation neighbours: which stored turn answers which, and a keyword match shared between them."""

from __future__ import annotations

import numpy as np

from agent_memory.adapters.in_process_index import InProcessIndex
from agent_memory.domain.models import Memory, MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.neighbours import previous_turns, with_neighbours
from agent_memory.domain.text.text import tokenize
from agent_memory.ports import CandidateQuery
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t", user_id="u")


def turn(content: str, context: str | None = None, conversation: str | None = "c1") -> Memory:
    return Memory.model_construct(content=content, context=context, conversation_id=conversation)


def test_a_turn_links_to_the_stored_turn_its_context_quotes_in_the_same_conversation_only():
    memories = [
        turn("Joanna: How long have you had the turtles?"),
        turn("Nate: Three years now!", context="Joanna: How long have you had the turtles?"),
        turn("Nate: Three years now!", context="Joanna: How long have you had the turtles?", conversation="c2"),
        turn("an extracted fact", context="the assistant's reply, not a stored memory"),
        turn("no conversation", context="Joanna: How long have you had the turtles?", conversation=None),
    ]

    assert previous_turns(memories).tolist() == [-1, 0, -1, -1, -1]


def test_each_score_adds_a_share_of_its_best_neighbour_before_or_after():
    scores = np.array([4.0, 0.0, 1.0, 0.0], dtype=np.float32)
    previous = np.array([-1, 0, 1, -1], dtype=np.int32)  # 0 <- 1 <- 2; 3 alone

    shared = with_neighbours(scores, previous, 0.5)

    assert shared.tolist() == [4.0 + 0.5 * 0.0, 0.0 + 0.5 * 4.0, 1.0 + 0.5 * 0.0, 0.0]
    assert with_neighbours(scores, previous, 0.0) is scores


def test_a_turn_answering_another_takes_the_best_of_several_answers():
    scores = np.array([0.0, 2.0, 6.0], dtype=np.float32)
    previous = np.array([-1, 0, 0], dtype=np.int32)

    assert with_neighbours(scores, previous, 0.5).tolist() == [3.0, 2.0, 6.0]


def test_the_turn_a_matching_turn_answers_becomes_a_lexical_candidate():
    store = InMemoryMemoryStore()
    said, reply = "Nate: I got them three years ago.", "Joanna: They look so happy in the tank!"
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content=said, conversation_id="c1"))
    store.save(USER, NewMemory(memory_type=MemoryType.FACT, content=reply, conversation_id="c1", context=said))
    index = InProcessIndex(store=store, embedder=lambda: None)
    query = CandidateQuery(text="the tank", terms=tokenize("the tank"))

    alone = {c.memory.content for c in index.candidates(USER, query)}
    shared = {c.memory.content: c.lexical for c in
              index.candidates(USER, query.model_copy(update={"neighbour_share": 0.5}))}

    assert alone == {reply}
    assert shared[said] is not None and shared[reply] is not None
    assert abs(shared[said] - 0.5 * shared[reply]) < 1e-4
