"""The user_memory block: what the stored memories say about this user."""

from __future__ import annotations

from collections.abc import Callable

from agent_memory.domain.context import ContextType, Priority, one_line
from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.ports import MemoryStore
from agent_memory.services.blocks.base import BlockCache, FetchContext
from agent_memory.services.search import SearchMode, SearchRequest, SearchService


class UserMemorySource:
    """Top memories by importance plus those relevant to the current message, deduplicated. Keyed by
    the user's version counter, so a save invalidates it with no call."""

    type = ContextType.USER_MEMORY
    priority = Priority.CRITICAL
    ttl_seconds = 60.0
    does_io = True

    def __init__(
        self,
        *,
        store: MemoryStore,
        search: SearchService,
        current_memories: Callable[[ScopeRef], list[Memory]] | None = None,
        top_n: int = 5,
        relevant_n: int = 3,
        min_relevance: float = 0.3,
        search_mode: SearchMode | None = None,
    ) -> None:
        self._store = store
        self._search = search
        self._current = current_memories or store.all_current
        self._top_n = top_n
        self._relevant_n = relevant_n
        self._min_relevance = min_relevance
        self._search_mode = search_mode

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        """Two cached parts: the top memories change only with the version counter; the relevant ones
        also with the message. An agent loop's repeated calls within one user turn hit both."""
        version = ctx.user_version(ctx.user, self._store.user_version)
        top = cache.get_or_build(f"{self.type}#top#v{version}", self.ttl_seconds, lambda: self._top(ctx))
        query = ctx.request.current_user_message.strip()
        relevant = cache.get_or_build(f"{self.type}#rel#v{version}#{ctx.message_hash()}", self.ttl_seconds,
                                      lambda: self._relevant(ctx, query)) if query and self._relevant_n else ""
        lines = list(dict.fromkeys(line for line in (top + "\n" + relevant).splitlines() if line))
        if not lines:
            return ""
        intro = ctx.pick("以下是该用户的历史记录摘要（来自之前的对话）：",
                         "What we know about this user from earlier conversations:")
        return "\n".join([intro, *lines])

    def _line(self, memory: Memory, ctx: FetchContext) -> str:
        label = ctx.pick("重要度", "importance")
        return f"- [{memory.memory_type.value}] {one_line(memory.content)} ({label}: {memory.importance})"

    def _top(self, ctx: FetchContext) -> str:
        memories = self._current(ctx.user)
        top = sorted(memories, key=lambda m: (m.importance, m.created_at), reverse=True)[: self._top_n]
        return "\n".join(self._line(m, ctx) for m in top)

    def _relevant(self, ctx: FetchContext, query: str) -> str:
        memories = {m.memory_key: m for m in self._current(ctx.user)}
        if not memories:
            return ""
        found = self._search.search(ctx.user, SearchRequest(
            query=query[:2000], limit=self._relevant_n, min_relevance_score=self._min_relevance,
            search_mode=self._search_mode))
        return "\n".join(self._line(memories[r.memory_key], ctx) for r in found.results if r.memory_key in memories)
