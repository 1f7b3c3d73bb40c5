"""How many DynamoDB calls a save takes, counted on the client (a count, not a timing)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.adapters.dynamodb.store import DynamoMemoryStore
from agent_memory.domain.models import MemoryType, NewMemory, SaveOutcome
from tests.conftest import TABLE


@pytest.fixture(params=["moto", "dynamodb-local"])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    yield request.getfixturevalue("dynamodb_client" if request.param == "moto" else "dynamodb_local_client")


def count_calls(client: Any) -> list[str]:
    calls: list[str] = []
    client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name))
    return calls


def fact(content: str, field: str) -> NewMemory:
    return NewMemory(memory_type=MemoryType.FACT, content=content, field=field)


def test_given_one_turn_changing_three_fields_then_it_is_stored_in_three_round_trips(client, user):
    store = DynamoMemoryStore(table_name=TABLE, client=client)
    store.save_many(user, [fact("用户32岁", "age"), fact("住在北京", "location"), fact("工程师", "jobTitle")])
    calls = count_calls(client)

    results = store.save_many(user, [fact("用户33岁", "age"), fact("住在上海", "location"), fact("经理", "jobTitle")])

    assert [r.outcome for r in results] == [SaveOutcome.SUPERSEDED] * 3
    # markers and pointers, the memories they name, one transaction (one save at a time took 3 each, 9 in all)
    assert calls == ["BatchGetItem", "BatchGetItem", "TransactWriteItems"]


def test_given_a_duplicate_then_it_is_answered_from_reads_alone(client, user):
    store = DynamoMemoryStore(table_name=TABLE, client=client)
    store.save(user, fact("用户32岁", "age"))
    calls = count_calls(client)

    assert store.save(user, fact("用户32岁", "age")).outcome is SaveOutcome.DUPLICATE
    assert calls == ["BatchGetItem", "BatchGetItem"]
