"""A save restating a current memory is merged into it, over the fakes (and moto for a store fault): direct saves,
extraction, batches, what each reads, and what a search tier that cannot answer changes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.api.save import BatchSaveResponse, SavedMemoryResponse
from agent_memory.domain.models import Memory, MemoryType, NewMemory, SaveOutcome, ScopeRef
from agent_memory.domain.search.ranking import Candidate
from agent_memory.errors import BatchInterrupted, SearchUnavailable
from agent_memory.ports import ConversationTurn
from agent_memory.services.save import SaveService
from agent_memory.settings import Settings
from tests.conftest import TABLE
from tests.fakes.dynamodb_faults import ONE_TRANSACTION_EACH, ThrottlingAfter
from tests.fakes.embedders import HashingEmbedder
from tests.fakes.services import services_over_fakes
from tests.fakes.store import CountingStore, InMemoryMemoryStore

USER = ScopeRef(tenant_id="t-merge", user_id="u")




def built(store: InMemoryMemoryStore | None = None, **settings: Any) -> Any:
    """The services as bootstrap wires them: the offline extractor, the serverless search tier, a bag-of-words
    embedder."""
    return services_over_fakes(Settings(**settings), store=store or InMemoryMemoryStore(), embedder=HashingEmbedder())


def fact(content: str, **extra: Any) -> NewMemory:
    return NewMemory(memory_type=extra.pop("memory_type", MemoryType.FACT), content=content, **extra)


def current(services: Any) -> list[str]:
    return sorted(m.content for m in services.store.all_current(USER))


def test_given_a_direct_save_when_extraction_restates_it_then_it_is_merged_and_one_memory_stays_current():
    services = built()
    direct = services.save.save(USER, fact("Is allergic to peanuts", importance=90))

    output = services.save.extract_and_save(USER, ConversationTurn(user_message="I'm allergic to peanuts"),
                                            conversation_id="c-1")

    assert output.saved_count == 0 and output.saved == []
    assert output.skipped_fields == ["allergy.peanuts"]  # said already, named by its slot
    assert current(services) == ["Is allergic to peanuts"]
    kept = services.store.get(USER, direct.memory.memory_key)
    assert kept == direct.memory  # unchanged: its importance, its (absent) field, its time


def test_given_the_chinese_statement_when_extraction_restates_it_then_it_is_merged():
    services = built()
    services.save.save(USER, fact("用户对花生过敏"))

    output = services.save.extract_and_save(USER, ConversationTurn(user_message="我对花生过敏"))

    assert output.saved_count == 0 and current(services) == ["用户对花生过敏"]


def test_a_direct_save_restating_a_current_memory_answers_merged_with_the_kept_memory():
    services = built()
    first = services.save.save(USER, fact("Is allergic to peanuts"))

    again = services.save.save(USER, fact("I'm allergic to peanuts."))

    assert again.outcome is SaveOutcome.MERGED and again.memory.memory_key == first.memory.memory_key
    response = SavedMemoryResponse.of(again)
    assert response.status == 200 and response.outcome == "merged" and response.skipped_fields == [""]


@pytest.mark.parametrize(("said", "then"), [
    ("Is allergic to peanuts", "I'm allergic to shellfish"),
    ("我住在上海", "我住在北京"),
    ("用户35岁", "用户36岁"),
    ("Likes coffee", "Doesn't like coffee"),
])
def test_given_a_statement_when_another_value_is_saved_then_both_are_kept(said, then):
    services = built()
    services.save.save(USER, fact(said, field="custom"))  # no field upsert between them: the rule alone decides

    result = services.save.save(USER, fact(then))

    assert result.outcome is SaveOutcome.CREATED and current(services) == sorted([said, then])


def test_given_a_batch_then_restatements_of_stored_and_of_earlier_items_are_merged_with_one_read():
    store = CountingStore()
    services = built(store)
    stored = services.save.save(USER, fact("Holds an IANG visa"))
    store.partition_reads = store.pages = 0
    batch = [fact(f"Likes topic number {i}") for i in range(96)] + [
        fact("Wants to buy a flat in Sha Tin", memory_type=MemoryType.INTENT),
        fact("Wants to rent a flat in Sha Tin", memory_type=MemoryType.INTENT),
        fact("I want to buy a flat in Sha Tin", memory_type=MemoryType.INTENT),  # an earlier item, restated
        fact("I hold an IANG visa"),  # a stored one, restated
    ]

    results = services.save.save_batch(USER, batch)

    assert store.partition_reads <= 1 and store.pages <= 1  # one candidate read for the whole batch, not one per item
    assert [r.outcome for r in results[-4:]] == [SaveOutcome.CREATED, SaveOutcome.CREATED, SaveOutcome.MERGED,
                                                 SaveOutcome.MERGED]
    assert results[-2].memory.memory_key == results[-4].memory.memory_key
    assert results[-1].memory.memory_key == stored.memory.memory_key
    assert all(r.outcome is SaveOutcome.CREATED for r in results[:96])
    assert len(store.all_current(USER)) == 1 + 98  # the one stored first, then 98 of the 100
    answer = BatchSaveResponse.of(results)
    assert answer.saved_count == 98 and answer.memory_keys[-1] == stored.memory.memory_key


def test_given_a_field_item_in_a_batch_then_a_later_item_cannot_merge_into_the_value_it_retired():
    services = built()
    services.save.save(USER, fact("Holds an IANG visa", field="visa"))

    results = services.save.save_batch(USER, [fact("Holds a QMAS visa", field="visa"), fact("I hold an IANG visa")])

    assert [r.outcome for r in results] == [SaveOutcome.SUPERSEDED, SaveOutcome.CREATED]  # as one by one


def test_transcript_turns_of_two_sessions_are_two_records_and_a_turn_logged_again_is_one():
    services = built()
    said = "Caroline: I'm going to the support group tomorrow"
    services.save.save(USER, fact(said, conversation_id="c1", source="transcript"))

    other_session = services.save.save(USER, fact("Caroline: I am going to the support group tomorrow",
                                                  conversation_id="c2", source="transcript"))
    logged_again = services.save.save(USER, fact("Caroline: so I'm going to the support group tomorrow",
                                                 conversation_id="c1", source="transcript"))

    assert other_session.outcome is SaveOutcome.CREATED
    assert logged_again.outcome is SaveOutcome.MERGED


def test_the_thresholds_come_from_the_settings_and_zero_turns_merging_off():
    services = built(memory_dedup_min_overlap=0, memory_dedup_min_cosine=0)
    services.save.save(USER, fact("Is allergic to peanuts"))

    assert services.save.save(USER, fact("Allergic to peanuts")).outcome is SaveOutcome.CREATED
    assert services.save.save(USER, fact("Allergic to peanuts!")).outcome is SaveOutcome.DUPLICATE  # identical


class Unavailable:
    """A search tier that cannot answer."""

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        raise SearchUnavailable("the search index is unavailable")


class Stale:
    """A search tier that still shows a memory the store has since superseded (a lagging index)."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        return [[Candidate(memory=self.memory, vector=0.99)] for _ in vectors]


def service(store: InMemoryMemoryStore, index: Any) -> SaveService:
    return SaveService(store=store, extractor=lambda: None, embedder=HashingEmbedder, index=index)  # type: ignore[arg-type]


def test_given_a_search_tier_that_cannot_answer_then_the_save_is_stored_and_recent_memories_still_count():
    store = InMemoryMemoryStore()
    save = service(store, Unavailable())

    first = save.save(USER, fact("Is allergic to peanuts"))
    again = save.save(USER, fact("Allergic to peanuts"))  # among the newest memories: still recognised

    assert first.outcome is SaveOutcome.CREATED
    assert again.outcome is SaveOutcome.MERGED and again.memory.memory_key == first.memory.memory_key


def test_given_the_index_shows_a_memory_superseded_meanwhile_then_nothing_merges_into_it():
    store = InMemoryMemoryStore()
    old = store.save(USER, fact("Currently based in Beijing", field="currentLocation")).memory
    store.save(USER, fact("Currently based in Shanghai", field="currentLocation"))
    for i in range(30):  # the old one is far behind the newest memories: only the index shows it
        store.save(USER, fact(f"note {i}"))

    result = service(store, Stale(old)).save(USER, fact("Currently based in Beijing!"))

    assert result.outcome is SaveOutcome.CREATED


def test_given_a_fault_mid_batch_then_merged_items_before_it_are_reported_written(dynamodb_client):
    store = DynamoMemoryStore(table_name=TABLE, client=ThrottlingAfter(dynamodb_client, 1))
    save = SaveService(store=store, extractor=lambda: None, embedder=HashingEmbedder)  # type: ignore[arg-type]
    batch = [fact("Is allergic to peanuts", field="slot_0", keywords=ONE_TRANSACTION_EACH),
             fact("Allergic to peanuts"), fact("Lives in Shenzhen", field="slot_1", keywords=ONE_TRANSACTION_EACH),
             fact("Works at Tencent", field="slot_2", keywords=ONE_TRANSACTION_EACH)]

    with pytest.raises(BatchInterrupted) as raised:
        save.save_batch(USER, batch)

    written = raised.value.details["written"]
    assert [(w["index"], w["outcome"]) for w in written] == [(0, "created"), (1, "merged")]
    assert written[1]["memory_key"] == written[0]["memory_key"]
    assert raised.value.details["not_written"] == [2, 3]
