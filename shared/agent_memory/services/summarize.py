"""summarize: the structured user profile, cached by the user's version counter."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from agent_memory.domain.models import Memory, ScopeRef
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
    ) -> None:
        self._store = store
        self._current = current_memories or store.all_current
        self._schema = schema
        self._narrate = narrate
        self._max_users = max_users
        self._cache: OrderedDict[ScopeRef, tuple[int, ProfileSummary]] = OrderedDict()
        self._lock = threading.Lock()

    def summarize(self, user: ScopeRef) -> ProfileSummary:
        """An unchanged user (same version counter) is answered from the cache: no narrative call."""
        version = self._store.user_version(user)
        with self._lock:
            cached = self._cache.get(user)
            if cached and cached[0] == version:
                return cached[1]
        profile = build_profile(self._current(user), self._schema)
        # A provider of the writer: the LLM SDK is imported only when a narrative is actually needed.
        output = ProfileSummary(profile=profile, narrative=self._narrate()(profile))
        with self._lock:
            self._cache[user] = (version, output)
            while len(self._cache) > self._max_users:
                self._cache.popitem(last=False)
        return output
