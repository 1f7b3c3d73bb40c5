"""Whether a message needs memories recalled, of which intent, with which queries and keywords: offline
and deterministic. The cues are language patterns, not fitted answers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel

from agent_memory.domain.models import MemoryType
from agent_memory.domain.search.search import MAX_QUERY_CHARS
from agent_memory.domain.text.keywords import extract_keywords
from agent_memory.domain.text.text import is_cjk

RecallContext = Literal["initialization", "mid_conversation", "command"]


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


# Cues that the user wants it now (urgency high).
_URGENT = re.compile(r"马上|立刻|立即|赶紧|尽快|紧急|急|\b(?:urgent|asap|right now|immediately|quickly)\b", re.I)


@dataclass(frozen=True)
class RecallQuery:
    """A message to recall memories for (stripped, non-empty), where in the conversation it comes, how many
    memories to answer, and a floor on their absolute relevance over the default one."""

    message: str
    context_type: RecallContext = "mid_conversation"
    limit: int = 5
    min_relevance_score: float | None = None


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


def _searchable(text: str) -> str:
    """The text within a search query's length, cut at the last space before the limit where there is one: a
    message may be four times as long as a query, and its opening says what it is about."""
    if len(text) <= MAX_QUERY_CHARS:
        return text
    head = text[:MAX_QUERY_CHARS]
    space = head.rfind(" ")
    return head[:space].rstrip() if space > MAX_QUERY_CHARS // 2 else head


def analyze(request: RecallQuery) -> RecallDecision:
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
    queries = [q for q in dict.fromkeys([_searchable(topic), " ".join(keywords)]) if q]
    needs = intent is not IntentType.GENERAL_CHAT or request.context_type == "initialization"
    if intent is IntentType.GENERAL_CHAT and needs:
        reasoning = "conversation start: load what is known about the user"
        queries = queries or [_searchable(text)]
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
