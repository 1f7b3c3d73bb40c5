"""The pure rules of retention (what is expired, when) and of erasure (which store an item is, which queued work
a tombstone drops)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.lifecycle.erasure import StoreErasure, Tombstone, merge, store_of, tombstone_expiry
from agent_memory.domain.lifecycle.retention import RetentionPolicy, build_retention, parse_policy
from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef, new_memory_version

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
USER = ScopeRef(tenant_id="t", user_id="u")


def memory(memory_type: MemoryType, days_old: float, expires_at: datetime | None = None):  # type: ignore[no-untyped-def]
    new = NewMemory(memory_type=memory_type, content="x", created_at=NOW - timedelta(days=days_old),
                    expires_at=expires_at)
    return new_memory_version(USER, new, new_memory_key(), None)


def test_a_memory_is_kept_until_its_types_days_have_passed_and_types_not_named_forever():
    policy = RetentionPolicy(memory_days={MemoryType.INTENT: 180})

    assert policy.kept(memory(MemoryType.INTENT, 179.9), NOW)
    assert not policy.kept(memory(MemoryType.INTENT, 180), NOW)
    assert policy.kept(memory(MemoryType.FACT, 10_000), NOW)
    assert policy.expired_before(NOW) == {MemoryType.INTENT: NOW - timedelta(days=180)}


@pytest.mark.parametrize("policy", [RetentionPolicy(), RetentionPolicy(memory_days={MemoryType.INTENT: 180}),
                                    RetentionPolicy(memory_days={t: 30 for t in MemoryType})])
def test_the_keeper_of_one_moment_keeps_what_kept_keeps_to_the_microsecond(policy):
    edges = [timedelta(days=d) + timedelta(microseconds=u) for d in (0, 30, 180) for u in (-1, 0, 1)]
    memories = [memory(t, 0, expires_at=expiry).model_copy(update={"created_at": NOW - age})
                for t in MemoryType for age in edges for expiry in (None, NOW, NOW + timedelta(microseconds=1))]

    kept = policy.keeper(NOW)

    assert [kept(m) for m in memories] == [policy.kept(m, NOW) for m in memories]
    assert any(kept(m) for m in memories) and not all(kept(m) for m in memories)


def test_an_expiry_stamped_at_save_holds_even_when_the_policy_was_lengthened_since():
    stamped = memory(MemoryType.INTENT, 40, expires_at=NOW - timedelta(days=10))

    assert not RetentionPolicy(memory_days={MemoryType.INTENT: 365}).kept(stamped, NOW)
    assert not RetentionPolicy().kept(stamped, NOW)


def test_a_tenants_policy_replaces_the_defaults_keys_it_names_and_keeps_the_others():
    retention = build_retention({"INTENT": 180, "FACT": 365}, {"globex": {"INTENT": 30}}, log_days=30)

    assert retention("acme").as_days() == {"FACT": 365, "PREFERENCE": None, "INTENT": 180, "LOG": 30}
    assert retention("globex").as_days() == {"FACT": 365, "PREFERENCE": None, "INTENT": 30, "LOG": 30}
    assert build_retention({"LOG": 7}, {}, log_days=30)("acme").log_days == 7


@pytest.mark.parametrize(("raw", "message"), [
    ({"INTENTS": 1}, "unknown key 'INTENTS'"), ({"INTENT": 0}, "whole days"), ({"INTENT": True}, "whole days"),
    ({"INTENT": 1.5}, "whole days"), ({"LOG": 36501}, "whole days"),
])
def test_a_policy_with_an_unknown_key_or_no_whole_days_is_refused_naming_it(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_policy(raw, "MEMORY_RETENTION_DAYS")


def test_lower_case_keys_are_read_as_the_types():
    assert parse_policy({"intent": 9, "log": 3}, "x") == {"INTENT": 9, "LOG": 3}


def test_every_item_of_a_scope_belongs_to_a_store_and_an_unknown_kind_to_other():
    assert [store_of(sk) for sk in ("MEM#mem_1", "KW#tea#mem_1", "HASH#ab", "FIELD#age", "META", "CHG#000000000001",
                                     "LOG#2026#c#m",
                                     "LOGX#m", "HOT#status#k", "REPORT#2026-01-05", "FILE#/memories/a", "NEW#x")] == [
        "memories", "memory_keys", "memory_keys", "memory_keys", "version_counter", "change_log", "conversation_log",
        "extraction_markers", "hot_memory", "reports", "memory_files", "other"]


def test_a_tombstone_drops_work_queued_before_or_during_the_erasure_and_keeps_what_came_after():
    running = Tombstone(tenant_id="t", user_id="u", erased_at=NOW, erasure_id="era_x",
                        expires_at=tombstone_expiry(NOW, 30))
    done = running.model_copy(update={"completed_at": NOW + timedelta(seconds=2)})

    assert running.drops(NOW - timedelta(seconds=1)) and running.drops(NOW + timedelta(hours=1))  # still erasing
    assert done.drops(NOW + timedelta(seconds=1)) and done.drops(NOW + timedelta(seconds=2))  # queued meanwhile
    assert not done.drops(NOW + timedelta(seconds=2, milliseconds=1))  # the scope's new life
    assert running.drops(None) and done.drops(None)  # queued by code that wrote no time: older than erasure itself


def test_a_tombstone_always_outlives_what_a_queue_can_hold():
    assert tombstone_expiry(NOW, 1) - NOW > timedelta(days=14)


def test_counts_of_passes_add_up_by_store_in_the_receipts_order():
    first = merge([], {"memories": (3, 3), "search_index": (2, 2)})
    both = merge(first, {"memories": (1, 1), "version_counter": (1, 1)})

    assert both == [StoreErasure(store="memories", found=4, removed=4),
                    StoreErasure(store="version_counter", found=1, removed=1),
                    StoreErasure(store="search_index", found=2, removed=2)]
