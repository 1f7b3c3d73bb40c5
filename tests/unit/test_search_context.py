"""The search context a saved memory keeps: the question an extracted memory answers, or the conversation's turn
before it."""

from __future__ import annotations

from agent_memory.domain.models import MemoryType, NewMemory
from agent_memory.ports import ConversationTurn
from tests.fakes.services import USER, extracted, inferring, services
from tests.fakes.store import InMemoryMemoryStore


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
