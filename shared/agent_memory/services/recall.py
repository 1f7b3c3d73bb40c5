"""Recall decision and query analysis for proactive recall, offline and deterministic.

Decides whether a message needs memories, of which intent, with which queries and keywords, and
(when it does) runs the multi-round recall. The cues are language patterns, not fitted answers.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from agent_memory.domain.keywords import extract_keywords
from agent_memory.domain.models import MemoryType, ScopeRef, is_cjk_text
from agent_memory.domain.placeholders import find_placeholders
from agent_memory.domain.requests import RequestModel
from agent_memory.domain.text import is_cjk
from agent_memory.services.search import (
    DEFAULT_MIN_RELEVANCE,
    RECALL_ROUNDS,
    MemorySearchResult,
    SearchRequest,
    SearchService,
)


class IntentType(StrEnum):
    INFORMATION_SEEKING = "INFORMATION_SEEKING"
    TASK_CONTINUATION = "TASK_CONTINUATION"
    PREFERENCE_BASED = "PREFERENCE_BASED"
    COMMAND_EXECUTION = "COMMAND_EXECUTION"
    GENERAL_CHAT = "GENERAL_CHAT"


# (intent, pattern, confidence): first strong cue wins; patterns cover Chinese and English.
_CUES: tuple[tuple[IntentType, re.Pattern[str], float], ...] = (
    (IntentType.COMMAND_EXECUTION, re.compile(
        r"\[memory:|重新执行|再执行|再跑|重跑|执行一下|运行一下|(?:re-?)?run (?:the|that|it|my)|execute|"
        r"(?:上次|之前)的(?:命令|脚本)", re.I), 0.9),
    (IntentType.TASK_CONTINUATION, re.compile(
        r"按(?:照)?我?(?:之前|上次|原来)|还是按|照旧|继续(?:上次|之前|刚才)|接着(?:上次|之前)|"
        r"as before|same as (?:last|before)|pick up where|continue (?:with|from) (?:the|my|our)|like last time|"
        r"(?:with|using|per|from) (?:my|the|our) (?:previous|prior|earlier|last|old|usual)", re.I),
        0.85),
    (IntentType.PREFERENCE_BASED, re.compile(
        r"我(?:一般|通常|习惯|喜欢|偏好|更喜欢)|按我的(?:习惯|偏好|喜好)|my (?:usual|preferred|favou?rite)|"
        r"i (?:usually|prefer|always|like to)|the way i like", re.I), 0.75),
    (IntentType.INFORMATION_SEEKING, re.compile(
        r"之前|上次|以前|刚才说|说过|提到过|提过|讲过|问过|记得|那个(?:方案|配置|设置|文件|问题|项目)|"
        r"last time|previously|earlier|before|remember|did i (?:say|mention|tell)|i (?:told|mentioned)|"
        r"what (?:was|were|did) (?:my|i|we)|that (?:plan|config|setting|file|issue|project)", re.I), 0.8),
)
_QUESTION = re.compile(
    r"[?？]|^(?:what|when|where|who|which|how|why|do|did|is|are|can)\b|吗|什么|哪|几|多少|怎么", re.I
)
# Words that carry the cue, not the topic: removed from search queries.
_CUE_WORDS = re.compile(
    r"之前|上次|以前|刚才|说过|提到过|提过|讲过|问过|记得|还是|按照|按|照旧|继续|接着|重新|执行|一下|我们|我|你|的|吗|呢|吧|说|"
    r"\b(?:last time|previously|earlier|before|remember|as before|did i|i told you|please|again|the|my|our)\b",
    re.I,
)


# A memory recalled unasked must be recalled by a round, its relevance at least that round's floor: 0.7 in the
# first (precise) round, then 0.6 (synonyms) and 0.5 (semantic). What a search tops up from its final ranking
# (`fill`) is never recalled unasked. Recall runs at most these many rounds over all its queries.
ROUND_FLOORS = {r.name: r.min_score for r in RECALL_ROUNDS}
MAX_RECALL_ROUNDS = len(RECALL_ROUNDS)
# Cues that the user wants it now (urgency high).
_URGENT = re.compile(r"马上|立刻|立即|赶紧|尽快|紧急|急|\b(?:urgent|asap|right now|immediately|quickly)\b", re.I)


class RecallRequest(RequestModel):
    message: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=8000)]
    context_type: Literal["initialization", "mid_conversation", "command"] = "mid_conversation"
    history: Annotated[list[Annotated[str, StringConstraints(max_length=8000)]], Field(max_length=20)] = Field(
        default_factory=list)
    limit: int = Field(default=5, ge=1, le=10)
    # A floor on the results' absolute relevance (`score_breakdown.absolute_relevance`), over the default one;
    # each result is also recalled by a round, its relevance at least that round's floor (0.7, 0.6, 0.5).
    min_relevance_score: float | None = Field(default=None, ge=0.0, le=1.0)


class RecallDecision(BaseModel):
    needs_recall: bool
    intent_type: IntentType
    confidence: float
    urgency: Literal["low", "medium", "high"]
    # Long or many-sided: worth extracting structured keywords before searching.
    is_complex_query: bool
    search_queries: list[str]
    keywords: list[str]
    memory_types: list[MemoryType] | None = None
    reasoning: str


class RecallOutput(BaseModel):
    decision: RecallDecision
    memories: list[MemorySearchResult]
    search_strategy_used: str | None = None
    rounds_executed: int = 0
    placeholders: list[str] = Field(default_factory=list)
    # In normal chat the memories themselves, to put in the context ("相关历史记忆 [key]: ..."); a
    # command gets placeholders instead, resolved when it runs.
    context: str | None = None


def analyze(request: RecallRequest) -> RecallDecision:
    text = request.message
    intent, confidence, cue = IntentType.GENERAL_CHAT, 0.6, None
    for candidate, pattern, strength in _CUES:
        found = pattern.search(text)
        if found:
            intent, confidence, cue = candidate, strength, found.group(0)
            break
    if request.context_type == "command" and intent is IntentType.GENERAL_CHAT:
        intent, confidence = IntentType.COMMAND_EXECUTION, 0.7
    # The cue ("last time", "上次") says when, not what: keywords come from the rest, or a cue's words would
    # recall whatever else mentions "last time".
    topic = _CUE_WORDS.sub(" ", text)
    topic = re.sub(r"[\s,，。.!！?？:：;；、]+", " ", topic).strip()
    keywords = [stripped for k in extract_keywords(topic, max_keywords=5, min_weight=0.0)
                if len(stripped := _CUE_WORDS.sub("", k.term).strip()) >= 2]
    queries = [q for q in dict.fromkeys([topic, " ".join(keywords)]) if q]
    needs = intent is not IntentType.GENERAL_CHAT or request.context_type == "initialization"
    if intent is IntentType.GENERAL_CHAT and needs:
        reasoning = "conversation start: load what is known about the user"
        queries = queries or [text]
    elif needs:
        reasoning = f"cue {cue!r} signals {intent.value.lower().replace('_', ' ')}"
    else:
        reasoning = "no reference to earlier context, preferences or commands"
        if _QUESTION.search(text) and keywords:
            confidence = 0.5
    if _URGENT.search(text) or intent is IntentType.COMMAND_EXECUTION:
        urgency: Literal["low", "medium", "high"] = "high"
    else:
        urgency = "medium" if needs else "low"
    clauses = [c for c in re.split(r"[,，。.;；!！?？\n]+", text) if c.strip()]
    words = len(re.findall(r"[A-Za-z0-9]+", text)) + sum(1 for c in text if is_cjk(c)) // 2
    return RecallDecision(
        needs_recall=needs,
        intent_type=intent,
        confidence=confidence,
        urgency=urgency,
        is_complex_query=len(keywords) >= 4 or len(clauses) >= 3 or words > 30,
        search_queries=queries[:3],
        keywords=keywords,
        memory_types=[MemoryType.PREFERENCE] if intent is IntentType.PREFERENCE_BASED else None,
        reasoning=reasoning,
    )


class RecallService:
    def __init__(self, *, search: SearchService) -> None:
        self._search = search

    def recall(self, user: ScopeRef, request: RecallRequest) -> RecallOutput:
        decision = analyze(request)
        if not decision.needs_recall:
            return RecallOutput(decision=decision, memories=[])
        merged: dict[str, MemorySearchResult] = {}
        strategy, rounds = None, 0
        for query in decision.search_queries:
            if rounds >= MAX_RECALL_ROUNDS:
                break
            output = self._search.search(user, SearchRequest(
                query=query, memory_types=decision.memory_types, limit=request.limit, min_relevance_score=0.0,
            ), max_rounds=MAX_RECALL_ROUNDS - rounds)
            strategy, rounds = output.search_strategy_used, rounds + output.rounds_executed
            for result in output.results:
                if not _good_enough(result, request.min_relevance_score):
                    continue
                best = merged.get(result.memory_key)
                if best is None or result.relevance_score > best.relevance_score:
                    merged[result.memory_key] = result
            if len(merged) >= min(2, request.limit):
                break
        memories = sorted(merged.values(), key=lambda r: -r.relevance_score)[: request.limit]
        # Commands get placeholders to resolve at execution time; chat gets the memories themselves.
        command = decision.intent_type is IntentType.COMMAND_EXECUTION
        placeholders = [f"[memory:{m.memory_key}:full]" for m in memories] if command else []
        placeholders += [p.raw for p in find_placeholders(request.message)]
        # A user's message gets the memories' content in its context, even one that asks to re-run a
        # command (the agent reads what it is about to run); only a direct command gets placeholders alone.
        direct_command = request.context_type == "command"
        context = None if direct_command or not memories else expand(memories, chinese=is_cjk_text(request.message))
        return RecallOutput(decision=decision, memories=memories, search_strategy_used=strategy,
                            rounds_executed=rounds, placeholders=placeholders, context=context)


def _good_enough(result: MemorySearchResult, floor: float | None) -> bool:
    """Recalled by a round (never a top-up), its relevance at least that round's floor, and its absolute
    relevance at least the caller's floor, else the default one (an off-topic message recalls nothing)."""
    round_floor = ROUND_FLOORS.get(result.recall_round)
    absolute_floor = DEFAULT_MIN_RELEVANCE if floor is None else floor
    return (round_floor is not None and result.score_breakdown.relevance >= round_floor
            and result.score_breakdown.absolute_relevance >= absolute_floor)


def expand(memories: list[MemorySearchResult], *, chinese: bool) -> str:
    """Recalled memories as chat-side context: each memory's key, summary and content (as previewed)."""
    head, summary, content = ("相关历史记忆", "摘要", "内容") if chinese else ("Related memory", "Summary", "Content")
    return "\n\n".join(f"{head} [{m.memory_key}]:\n{summary}: {m.summary}\n{content}: {m.content_preview}"
                       for m in memories)


