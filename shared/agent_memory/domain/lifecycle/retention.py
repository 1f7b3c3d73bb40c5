"""Retention: how long a tenant's memories of each type, and its conversation log, are kept.

A policy names days per memory type (FACT, PREFERENCE, INTENT) and for the log (LOG). A memory of a type the
policy names expires `days` after its `created_at`; a type it does not name is kept until deleted. Expired is
expired everywhere at once: reads leave the memory out (search, load, inject, the profile, listings, detail)
from the moment it expires, whatever DynamoDB's TTL sweeper (which can lag by days) has done; the sweeper then
removes the items, stamped with the expiry when they were saved. A policy changed later applies to reads at
once; items already saved keep the TTL stamped on them (a shortened policy hides them now and the sweeper
takes them later; a lengthened one cannot bring back what the sweeper took).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType

from agent_memory.domain.models import Memory, MemoryType, NewMemory

LOG = "LOG"  # the conversation log's entry in a policy
RETENTION_KEYS = (*(t.value for t in MemoryType), LOG)
MAX_RETENTION_DAYS = 36500


def parse_policy(raw: Mapping[str, object], where: str) -> dict[str, int]:
    """`{"INTENT": 180, "LOG": 30}` checked: known keys, whole days 1..MAX_RETENTION_DAYS; ValueError naming
    `where` and the key otherwise."""
    checked: dict[str, int] = {}
    for key, days in raw.items():
        name = str(key).upper()
        if name not in RETENTION_KEYS:
            raise ValueError(f"{where}: unknown key {key!r}; use {', '.join(RETENTION_KEYS)}")
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_RETENTION_DAYS:
            raise ValueError(f"{where}.{key}: must be whole days from 1 to {MAX_RETENTION_DAYS}, got {days!r}")
        checked[name] = days
    return checked


@dataclass(frozen=True)
class RetentionPolicy:
    """Days kept by memory type (absent: kept until deleted) and for the log."""

    memory_days: Mapping[MemoryType, int] = field(default_factory=lambda: MappingProxyType({}))
    log_days: int = 30

    def expires_at(self, memory_type: MemoryType, created_at: datetime) -> datetime | None:
        days = self.memory_days.get(memory_type)
        return created_at + timedelta(days=days) if days else None

    def expired_on_arrival(self, memories: Sequence[NewMemory], now: datetime, *, field: str) -> list[dict[str, str]]:
        """A problem (naming `field`, `{i}` the item's index) for each memory created longer ago than its type is
        kept: stored, it would be invisible at once."""
        problems = []
        for index, memory in enumerate(memories):
            ends = self.expires_at(memory.memory_type, memory.created_at or now)
            if ends is not None and ends <= now:
                problems.append({"field": field.format(i=index), "type": "expired",
                                 "message": f"is older than {memory.memory_type.value} memories are kept "
                                            f"({self.memory_days[memory.memory_type]} days)"})
        return problems

    def log_expires_at(self, created_at: datetime) -> datetime:
        return created_at + timedelta(days=self.log_days)

    def kept(self, memory: Memory, now: datetime) -> bool:
        """Whether the memory is still kept at `now`: by this policy and by the expiry stamped on it at save."""
        by_policy = self.expires_at(memory.memory_type, memory.created_at)
        return all(moment is None or moment > now for moment in (by_policy, memory.expires_at))

    def keeper(self, now: datetime) -> Callable[[Memory], bool]:
        """`kept(memory, now)` for the many memories of one read: each type's cut-off worked out once (a memory
        expires `days` after it was created, so it is kept while created after `now - days`)."""
        cutoffs = self.expired_before(now)
        if not cutoffs:
            return lambda memory: memory.expires_at is None or memory.expires_at > now

        def kept(memory: Memory) -> bool:
            if memory.expires_at is not None and memory.expires_at <= now:
                return False
            cutoff = cutoffs.get(memory.memory_type)
            return cutoff is None or memory.created_at > cutoff

        return kept

    def expired_before(self, now: datetime) -> dict[MemoryType, datetime]:
        """Per memory type with a limit: memories created before this moment are expired at `now`."""
        return {memory_type: now - timedelta(days=days) for memory_type, days in self.memory_days.items()}

    def as_days(self) -> dict[str, int | None]:
        """Every key with its days (None: kept until deleted), as the API and the inspector show it."""
        shown: dict[str, int | None] = {t.value: self.memory_days.get(t) for t in MemoryType}
        shown[LOG] = self.log_days
        return shown


@dataclass(frozen=True)
class TenantRetention:
    """The default policy, and the tenants whose policy differs (their keys replace the default's)."""

    default: RetentionPolicy = field(default_factory=RetentionPolicy)
    tenants: Mapping[str, RetentionPolicy] = field(default_factory=lambda: MappingProxyType({}))

    def __call__(self, tenant_id: str) -> RetentionPolicy:
        return self.tenants.get(tenant_id, self.default)


def build_retention(default: Mapping[str, int], tenants: Mapping[str, Mapping[str, int]],
                    log_days: int) -> TenantRetention:
    """From checked settings: `log_days` (CONVERSATION_LOG_TTL_DAYS) where a policy names no LOG."""

    def policy(days: Mapping[str, int]) -> RetentionPolicy:
        return RetentionPolicy(
            memory_days=MappingProxyType({MemoryType(k): v for k, v in days.items() if k != LOG}),
            log_days=days.get(LOG, log_days))

    return TenantRetention(default=policy(default), tenants=MappingProxyType(
        {tenant: policy({**default, **days}) for tenant, days in tenants.items()}))
