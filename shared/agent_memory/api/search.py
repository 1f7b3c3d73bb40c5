"""Searching a user's memories over HTTP: search_memories, get_memory (a memory with its history) and
recall, their requests and answers, and how they map to the search and recall services."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from agent_memory.domain.models import AsOf, Memory, MemoryType, ScopeRef, TimeRange
from agent_memory.domain.requests import RequestModel
from agent_memory.domain.search.ranking import ScoreBreakdown
from agent_memory.domain.search.recall import RecallContext, RecallDecision, RecallQuery
from agent_memory.domain.search.search import (
    DEFAULT_MIN_RELEVANCE,
    MAX_QUERY_CHARS,
    SearchHit,
    SearchMode,
    SearchOutcome,
    SearchQuery,
)

if TYPE_CHECKING:
    from agent_memory.services.recall import Recall, RecallService
    from agent_memory.services.search import SearchService

Term = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
AS_OF_DESCRIPTION = (
    "Read the memories as they were at this instant (ISO-8601 with a timezone, e.g. 2026-02-05T10:00:00Z; not in "
    "the future beyond 5 minutes): the versions valid then, each from its valid_from until it was superseded or "
    "deleted. Unset: the current memories.")


class SearchRequest(RequestModel):
    """A search_memories request."""

    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)]
    search_mode: SearchMode | None = None  # None = the deployment's MEMORY_SEARCH_DEFAULT_MODE (hybrid)
    keywords: Annotated[list[Term], Field(max_length=20)] | None = None
    memory_types: Annotated[list[MemoryType], Field(max_length=10)] | None = None
    time_range: TimeRange | None = None
    limit: int = Field(default=5, ge=1, le=20)
    min_relevance_score: float = Field(default=DEFAULT_MIN_RELEVANCE, ge=0.0, le=1.0)
    as_of: AsOf | None = Field(default=None, description=AS_OF_DESCRIPTION)

    def to_query(self) -> SearchQuery:
        return SearchQuery(query=self.query, search_mode=self.search_mode, keywords=self.keywords,
                           memory_types=self.memory_types, time_range=self.time_range, limit=self.limit,
                           min_relevance_score=self.min_relevance_score, as_of=self.as_of)


class MemorySearchResult(BaseModel):
    memory_key: str
    summary: str
    content_preview: str
    memory_type: MemoryType
    relevance_score: float
    created_at: datetime
    keywords: list[str]
    metadata: dict[str, Any]
    score_breakdown: ScoreBreakdown
    recall_round: str

    @classmethod
    def of(cls, hit: SearchHit) -> MemorySearchResult:
        memory = hit.memory
        return cls(memory_key=memory.memory_key, summary=hit.summary, content_preview=hit.content_preview,
                   memory_type=memory.memory_type, relevance_score=hit.relevance_score, created_at=memory.created_at,
                   keywords=[k.term for k in memory.keywords], metadata=memory.metadata,
                   score_breakdown=hit.score_breakdown, recall_round=hit.recall_round)


class TimeCueUsed(BaseModel):
    """The period the query named, which the time part of relevance measured closeness to: [start, end)."""

    text: str
    start: datetime
    end: datetime


class SearchMemoriesOutput(BaseModel):
    """What search_memories returns: the results, plus how they were found."""

    total_found: int
    results: list[MemorySearchResult]
    search_strategy_used: str
    expanded_keywords: list[str] | None
    rounds_executed: int
    time_cue: TimeCueUsed | None = None
    as_of: datetime | None = Field(default=None, description="The instant searched as of (UTC), as requested; null: "
                                                             "the current memories were searched.")

    @classmethod
    def of(cls, outcome: SearchOutcome, as_of: datetime | None = None) -> SearchMemoriesOutput:
        cue = outcome.time_cue
        return cls(total_found=outcome.total_found, results=[MemorySearchResult.of(h) for h in outcome.hits],
                   search_strategy_used=outcome.strategy, expanded_keywords=outcome.expanded_keywords,
                   rounds_executed=outcome.rounds_executed,
                   time_cue=TimeCueUsed(text=cue.text, start=cue.start, end=cue.end) if cue else None, as_of=as_of)


class MemoryDetailOutput(BaseModel):
    """get_memory_detail: the whole memory, its version history and the keywords it is indexed by."""

    memory: Memory
    history: list[Memory]


class RecallRequest(RequestModel):
    message: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=8000)]
    context_type: RecallContext = "mid_conversation"
    history: Annotated[list[Annotated[str, StringConstraints(max_length=8000)]], Field(max_length=20)] = Field(
        default_factory=list)
    limit: int = Field(default=5, ge=1, le=10)
    # A floor on the results' absolute relevance (`score_breakdown.absolute_relevance`), over the default one;
    # each result is also recalled by a round, its relevance at least that round's floor (0.7, 0.6, 0.5).
    min_relevance_score: float | None = Field(default=None, ge=0.0, le=1.0)

    def to_query(self) -> RecallQuery:
        return RecallQuery(message=self.message, context_type=self.context_type, limit=self.limit,
                           min_relevance_score=self.min_relevance_score)


class RecallOutput(BaseModel):
    decision: RecallDecision
    memories: list[MemorySearchResult]
    search_strategy_used: str | None = None
    rounds_executed: int = 0
    placeholders: list[str] = Field(default_factory=list)
    # In normal chat the memories themselves, to put in the context ("相关历史记忆 [key]: ..."); a
    # command gets placeholders instead, resolved when it runs.
    context: str | None = None

    @classmethod
    def of(cls, recall: Recall) -> RecallOutput:
        return cls(decision=recall.decision, memories=[MemorySearchResult.of(h) for h in recall.memories],
                   search_strategy_used=recall.strategy, rounds_executed=recall.rounds_executed,
                   placeholders=recall.placeholders, context=recall.context)


def search_memories(service: SearchService, user: ScopeRef, request: SearchRequest) -> SearchMemoriesOutput:
    return SearchMemoriesOutput.of(service.search(user, request.to_query()), request.as_of)


def memory_detail(service: SearchService, user: ScopeRef, memory_key: str) -> MemoryDetailOutput:
    memory, history = service.memory_detail(user, memory_key)
    return MemoryDetailOutput(memory=memory, history=history)


def recall_memories(service: RecallService, user: ScopeRef, request: RecallRequest) -> RecallOutput:
    return RecallOutput.of(service.recall(user, request.to_query()))
