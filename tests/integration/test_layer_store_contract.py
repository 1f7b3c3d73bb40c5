"""One contract for the three-layer store: the DynamoDB store on moto and on DynamoDB Local, and the fake
the unit tests use, so a fake cannot drift from the real store."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest

from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore
from agent_memory.domain.keys import active_shard
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType, LogKey, LogMessage, WeeklyReport
from agent_memory.errors import NotFound
from agent_memory.ports import LayerStore
from tests.conftest import TABLE
from tests.fakes.layer_store import FakeLayerStore

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(params=["moto", "dynamodb-local", "fake"])
def layers(request: pytest.FixtureRequest) -> Iterator[LayerStore]:
    if request.param == "fake":
        yield FakeLayerStore()
    else:
        client = request.getfixturevalue("dynamodb_client" if request.param == "moto" else "dynamodb_local_client")
        yield DynamoLayerStore(table_name=TABLE, client=client)


@pytest.fixture
def week() -> date:
    """A Monday of its own: DynamoDB Local is shared by the session, so no other test marks this week."""
    return date(2001, 1, 1) + timedelta(weeks=random.randrange(5000))


def message(index: int, *, minutes: int = 0, ttl_days: int = 30, conversation: str = "c1") -> LogMessage:
    created = NOW - timedelta(days=1) + timedelta(minutes=minutes)
    return LogMessage(message_id=f"m-{index}", conversation_id=conversation, role="user" if index % 2 else "assistant",
                      content=f"message {index} 第{index}条", created_at=created,
                      expires_at=created + timedelta(days=ttl_days))


def hot(key: str, value: object, priority: int = 0, at: datetime = NOW) -> HotMemoryEntry:
    return HotMemoryEntry(type=HotMemoryType.STATUS, key=key, value=value, priority=priority, created_at=at,
                          updated_at=at)


def report(week_start: date, summary: str = "本周：讨论了高才通") -> WeeklyReport:
    return WeeklyReport(week_start=week_start, week_end=week_start + timedelta(days=6), summary=summary,
                        key_events=["决定申请"], metrics={"messages": 3}, created_at=NOW)


def test_logged_messages_come_back_oldest_first_within_a_range_and_never_once_expired(layers, user):
    layers.append_messages(user, [message(2, minutes=2), message(1, minutes=1), message(3, minutes=3),
                                  message(4, minutes=4, ttl_days=0)], set())

    assert [m.message_id for m in layers.log_messages(user)] == ["m-1", "m-2", "m-3"]
    window = layers.log_messages(user, start=NOW - timedelta(days=1, minutes=-2),
                                 end=NOW - timedelta(days=1, minutes=-3))
    assert [m.message_id for m in window] == ["m-2"]
    assert [m.message_id for m in layers.recent_log(user, limit=2)] == ["m-2", "m-3"]
    assert layers.log_messages(user)[0].content == "message 1 第1条"


def test_a_message_written_again_with_its_id_and_time_overwrites_itself(layers, user):
    layers.append_messages(user, [message(1)], set())
    layers.append_messages(user, [message(1)], set())

    assert len(layers.log_messages(user)) == 1


def test_expired_messages_are_deleted_on_request(layers, user):
    layers.append_messages(user, [message(1, ttl_days=0), message(2)], set())

    assert layers.delete_expired_log(user, NOW) == 1
    assert [m.message_id for m in layers.log_messages(user)] == ["m-2"]


def test_an_extraction_is_claimed_once_until_released_and_never_after_it_is_done(layers, user):
    assert layers.claim_extraction(user, "m-1") is True
    assert layers.claim_extraction(user, "m-1") is False  # another delivery, the lease is live

    layers.release_extraction(user, "m-1")
    assert layers.claim_extraction(user, "m-1") is True

    layers.finish_extraction(user, "m-1", saved=2)
    assert layers.claim_extraction(user, "m-1") is False


def test_a_lapsed_lease_can_be_taken_over(layers, user):
    assert layers.claim_extraction(user, "m-1", lease_seconds=-1) is True
    assert layers.claim_extraction(user, "m-1") is True


def test_hot_memory_upserts_by_type_and_key_keeps_its_first_creation_and_lists_by_priority(layers, user):
    first = layers.put_hot(user, hot("阶段", "资料收集", priority=1, at=NOW - timedelta(days=2)))
    layers.put_hot(user, hot("deadline", {"date": "2026-12-01"}, priority=5))
    again = layers.put_hot(user, hot("阶段", "递交申请", priority=1))

    assert again.created_at == first.created_at
    assert [(e.key, e.value) for e in layers.hot_memory(user)] == [("deadline", {"date": "2026-12-01"}),
                                                                   ("阶段", "递交申请")]


def test_deleting_hot_memory_that_is_not_there_is_not_found(layers, user):
    layers.put_hot(user, hot("k", 1))
    layers.delete_hot(user, HotMemoryType.STATUS, "k")

    assert layers.hot_memory(user) == []
    with pytest.raises(NotFound):
        layers.delete_hot(user, HotMemoryType.STATUS, "k")


def test_a_weeks_report_is_written_once_and_its_stage_moves_on(layers, user, week):
    assert layers.report_stage(user, week) is None
    assert layers.put_report_if_absent(user, report(week)) is True
    assert layers.put_report_if_absent(user, report(week, "a re-run")) is False
    assert layers.report_stage(user, week) == "written"

    layers.mark_report_stage(user, week, "complete")

    assert layers.report_stage(user, week) == "complete"
    stored = layers.reports(user)[0]
    assert (stored.summary, stored.key_events, stored.metrics) == ("本周：讨论了高才通", ["决定申请"], {"messages": 3})


def test_a_report_is_replaced_only_by_one_covering_more_of_its_week(layers, user, week):
    layers.put_report_if_absent(user, report(week))
    layers.mark_report_stage(user, week, "complete")
    more = report(week, "with a late message").model_copy(update={"metrics": {"messages": 4}})

    assert layers.replace_report(user, more) is True
    assert layers.replace_report(user, more) is False  # a concurrent re-run that lost
    assert layers.replace_report(user, report(week, "older")) is False
    assert layers.reports(user)[0].summary == "with a late message"
    assert layers.report_stage(user, week) == "written"  # hot memory is refreshed again


def test_reports_are_listed_newest_week_first(layers, user, week):
    for offset in (0, 2, 1):
        layers.put_report_if_absent(user, report(week + timedelta(weeks=offset)))

    assert [r.week_start for r in layers.reports(user)] == [week + timedelta(weeks=n) for n in (2, 1, 0)]


def test_scopes_that_logged_in_a_week_are_found_in_their_shard_page_by_page(layers, week):
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    scopes = [ScopeRef(tenant_id=tenant, user_id=f"u-{i}") for i in range(40)]
    by_shard: dict[int, set[ScopeRef]] = {}
    for scope in scopes:
        layers.append_messages(scope, [message(1)], {week})
        by_shard.setdefault(active_shard(scope, layers.shards), set()).add(scope)
    shard, expected = max(by_shard.items(), key=lambda kv: len(kv[1]))

    found: list[ScopeRef] = []
    cursor = None
    while True:
        page, cursor = layers.active_scopes(week, shard, cursor=cursor, limit=2)
        found += page
        if cursor is None:
            break

    assert set(found) == expected and len(found) == len(expected)
    assert layers.active_scopes(week + timedelta(weeks=1), shard)[0] == []


def test_scopes_never_see_each_others_layers(layers, user):
    other = ScopeRef(tenant_id=user.tenant_id + "x", user_id=user.user_id)
    layers.append_messages(user, [message(1)], set())
    layers.put_hot(user, hot("k", "v"))

    assert layers.log_messages(other) == [] and layers.hot_memory(other) == []


def test_the_same_message_id_at_the_same_time_in_two_conversations_is_two_messages(layers, user):
    layers.append_messages(user, [message(1, conversation="conv-a")], set())
    layers.append_messages(user, [message(1, conversation="conv-b")], set())

    assert sorted(m.conversation_id for m in layers.log_messages(user)) == ["conv-a", "conv-b"]


def test_a_hundred_messages_spanning_weeks_are_one_append(layers, user, week):
    hundred = [message(i, minutes=i) for i in range(100)]

    layers.append_messages(user, hundred, {week, week + timedelta(weeks=1)})

    assert len(layers.log_messages(user)) == 100
    shard = active_shard(user, layers.shards)
    assert user in layers.active_scopes(week + timedelta(weeks=1), shard)[0]


def test_a_range_from_before_the_year_1000_to_far_ahead_holds_every_message(layers, user):
    layers.append_messages(user, [message(1), message(2, minutes=1)], set())

    everything = layers.log_messages(user, start=datetime(337, 1, 10, tzinfo=UTC), end=datetime(3237, 1, 1, tzinfo=UTC))

    assert [m.message_id for m in everything] == ["m-1", "m-2"]


def test_embeddings_are_written_back_onto_logged_messages_that_are_still_there(layers, user):
    layers.append_messages(user, [message(1), message(2, minutes=1)], set())
    first, second = layers.log_messages(user)
    keys = [LogKey(conversation_id=m.conversation_id, message_id=m.message_id, created_at=m.created_at)
            for m in (second, first)]
    gone = LogKey(conversation_id="c1", message_id="m-gone", created_at=first.created_at)

    assert [m.message_id for m in layers.logged_messages(user, [*keys, gone])] == ["m-1", "m-2"]
    layers.set_log_embeddings(user, [first.model_copy(update={"embedding": b"\x00\x3c", "embedding_model": "e5"}),
                                     LogMessage(**{**second.model_dump(), "message_id": "m-gone",
                                                   "embedding": b"\x00\x3c", "embedding_model": "e5"})])

    stored = layers.log_messages(user)
    assert [(m.message_id, m.embedding_model) for m in stored] == [("m-1", "e5"), ("m-2", None)]
    assert stored[0].embedding == b"\x00\x3c" and stored[0].content == first.content
