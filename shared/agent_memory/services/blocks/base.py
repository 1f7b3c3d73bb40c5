"""What every block source shares: the facts of one request it may read (`FetchContext`), the context
cache as it sees it (`BlockCache`), and the shapes of a source and of a retriever."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agent_memory.domain.inject.context import Locale, Priority
from agent_memory.domain.inject.conversation import Message
from agent_memory.domain.inject.injection import ContextRequest
from agent_memory.domain.inject.request_blocks import pick
from agent_memory.domain.models import ScopeRef
from agent_memory.ports import CachedContext, ContextCache


@dataclass(frozen=True)
class FetchContext:
    """What a block source may read: the request, who asks, and facts derived once."""

    request: ContextRequest
    user: ScopeRef
    locale: Locale
    now: float  # epoch seconds
    turn_number: int  # 1 = the conversation's first user message
    # The Messages array about to be sent, before compaction: the request's, ending with the current message.
    messages: Sequence[Message] = field(compare=False, repr=False)

    def message_hash(self) -> str:
        return hashlib.sha256(self.request.current_user_message.strip().encode()).hexdigest()[:16]

    def pick(self, zh: str, en: str) -> str:
        """The text in the request's locale."""
        return pick(self.locale, zh, en)


class BlockCache:
    """The context cache as one source sees it: `get_or_build` serves a fresh entry or builds and
    stores one. A source may cache its block in parts (user_memory: the top memories by version,
    the relevant ones by version and message); lookups and hits are counted for the hit-rate metric.
    `pack`: the user's domain pack, which ends every key (what a block holds may depend on it: the search's
    synonyms, the knowledge triggers), so that a tenant moved to another pack never reads the old pack's blocks."""

    def __init__(self, cache: ContextCache, user: ScopeRef, now: float, pack: str = "") -> None:
        self._cache = cache
        self._user = user
        self._now = now
        self._suffix = f"#{pack}" if pack else ""
        self.lookups = 0
        self.hits = 0

    def get_or_build(self, key: str, ttl_seconds: float, build: Callable[[], str], *,
                     valid_until: Callable[[str], float | None] | None = None) -> str:
        """`valid_until`: when the built content goes stale before its TTL (epoch seconds; None: never): a memory
        it shows expires then, which no version counter records."""
        key += self._suffix
        self.lookups += 1
        entry = self._cache.get(self._user, key, now=self._now)
        if entry is not None:
            self.hits += 1
            return entry.content
        content = build()
        stale = valid_until(content) if valid_until is not None else None
        self._cache.put(self._user, key, CachedContext(content=content, created_at=self._now, expires_at=min(
            self._now + ttl_seconds, stale if stale is not None else float("inf"))))
        return content

    @property
    def all_hits(self) -> bool:
        return self.lookups > 0 and self.hits == self.lookups


class BlockSource(Protocol):
    """One block type. Register a new one in `registry.default_sources`. A source may also define
    `prepare(request)`: called first thing in a request, to start background work its `build` will use
    (it must not block; a failure is logged and costs nothing)."""

    @property
    def type(self) -> str: ...

    @property
    def priority(self) -> Priority: ...

    @property
    def ttl_seconds(self) -> float:
        """0 = real time; CONVERSATION_LIFETIME; else seconds (use `cache` to honour it)."""
        ...

    @property
    def does_io(self) -> bool:
        """Fetched on the thread pool, concurrently with the other I/O sources."""
        ...

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        """The block's body, without its tags; "" = nothing to inject."""
        ...
