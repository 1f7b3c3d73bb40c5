"""Retention on the search tiers' read path: a tier wrapped in RetainedIndex proposes and serves no memory its
tenant's policy has ended, whichever way it is read; the tier is asked to leave expired types out itself."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from agent_memory.adapters.retained_index import RetainedIndex, RetainedPastIndex
from agent_memory.domain.lifecycle.retention import build_retention
from agent_memory.domain.models import Memory, MemoryType, ScopeRef, utcnow
from agent_memory.domain.search.ranking import Candidate
from agent_memory.ports import CandidateQuery, MemoryCache, SearchIndex

USER = ScopeRef(tenant_id="t", user_id="u")
OTHER_TENANT = ScopeRef(tenant_id="keeps-longer", user_id="u")
# Intents kept 180 days for every tenant but one, whose policy keeps them 400.
RETENTION = build_retention({"INTENT": 180}, {"keeps-longer": {"INTENT": 400}}, 30)


def memory(key: str, memory_type: MemoryType, created: datetime, *, expires_at: datetime | None = None,
           tenant: str = "t") -> Memory:
    return Memory(memory_key=key, tenant_id=tenant, user_id="u", memory_type=memory_type, content=key,
                  importance=70, content_hash=key, created_at=created, updated_at=created, valid_from=created,
                  expires_at=expires_at)


OLD = utcnow() - timedelta(days=200)
OLD_INTENT = memory("old-intent", MemoryType.INTENT, OLD)
OLD_FACT = memory("old-fact", MemoryType.FACT, OLD)
# Stamped at save with an expiry already past (its type's policy has been lengthened since).
STAMPED = memory("stamped", MemoryType.FACT, utcnow() - timedelta(days=3), expires_at=utcnow() - timedelta(days=1))


class Tier(SearchIndex):
    """A tier proposing every memory it holds, whatever the query, and recording the queries it was asked."""

    def __init__(self, memories: list[Memory]) -> None:
        self.memories = memories
        self.queries: list[CandidateQuery] = []
        self.flushed = False

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]:
        self.queries.append(query)
        return [Candidate(memory=m, lexical=1.0) for m in self.memories]

    def vectors(self, user: ScopeRef, memory_keys: list[str]) -> dict[str, np.ndarray]:
        return {key: np.ones(2) for key in memory_keys}

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        return [[Candidate(memory=m, vector=0.99) for m in self.memories] for _ in range(len(vectors))]

    def memory_cache(self) -> MemoryCache | None:
        return self

    def current_memories(self, user: ScopeRef) -> list[Memory]:
        return list(self.memories)

    def forget(self, user: ScopeRef) -> None:
        self.memories = []

    def memories_at(self, user: ScopeRef, at: datetime) -> list[Memory]:
        return list(self.memories)

    def flush(self) -> None:
        self.flushed = True


def keys(memories: list[Memory] | list[Candidate]) -> list[str]:
    return [m.memory.memory_key if isinstance(m, Candidate) else m.memory_key for m in memories]


def test_given_expired_memories_then_a_search_proposes_none_of_them_and_asks_the_tier_to_leave_them_out():
    tier = Tier([OLD_INTENT, OLD_FACT, STAMPED])

    found = RetainedIndex(tier, RETENTION).candidates(USER, CandidateQuery(text="q"))

    assert keys(found) == ["old-fact"]
    cutoff = tier.queries[0].expired_before[MemoryType.INTENT]
    assert abs((utcnow() - cutoff) - timedelta(days=180)) < timedelta(minutes=1)
    assert set(tier.queries[0].expired_before) == {MemoryType.INTENT}


def test_given_a_tenant_whose_policy_keeps_intents_longer_then_its_old_intent_is_proposed():
    tier = Tier([memory("old-intent", MemoryType.INTENT, OLD, tenant="keeps-longer")])

    assert keys(RetainedIndex(tier, RETENTION).candidates(OTHER_TENANT, CandidateQuery(text="q"))) == ["old-intent"]
    cutoff = tier.queries[0].expired_before[MemoryType.INTENT]
    assert abs((utcnow() - cutoff) - timedelta(days=400)) < timedelta(minutes=1)


def test_given_expired_memories_then_the_duplicate_check_finds_none_of_them_as_a_neighbour():
    rows = RetainedIndex(Tier([OLD_INTENT, OLD_FACT, STAMPED]), RETENTION).nearest(USER, np.ones((2, 2)), k=5)

    assert [keys(row) for row in rows] == [["old-fact"], ["old-fact"]]


def test_given_memories_cached_before_they_expired_then_reads_of_the_cache_leave_them_out():
    tier = Tier([OLD_INTENT, OLD_FACT, STAMPED])
    cache = RetainedIndex(tier, RETENTION).memory_cache()

    assert cache is not None
    assert keys(cache.current_memories(USER)) == ["old-fact"]
    cache.forget(USER)
    assert tier.memories == []


def test_given_a_version_expired_since_it_was_cached_then_as_of_reads_leave_it_out():
    past = RetainedPastIndex(Tier([OLD_INTENT, OLD_FACT]), RETENTION)  # type: ignore[arg-type]

    assert keys(past.memories_at(USER, utcnow() - timedelta(days=190))) == ["old-fact"]


def test_given_a_member_retention_does_not_read_through_then_it_is_the_tiers_own():
    tier = Tier([])

    RetainedIndex(tier, RETENTION).flush()

    assert tier.flushed
