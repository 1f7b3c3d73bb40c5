"""Loading a user's memories: the load_context action, listing and detail."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from agent_memory.domain.keys import is_valid_memory_key
from agent_memory.domain.models import Memory, MemoryPage, MemoryType, ScopeRef, is_cjk_text
from agent_memory.domain.packs import DomainPack, default_pack
from agent_memory.domain.search.search import SearchQuery, summary_of
from agent_memory.domain.text.placeholders import resolve
from agent_memory.errors import InvalidInput
from agent_memory.ports import MemoryStore
from agent_memory.services.search import SearchService

# The immigration pack's profile field order (a pack's `summary_fields` phrase the profile summary).
PROFILE_FIELD_ORDER = default_pack().summary_fields
# A profile summary is written only when at least this many profile fields are known.
MIN_FIELDS_FOR_SUMMARY = 3
# Blend of two orderings: importance (0-100) and relevance to the query (0-1).
IMPORTANCE_WEIGHT = 0.5
RELEVANCE_WEIGHT = 0.5


@dataclass(frozen=True)
class LoadedContext:
    """The load_context action's result: the user's memories in their blended order (at most the limit),
    the profile summary phrased from their fields, and how many current memories the user has."""

    memories: list[Memory]
    profile_summary: str | None
    total_memories: int


def profile_summary(memories: list[Memory], order: tuple[str, ...] = PROFILE_FIELD_ORDER) -> str | None:
    """The memories of the profile fields in `order`, as one sentence, once enough of them are known."""
    by_field: dict[str, list[Memory]] = {}
    for memory in memories:
        field = (memory.field or "").split(".", 1)[0]  # a list field's slots are `<field>.<value>`
        if field in order:
            by_field.setdefault(field, []).append(memory)
    if len(by_field) < MIN_FIELDS_FOR_SUMMARY:
        return None
    ordered = [m.content for f in order for m in by_field.get(f, [])]
    separator = "，" if is_cjk_text("".join(ordered)) else "; "
    end = "。" if separator == "，" else "."
    return separator.join(c.rstrip("。.，, ") for c in ordered) + end


def memories_as_of(memories_at: Callable[[ScopeRef, datetime], list[Memory]] | None, user: ScopeRef,
                   at: datetime) -> list[Memory]:
    if memories_at is None:
        raise InvalidInput("as_of: this deployment answers no as-of reads",
                           details=[{"field": "as_of", "type": "unavailable"}])
    return memories_at(user, at)


@dataclass(frozen=True)
class ResolvedPlaceholders:
    text: str
    placeholders: list[str]
    missing: list[str]


class LoadService:
    def __init__(
        self,
        *,
        store: MemoryStore,
        search: SearchService,
        current_memories: Callable[[ScopeRef], list[Memory]] | None = None,
        packs: Callable[[str], DomainPack] = lambda _: default_pack(),
        memories_at: Callable[[ScopeRef, datetime], list[Memory]] | None = None,
    ) -> None:
        """`packs`: a tenant's pack, whose summary fields phrase the profile summary; `memories_at`: the memories
        valid at an instant, as they stood then (None: as-of loads are refused)."""
        self._memories_at = memories_at
        self._store = store
        self._packs = packs
        self._search = search
        # The serverless tier hands in its version-keyed cache; otherwise the store is read.
        self._current_memories = current_memories or store.all_current

    def load_context(self, user: ScopeRef, query: str, limit: int, *, as_of: datetime | None = None) -> LoadedContext:
        """`as_of`: the memories as they were at that instant (the versions valid then), searched as of then."""
        memories = self._current_memories(user) if as_of is None else memories_as_of(self._memories_at, user, as_of)
        found: dict[str, float] = {}
        if query.strip() and memories:
            request = SearchQuery(query=query.strip(), limit=min(20, limit), min_relevance_score=0.0, as_of=as_of)
            found = {h.memory.memory_key: h.relevance_score for h in self._search.search(user, request).hits}
        relevance = [found.get(m.memory_key, 0.0) for m in memories]
        scored = sorted(
            zip(memories, relevance, strict=True),
            key=lambda pair: (
                IMPORTANCE_WEIGHT * pair[0].importance / 100 + RELEVANCE_WEIGHT * pair[1],
                pair[0].created_at,
            ),
            reverse=True,
        )
        summary = profile_summary(memories, self._packs(user.tenant_id).summary_fields)
        return LoadedContext(memories=[m for m, _ in scored[:limit]], profile_summary=summary,
                             total_memories=len(memories))

    def list_memories(
        self, user: ScopeRef, *, memory_type: MemoryType | None, limit: int, cursor: str | None
    ) -> MemoryPage:
        return self._store.list_current(user, memory_type=memory_type, limit=limit, cursor=cursor)

    def resolve_placeholders(self, user: ScopeRef, text: str) -> ResolvedPlaceholders:
        """`[memory:key...]` placeholders in `text` replaced by the user's current memories; a missing or
        superseded memory becomes an error marker and is listed in `missing`."""

        def lookup(keys: Iterable[str]) -> dict[str, Memory]:
            found = {}
            for key in keys:
                memory = self._store.get(user, key) if is_valid_memory_key(key) else None
                if memory is not None and memory.is_current:
                    found[key] = memory
            return found

        resolved, placeholders, missing = resolve(text, lookup, summary_of)
        return ResolvedPlaceholders(text=resolved, placeholders=[p.raw for p in placeholders], missing=missing)
