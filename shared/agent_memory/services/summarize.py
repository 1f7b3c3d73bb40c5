"""summarize: the structured user profile in the schema of the user's pack, cached by the user's version counter."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from agent_memory.domain.models import Memory, ScopeRef, utcnow
from agent_memory.domain.packs import DomainPack
from agent_memory.domain.profile.profile import (
    DEFAULT_PROFILE_SCHEMA,
    Profile,
    ProfileSchema,
    build_profile,
    template_narrative,
)
from agent_memory.ports import MemoryStore
from agent_memory.services.load import memories_as_of


@dataclass(frozen=True)
class ProfileSummary:
    """The user's structured profile and the narrative written from it."""

    profile: Profile
    narrative: str


class SummarizeService:
    def __init__(
        self,
        *,
        store: MemoryStore,
        current_memories: Callable[[ScopeRef], list[Memory]] | None = None,
        schema: ProfileSchema = DEFAULT_PROFILE_SCHEMA,
        narrate: Callable[[], Callable[[Profile], str]] = lambda: template_narrative,
        max_users: int = 256,
        packs: Callable[[str], DomainPack] | None = None,
        memories_at: Callable[[ScopeRef, datetime], list[Memory]] | None = None,
    ) -> None:
        """`packs`: a tenant's pack, whose profile schema is used (None: `schema` for every tenant);
        `memories_at`: the memories valid at an instant (None: as-of profiles are refused)."""
        self._memories_at = memories_at
        self._store = store
        self._current = current_memories or store.all_current
        self._schema = schema
        self._packs = packs
        self._narrate = narrate
        self._max_users = max_users
        # (the schema's pack, the user, the instant or None for now) -> (the user's version tag, the first expiry
        # of a memory it was built from, summary)
        self._cache: OrderedDict[tuple[str, ScopeRef, datetime | None],
                                 tuple[str, datetime | None, ProfileSummary]] = OrderedDict()
        self._lock = threading.Lock()

    def summarize(self, user: ScopeRef, *, as_of: datetime | None = None) -> ProfileSummary:
        """An unchanged user (same version counter) is answered from the cache: no narrative call. `as_of`: the
        profile from the memories as they were at that instant (cached per instant the same way)."""
        pack = self._packs(user.tenant_id) if self._packs is not None else None
        key = (pack.name if pack else "", user, as_of)
        version = self._store.versions(user).tag
        with self._lock:
            cached = self._cache.get(key)
            # A memory that expires changes no version: the profile built from it is stale from that moment.
            if cached and cached[0] == version and (cached[1] is None or utcnow() < cached[1]):
                return cached[2]
        memories = self._current(user) if as_of is None else memories_as_of(self._memories_at, user, as_of)
        profile = build_profile(memories, pack.profile if pack else self._schema)
        # A provider of the writer: the LLM SDK is imported only when a narrative is actually needed.
        output = ProfileSummary(profile=profile, narrative=self._narrate()(profile))
        # Less a second: an expiry is stamped rounded up to the second, and reads leave the memory out from its
        # exact moment (its created_at and the retention's days).
        first_expiry = min((m.expires_at - timedelta(seconds=1) for m in memories if m.expires_at is not None),
                           default=None)
        with self._lock:
            self._cache[key] = (version, first_expiry, output)
            while len(self._cache) > self._max_users:
                self._cache.popitem(last=False)
        return output
