"""A search of a user's memories as the search service takes and answers it: the query, and the hits
with how they were found. Pure values: the ranking itself is `ranking`'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from agent_memory.domain.models import Memory, MemoryType
from agent_memory.domain.search.ranking import ScoreBreakdown
from agent_memory.domain.search.temporal import TimeCue

SearchMode = Literal["semantic", "keyword", "hybrid"]
MAX_QUERY_CHARS = 2000

# The default floor on absolute relevance (domain/search/relevance.py), chosen by leave-one-conversation-out validation
# on the retrieval dev sets (`make bench-retrieval-cv`): the highest floor that costs no dataset's tuning
# conversations more than 0.01 of hit@5. It leaves out memories that share no term with the query and are no
# closer to it than everyday text is; with the bundled embedder it cannot tell much more (docs/design.md).
DEFAULT_MIN_RELEVANCE = 0.08


def summary_of(memory: Memory, length: int = 100) -> str:
    summary = memory.metadata.get("summary")
    if isinstance(summary, str) and summary:
        return summary
    return memory.content if len(memory.content) <= length else memory.content[: length - 1] + "…"


@dataclass(frozen=True)
class SearchQuery:
    """What to search a user's memories for: a search_memories request, or another service's own search.
    `query` is stripped and non-empty."""

    query: str
    search_mode: SearchMode | None = None  # None = the deployment's MEMORY_SEARCH_DEFAULT_MODE (hybrid)
    keywords: list[str] | None = None
    memory_types: list[MemoryType] | None = None
    time_range: tuple[datetime, datetime] | None = None
    limit: int = 5
    min_relevance_score: float = DEFAULT_MIN_RELEVANCE
    # Search the memories as they were at this instant (the versions valid then) instead of the current ones.
    as_of: datetime | None = None

    def __post_init__(self) -> None:
        if not self.query or len(self.query) > MAX_QUERY_CHARS:
            raise ValueError(f"a search query is 1 to {MAX_QUERY_CHARS} characters")


@dataclass(frozen=True)
class SearchHit:
    """One memory a search found: its final score (rounded as answered), the parts of it, and the recall
    round that found it (`fill`: topped up from the final ranking)."""

    memory: Memory
    relevance_score: float
    score_breakdown: ScoreBreakdown
    recall_round: str

    @property
    def summary(self) -> str:
        return summary_of(self.memory)

    @property
    def content_preview(self) -> str:
        return self.memory.content[:200]


@dataclass(frozen=True)
class SearchOutcome:
    """The hits, best first, and how they were found: `strategy` is `<mode>:<rounds that found them>`;
    `total_found` counts the memories that matched (above the floor), of which `hits` is the page answered."""

    hits: list[SearchHit]
    total_found: int
    strategy: str
    expanded_keywords: list[str] | None
    rounds_executed: int
    time_cue: TimeCue | None = None
