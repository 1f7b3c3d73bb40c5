"""Proactive recall: when a message needs memories (the domain's `recall.analyze` decides), the
multi-round search for them over every query the analysis found."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_memory.domain.models import ScopeRef, is_cjk_text
from agent_memory.domain.search.recall import IntentType, RecallDecision, RecallQuery, analyze
from agent_memory.domain.search.search import DEFAULT_MIN_RELEVANCE, SearchHit, SearchQuery
from agent_memory.domain.text.placeholders import find_placeholders
from agent_memory.services.search import RECALL_ROUNDS, SearchService

# A memory recalled unasked must be recalled by a round, its relevance at least that round's floor: 0.7 in the
# first (precise) round, then 0.6 (synonyms) and 0.5 (semantic). What a search tops up from its final ranking
# (`fill`) is never recalled unasked. Recall runs at most these many rounds over all its queries.
ROUND_FLOORS = {r.name: r.min_score for r in RECALL_ROUNDS}
MAX_RECALL_ROUNDS = len(RECALL_ROUNDS)


@dataclass(frozen=True)
class Recall:
    """The decision, and when it called for recall, the memories found (best first), how, and for what:
    placeholders for a command to resolve when it runs, or in chat the memories as context."""

    decision: RecallDecision
    memories: list[SearchHit] = field(default_factory=list)
    strategy: str | None = None
    rounds_executed: int = 0
    placeholders: list[str] = field(default_factory=list)
    context: str | None = None


class RecallService:
    def __init__(self, *, search: SearchService) -> None:
        self._search = search

    def recall(self, user: ScopeRef, request: RecallQuery) -> Recall:
        decision = analyze(request)
        if not decision.needs_recall:
            return Recall(decision=decision)
        merged: dict[str, SearchHit] = {}
        strategy, rounds = None, 0
        for query in decision.search_queries:
            if rounds >= MAX_RECALL_ROUNDS:
                break
            output = self._search.search(user, SearchQuery(
                query=query, memory_types=decision.memory_types, limit=request.limit, min_relevance_score=0.0,
            ), max_rounds=MAX_RECALL_ROUNDS - rounds)
            strategy, rounds = output.strategy, rounds + output.rounds_executed
            for hit in output.hits:
                if not _good_enough(hit, request.min_relevance_score):
                    continue
                best = merged.get(hit.memory.memory_key)
                if best is None or hit.relevance_score > best.relevance_score:
                    merged[hit.memory.memory_key] = hit
            if len(merged) >= min(2, request.limit):
                break
        memories = sorted(merged.values(), key=lambda r: -r.relevance_score)[: request.limit]
        # Commands get placeholders to resolve at execution time; chat gets the memories themselves.
        command = decision.intent_type is IntentType.COMMAND_EXECUTION
        placeholders = [f"[memory:{m.memory.memory_key}:full]" for m in memories] if command else []
        placeholders += [p.raw for p in find_placeholders(request.message)]
        # A user's message gets the memories' content in its context, even one that asks to re-run a
        # command (the agent reads what it is about to run); only a direct command gets placeholders alone.
        direct_command = request.context_type == "command"
        context = None if direct_command or not memories else expand(memories, chinese=is_cjk_text(request.message))
        return Recall(decision=decision, memories=memories, strategy=strategy, rounds_executed=rounds,
                      placeholders=placeholders, context=context)


def _good_enough(result: SearchHit, floor: float | None) -> bool:
    """Recalled by a round (never a top-up), its relevance at least that round's floor, and its absolute
    relevance at least the caller's floor, else the default one (an off-topic message recalls nothing)."""
    round_floor = ROUND_FLOORS.get(result.recall_round)
    absolute_floor = DEFAULT_MIN_RELEVANCE if floor is None else floor
    return (round_floor is not None and result.score_breakdown.relevance >= round_floor
            and result.score_breakdown.absolute_relevance >= absolute_floor)


def expand(memories: list[SearchHit], *, chinese: bool) -> str:
    """Recalled memories as chat-side context: each memory's key, summary and content (as previewed)."""
    head, summary, content = ("相关历史记忆", "摘要", "内容") if chinese else ("Related memory", "Summary", "Content")
    return "\n\n".join(f"{head} [{m.memory.memory_key}]:\n{summary}: {m.summary}\n{content}: {m.content_preview}"
                       for m in memories)


