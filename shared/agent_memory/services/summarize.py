"""summarize: the structured user profile in the schema of the user's pack, cached by the user's version counter."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.domain.packs import DomainPack
from agent_memory.domain.profile import (
    DEFAULT_PROFILE_SCHEMA,
    Profile,
    ProfileSchema,
    build_profile,
    template_narrative,
)
from agent_memory.ports import MemoryStore


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
    ) -> None:
        """`packs`: a tenant's pack, whose profile schema is used (None: `schema` for every tenant)."""
        self._store = store
        self._current = current_memories or store.all_current
        self._schema = schema
        self._packs = packs
        self._narrate = narrate
        self._max_users = max_users
        # (the schema's pack, the user) -> (version, summary)
        self._cache: OrderedDict[tuple[str, ScopeRef], tuple[str, ProfileSummary]] = OrderedDict()
        self._lock = threading.Lock()

    def summarize(self, user: ScopeRef) -> ProfileSummary:
        """An unchanged user (same version counter) is answered from the cache: no narrative call."""
        pack = self._packs(user.tenant_id) if self._packs is not None else None
        key = (pack.name if pack else "", user)
        version = self._store.versions(user).tag
        with self._lock:
            cached = self._cache.get(key)
            if cached and cached[0] == version:
                return cached[1]
        profile = build_profile(self._current(user), pack.profile if pack else self._schema)
        # A provider of the writer: the LLM SDK is imported only when a narrative is actually needed.
        output = ProfileSummary(profile=profile, narrative=self._narrate()(profile))
        with self._lock:
            self._cache[key] = (version, output)
            while len(self._cache) > self._max_users:
                self._cache.popitem(last=False)
        return output
