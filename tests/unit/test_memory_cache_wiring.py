"""A search tier that holds users' memories in the process says so through its port: reads are served from that
copy and an erasure drops it; a tier that holds none leaves reads to the store and erases nothing in process."""

from __future__ import annotations

from datetime import datetime, timedelta

from agent_memory.bootstrap.erasure import build_erasure
from agent_memory.bootstrap.index import cached_memories, retained
from agent_memory.domain.lifecycle.retention import build_retention
from agent_memory.domain.models import Memory, MemoryType, ScopeRef, utcnow
from agent_memory.settings import Settings
from tests.fakes.erasure import FakeTableEraser

USER = ScopeRef(tenant_id="t", user_id="u")
RETENTION = build_retention({"INTENT": 180}, {}, 30)


def memory(key: str, memory_type: MemoryType, created: datetime) -> Memory:
    return Memory(memory_key=key, tenant_id=USER.tenant_id, user_id=USER.user_id, memory_type=memory_type,
                  content=key, importance=70, content_hash=key, created_at=created, updated_at=created,
                  valid_from=created)


class HoldsMemories:
    """A tier with an in-process copy (as the serverless tier's cache): its own cache port."""

    def __init__(self, memories: list[Memory]) -> None:
        self.memories = memories
        self.forgotten: list[ScopeRef] = []

    def memory_cache(self) -> HoldsMemories:
        return self

    def current_memories(self, user: ScopeRef) -> list[Memory]:
        return list(self.memories)

    def forget(self, user: ScopeRef) -> None:
        self.forgotten.append(user)


class HoldsNothing:
    """A tier whose memories live elsewhere (as OpenSearch's)."""

    def memory_cache(self) -> None:
        return None


def test_given_a_tier_holding_nothing_then_reads_are_left_to_the_store():
    assert cached_memories(HoldsNothing()) is None
    assert cached_memories(retained(HoldsNothing(), RETENTION)) is None


def test_given_a_tier_holding_the_memories_then_reads_come_from_it_less_what_expired_since_it_cached_them():
    old = utcnow() - timedelta(days=200)
    tier = HoldsMemories([memory("intent", MemoryType.INTENT, old), memory("fact", MemoryType.FACT, old)])

    read = cached_memories(retained(tier, RETENTION))

    assert read is not None
    assert [m.memory_key for m in read(USER)] == ["fact"]


def test_given_an_erasure_then_the_tier_holding_the_users_memories_drops_them():
    tier = HoldsMemories([memory("fact", MemoryType.FACT, utcnow())])

    build_erasure(Settings(), None, tier, table=FakeTableEraser()).erase(USER)

    assert USER in tier.forgotten


def test_given_an_erasure_then_a_tier_holding_nothing_has_nothing_to_drop():
    table = FakeTableEraser()

    receipt = build_erasure(Settings(), None, HoldsNothing(), table=table).erase(USER)

    assert table.swept == [USER] and receipt.passes >= 1
