"""summarize: the structured user profile, cached by the user's version counter."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.domain.profile import (
    DEFAULT_PROFILE_SCHEMA,
    Completeness,
    Profile,
    ProfileSchema,
    build_profile,
    template_narrative,
)
from agent_memory.ports import MemoryStore


class SummarizeOutput(BaseModel):
    action: str = "summarize"
    user_profile: dict[str, dict[str, Any]]
    completeness: Completeness
    narrative_summary: str


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
        self._cache: OrderedDict[ScopeRef, tuple[int, SummarizeOutput]] = OrderedDict()
        self._lock = threading.Lock()

    def summarize(self, user: ScopeRef) -> SummarizeOutput:
        """An unchanged user (same version counter) is answered from the cache: no narrative call."""
        version = self._store.user_version(user)
        with self._lock:
            cached = self._cache.get(user)
            if cached and cached[0] == version:
                return cached[1]
        profile = build_profile(self._current(user), self._schema)
        # A provider of the writer: the LLM SDK is imported only when a narrative is actually needed.
        output = SummarizeOutput(user_profile=profile.user_profile, completeness=profile.completeness,
                                 narrative_summary=self._narrate()(profile))
        with self._lock:
            self._cache[user] = (version, output)
            while len(self._cache) > self._max_users:
                self._cache.popitem(last=False)
        return output
