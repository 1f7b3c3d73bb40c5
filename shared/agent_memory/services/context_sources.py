"""The seed's eight context block types (seed 08, section 4), one small class each.

A new block type is a class with `type`, `priority`, `ttl_seconds`, `does_io` and `build` (which caches
through the `BlockCache` it is handed, honouring its TTL), added to `default_sources`. Text from users,
memories and callers goes through `neutralize`/`one_line`.
"""

from __future__ import annotations

import builtins
import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from typing import Any, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent_memory.domain.context import (
    CONVERSATION_LIFETIME,
    ContextType,
    Priority,
    neutralize,
    one_line,
)
from agent_memory.domain.layers import scope_label, scope_ref
from agent_memory.domain.models import Memory, UserRef
from agent_memory.domain.requests import RequestModel
from agent_memory.ports import MemoryStore
from agent_memory.services.inject import (
    AgentExecutionRecord,
    BlockCache,
    ExperienceItem,
    FetchContext,
    KnowledgeItem,
)
from agent_memory.services.memory_layers import IntentContextRequest
from agent_memory.services.search import SearchMode, SearchRequest, SearchService


def _pick(ctx: FetchContext, zh: str, en: str) -> str:
    return zh if ctx.locale == "zh" else en


# ---- 4.1 user_memory ------------------------------------------------------------------------------

class UserMemorySource:
    """Top memories by importance plus those relevant to the current message, deduplicated. Keyed by
    the user's version counter, so a save invalidates it with no call (the seed's invalidateContext)."""

    type = ContextType.USER_MEMORY
    priority = Priority.CRITICAL
    ttl_seconds = 60.0
    does_io = True

    def __init__(
        self,
        *,
        store: MemoryStore,
        search: SearchService,
        current_memories: Callable[[UserRef], list[Memory]] | None = None,
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
        intro = _pick(ctx, "以下是该用户的历史记录摘要（来自之前的对话）：",
                      "What we know about this user from earlier conversations:")
        return "\n".join([intro, *lines])

    def _line(self, memory: Memory, ctx: FetchContext) -> str:
        label = _pick(ctx, "重要度", "importance")
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


# ---- 4.2 collected_info ---------------------------------------------------------------------------

COLLECTED_LABELS = {
    "age": ("年龄", "Age"), "education": ("学历", "Education"), "university": ("毕业院校", "University"),
    "workYears": ("工作年限", "Years of experience"), "industry": ("行业", "Industry"),
    "annualIncome": ("年收入", "Annual income"), "maritalStatus": ("婚姻状况", "Marital status"),
    "children": ("子女", "Children"), "languageAbility": ("语言能力", "Languages"),
    "hasHKConnection": ("香港联系", "Hong Kong connection"), "assets": ("资产情况", "Assets"),
    "nationality": ("国籍", "Nationality"),
}
CORE_COLLECTED_KEYS = ("age", "education", "workYears", "annualIncome", "languageAbility", "hasHKConnection")


def _value_text(value: Any, zh: bool) -> str:
    if isinstance(value, bool):
        return ("是" if value else "否") if zh else ("yes" if value else "no")
    if isinstance(value, list | tuple):
        return ("、" if zh else ", ").join(_value_text(v, zh) for v in value)
    return one_line(value, 200)


class CollectedInfoSource:
    type = ContextType.COLLECTED_INFO
    priority = Priority.CRITICAL
    ttl_seconds = 0.0
    does_io = False

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        state = ctx.request.consulting_state
        info = {k: v for k, v in (state.collected_info if state else {}).items() if v is not None and v != ""}
        if not info:
            return ""
        zh = ctx.locale == "zh"
        index = 0 if zh else 1
        lines = [f"- {COLLECTED_LABELS.get(k, (one_line(k, 80),) * 2)[index]}: {_value_text(v, zh)}"
                 for k, v in info.items()]
        missing = [COLLECTED_LABELS[k][index] for k in CORE_COLLECTED_KEYS if k not in info]
        tail = (f"尚未收集: {'、'.join(missing)}" if missing else "核心信息已收集完毕") if zh else (
            f"Not collected yet: {', '.join(missing)}" if missing else "All core information is collected")
        return "\n".join([_pick(ctx, "本次对话已收集的用户信息：", "Information collected in this conversation:"),
                          *lines, tail])


# ---- 4.3 conversation_stats -----------------------------------------------------------------------

STAGE_NAMES = {
    "greeting": ("开场破冰", "greeting"), "needs_discovery": ("需求了解", "needs discovery"),
    "info_collection": ("信息收集", "information collection"), "assessment": ("评估", "assessment"),
    "recommendation": ("推荐", "recommendation"), "objection_handling": ("异议处理", "objection handling"),
    "conversion": ("转化促成", "conversion"), "handoff": ("专家对接", "expert handoff"),
}


def _stage(stage_id: str | None, zh: bool) -> str:
    if not stage_id:
        return "未知" if zh else "unknown"
    return STAGE_NAMES.get(stage_id, (one_line(stage_id, 80),) * 2)[0 if zh else 1]


def _reply_style(avg_chars: float, zh: bool) -> str:
    # The seed's thresholds are in CJK characters; Latin text carries ~4x fewer ideas per character.
    scale = 1 if zh else 4
    styles = (("极简短，可能在移动设备", "very short, possibly on a phone"),
              ("较简短，需引导展开", "short; invite them to elaborate"),
              ("中等长度，表达较充分", "medium length, fairly expressive"),
              ("详细表达，用户积极参与", "detailed; the user is engaged"))
    bands = (20 * scale, 50 * scale, 150 * scale)
    band = next((i for i, limit in enumerate(bands) if avg_chars < limit), 3)
    return styles[band][0 if zh else 1]


class ConversationStatsSource:
    type = ContextType.CONVERSATION_STATS
    priority = Priority.IMPORTANT
    ttl_seconds = 0.0
    does_io = False

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        request, zh = ctx.request, ctx.locale == "zh"
        texts = [m.content if isinstance(m.content, str) else " ".join(
            b.get("text", "") for b in m.content if b.get("type") == "text")
            for m in request.messages if m.role == "user"]
        if request.current_user_message.strip() and request.current_user_message.strip() not in (
                t.strip() for t in texts[-1:]):
            texts.append(request.current_user_message)
        texts = [t for t in texts if t.strip()]
        avg = sum(len(t) for t in texts) / max(len(texts), 1)
        state = request.consulting_state
        started = request.conversation_started_at
        minutes = round((ctx.now - started.timestamp()) / 60) if started else None
        history = " → ".join(f"{_stage(h.stage_id, zh)}({h.turns_in_stage}{'轮' if zh else ' turns'})"
                             for h in (state.stage_history if state else []))
        stage_turn = (state.stage_turn_count if state else 0) + 1
        if zh:
            lines = ["对话统计:", f"- 总轮次: {ctx.turn_number}轮 (用户发言{len(texts)}次)",
                     f"- 对话时长: {minutes}分钟" if minutes is not None else "- 对话时长: 未知",
                     f"- 当前阶段: {_stage(state.current_stage_id if state else None, zh)} (第{stage_turn}轮)",
                     f"- 阶段历程: {history or '无'}",
                     f"- 用户回复特点: 平均每次{round(avg)}字，{_reply_style(avg, zh)}"]
        else:
            lines = ["Conversation stats:", f"- Turns: {ctx.turn_number} ({len(texts)} user messages)",
                     f"- Duration: {minutes} minutes" if minutes is not None else "- Duration: unknown",
                     f"- Current stage: {_stage(state.current_stage_id if state else None, zh)} (turn {stage_turn})",
                     f"- Stage history: {history or 'none'}",
                     f"- User replies: {round(avg)} characters on average, {_reply_style(avg, zh)}"]
        return "\n".join(lines)


# ---- 4.4 assessment_result ------------------------------------------------------------------------

SEED_ASSESSMENT_NOTE = "提示: 这是基于初步信息的预评估。付费详细评估(¥99)将提供完整的评分报告和申请建议。"


class AssessmentResultSource:
    type = ContextType.ASSESSMENT_RESULT
    priority = Priority.CRITICAL
    ttl_seconds = 0.0
    does_io = False

    def __init__(self, *, note: str = SEED_ASSESSMENT_NOTE) -> None:
        self._note = note

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        state = ctx.request.consulting_state
        result = state.assessment_result if state else None
        if result is None:
            return ""
        zh = ctx.locale == "zh"
        programs = ("、" if zh else ", ").join(one_line(p, 100) for p in result.recommended_programs) or "-"
        score = "-" if result.suitability_score is None else f"{result.suitability_score:g}"
        lines = [_pick(ctx, "用户移民资格初步评估结果:", "Preliminary assessment:"),
                 f"{_pick(ctx, '推荐方案', 'Recommended')}: {programs}",
                 f"{_pick(ctx, '匹配度', 'Suitability')}: {score}{_pick(ctx, '分/100分', '/100')}"]
        if result.highlights:
            lines += [_pick(ctx, "优势:", "Strengths:"), *(f"  - {one_line(h)}" for h in result.highlights)]
        if result.concerns:
            lines += [_pick(ctx, "注意事项:", "Concerns:"), *(f"  - {one_line(c)}" for c in result.concerns)]
        if self._note and zh:
            lines.append(neutralize(self._note))
        return "\n".join(lines)


# ---- 4.5 relevant_knowledge / 4.6 similar_experiences -----------------------------------------------

class Retriever(Protocol):
    """A pluggable knowledge or experience source (e.g. the HTTP retriever)."""

    def retrieve(self, user: UserRef, query: str, limit: int) -> list[dict[str, Any]]: ...


# The seed's shouldRetrieveKnowledge: only policy-like questions are worth a retrieval call.
SEED_KNOWLEDGE_TRIGGERS = (
    "高才通", "TTPS", "优才", "QMAS", "专才", "GEP", "留学", "IANG", "投资", "CIES", "科技", "TECHTAS", "条件",
    "要求", "资格", "申请", "流程", "材料", "费用", "时间", "打分", "评分", "签证", "续签", "永居", "居留", "配偶",
    "受养人", "政策", "最新",
)


def _query_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()[:16]


class _RetrievedSource:
    """When the seed's condition holds (`_wanted`): a block of caller-supplied items when the request has
    them (the caller's to cache), else of a retriever's answer, cached by message for the block's TTL;
    otherwise, or with no source, empty."""

    type: str
    ttl_seconds: float
    _item: builtins.type[RequestModel]  # the retriever's items, validated like caller-supplied ones

    def __init__(self, *, retriever: Retriever | None, limit: int = 3) -> None:
        self._retriever = retriever
        self._limit = limit

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        if not self._wanted(ctx):
            return ""
        supplied = self._supplied(ctx)
        if supplied is not None:
            return self._format(ctx, supplied)
        retriever = self._retriever
        if retriever is None:
            return ""
        return cache.get_or_build(f"{self.type}#{ctx.message_hash()}", self.ttl_seconds, lambda: self._format(
            ctx, [self._item.model_validate(i) for i in
                  retriever.retrieve(ctx.user, ctx.request.current_user_message, self._limit)]))

    def _supplied(self, ctx: FetchContext) -> list[Any] | None:
        raise NotImplementedError

    def _wanted(self, ctx: FetchContext) -> bool:
        raise NotImplementedError

    def _format(self, ctx: FetchContext, items: list[Any]) -> str:
        raise NotImplementedError


class RelevantKnowledgeSource(_RetrievedSource):
    type = ContextType.RELEVANT_KNOWLEDGE
    priority = Priority.IMPORTANT
    ttl_seconds = 30.0
    does_io = True
    _item = KnowledgeItem

    def __init__(self, *, retriever: Retriever | None, triggers: tuple[str, ...] = SEED_KNOWLEDGE_TRIGGERS,
                 limit: int = 3) -> None:
        super().__init__(retriever=retriever, limit=limit)
        self._triggers = tuple(t.lower() for t in triggers)

    def _supplied(self, ctx: FetchContext) -> list[Any] | None:
        return ctx.request.relevant_knowledge

    def _wanted(self, ctx: FetchContext) -> bool:
        message = ctx.request.current_user_message.lower()
        return bool(message.strip()) and (not self._triggers or any(t in message for t in self._triggers))

    def _format(self, ctx: FetchContext, items: list[KnowledgeItem]) -> str:
        if not items:
            return ""
        parts = [_pick(ctx, "以下是与用户最新问题相关的知识库内容（仅供参考，请结合实际情况回答）：",
                       "Knowledge relevant to the user's latest message (for reference; check it fits):")]
        for item in items:
            source = one_line(item.source or _pick(ctx, "知识库", "knowledge base"), 200)
            similarity = f" ({_pick(ctx, '相似度', 'similarity')}: {item.similarity:.2f})" if item.similarity else ""
            quoted = "\n".join(f"> {line}" for line in neutralize(item.content).strip().splitlines() if line.strip())
            parts += ["", f"{_pick(ctx, '来源', 'Source')}：{source}{similarity}", quoted]
        return "\n".join(parts)


# Stages where the seed injects experiences (information collection, assessment/recommendation, objections).
EXPERIENCE_STAGES = ("info_collection", "assessment", "recommendation", "objection_handling")


class SimilarExperiencesSource(_RetrievedSource):
    type = ContextType.SIMILAR_EXPERIENCES
    priority = Priority.NICE_TO_HAVE
    ttl_seconds = 120.0
    does_io = True
    _item = ExperienceItem

    def __init__(self, *, retriever: Retriever | None, stages: tuple[str, ...] = EXPERIENCE_STAGES,
                 limit: int = 3) -> None:
        super().__init__(retriever=retriever, limit=limit)
        self._stages = stages

    def _supplied(self, ctx: FetchContext) -> list[Any] | None:
        return ctx.request.similar_experiences

    def _wanted(self, ctx: FetchContext) -> bool:
        """Only in the seed's stages: information collection, assessment and recommendation, objections."""
        state = ctx.request.consulting_state
        stage = state.current_stage_id if state else None
        return bool(ctx.request.current_user_message.strip()) and stage in self._stages

    def _format(self, ctx: FetchContext, items: list[ExperienceItem]) -> str:
        if not items:
            return ""
        lines = [_pick(ctx, "系统积累的相关经验（可参考但不必逐字照搬）：",
                       "Experience the system has gathered (use as guidance, not a script):")]
        for i, item in enumerate(items, 1):
            category = f"[{one_line(item.category, 40)}] " if item.category else ""
            lines.append(f"{i}. {category}{one_line(item.content, 600)}")
        return "\n".join(lines)


# ---- 4.7 device_context ---------------------------------------------------------------------------

def _zone(name: str | None) -> tuple[timezone | ZoneInfo | None, str]:
    """An IANA zone or a `UTC+8` style offset."""
    if not name:
        return None, ""
    text = name.strip()
    upper = text.upper().replace("GMT", "UTC")
    if upper.startswith("UTC") and (len(upper) == 3 or upper[3] in "+-"):
        try:
            hours = float(upper[3:] or 0)
        except ValueError:
            return None, one_line(text, 60)
        return timezone(timedelta(hours=hours)), f"UTC{hours:+g}"
    try:
        return ZoneInfo(text), text
    except (ZoneInfoNotFoundError, ValueError):
        return None, one_line(text, 60)


WEEKDAYS_ZH = "一二三四五六日"


class DeviceContextSource:
    """Device and locale facts: on the conversation's first message and every `every_turns` turns."""

    type = ContextType.DEVICE_CONTEXT
    priority = Priority.NICE_TO_HAVE
    ttl_seconds = CONVERSATION_LIFETIME
    does_io = False

    def __init__(self, *, every_turns: int = 5) -> None:
        self._every = every_turns

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        device = ctx.request.device_info
        if device is None or (ctx.turn_number - 1) % self._every:
            return ""
        zh = ctx.locale == "zh"
        zone, zone_label = _zone(device.timezone)
        lines = [_pick(ctx, "用户环境信息:", "User environment:")]
        kind = (device.device_type or "").lower()
        mobile = kind in ("mobile", "phone", "tablet")
        if device.device_type or device.device_model:
            kind_text = {"mobile": ("移动设备", "mobile"), "phone": ("移动设备", "mobile"),
                         "tablet": ("平板", "tablet"), "desktop": ("桌面电脑", "desktop")}.get(
                kind, (one_line(device.device_type or "-", 40),) * 2)[0 if zh else 1]
            model = f" ({one_line(device.device_model, 60)})" if device.device_model else ""
            lines.append(f"- {_pick(ctx, '设备类型', 'Device')}: {kind_text}{model}")
        if zone_label:
            lines.append(f"- {_pick(ctx, '时区', 'Timezone')}: {zone_label}")
        if device.region:
            lines.append(f"- {_pick(ctx, '地区', 'Region')}: {one_line(device.region, 80)}")
        local = datetime.fromtimestamp(ctx.now, zone or UTC)
        if zh:
            period = "上午" if local.hour < 12 else "下午" if local.hour < 18 else "晚上"
            hour12 = local.hour if local.hour <= 12 else local.hour - 12
            when = f"{local:%Y-%m-%d} 周{WEEKDAYS_ZH[local.weekday()]} {period}{hour12}:{local:%M}"
        else:
            when = local.strftime("%Y-%m-%d %A %H:%M")
        lines.append(f"- {_pick(ctx, '当前时间', 'Local time')}: {when}{'' if zone else ' (UTC)'}")
        if mobile:
            lines.append(_pick(ctx, "提示: 用户在手机上咨询，回复可适当简短。",
                               "Hint: the user is on a phone; keep replies short."))
        return "\n".join(lines) if len(lines) > 2 or device.device_type else ""


# ---- 4.8 active_agents_history ----------------------------------------------------------------------

def _ago(record: AgentExecutionRecord, now: float, zh: bool) -> str:
    minutes = max(0, round((now - record.invoked_at / 1000) / 60))
    if minutes == 0:
        return "刚刚" if zh else "just now"
    return f"{minutes}分钟前" if zh else f"{minutes} min ago"


class ActiveAgentsHistorySource:
    type = ContextType.ACTIVE_AGENTS_HISTORY
    priority = Priority.IMPORTANT
    ttl_seconds = 0.0
    does_io = False

    def __init__(self, *, keep_last: int = 5) -> None:
        self._keep = keep_last

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        records = sorted(ctx.request.agent_history or [], key=lambda r: r.invoked_at)[-self._keep:]
        if not records:
            return ""
        zh = ctx.locale == "zh"
        lines = [_pick(ctx, "最近调用的专家 Agent（本次对话中）：",
                       "Specialist agents called recently in this conversation:")]
        for i, record in enumerate(records, 1):
            lines.append(f"{i}. [{_ago(record, ctx.now, zh)}] {one_line(record.agent_name, 80)} - "
                         f"{one_line(record.input_summary, 200)}")
            if record.output_summary:
                lines.append(f"   → {one_line(record.output_summary, 200)}")
        lines.append(_pick(ctx, "注意: 避免重复调用相同 Agent 查询相同信息。如需进一步了解，可直接使用已获取的信息。",
                           "Note: avoid calling the same agent for the same information again; reuse these results."))
        return "\n".join(lines)


# ---- the IIT guide's layers ------------------------------------------------------------------------

class HotMemorySource:
    """L2 hot memory, always injected (P0): the user's, and the project's when the request names one.
    Cached by each scope's version counter (every hot-memory write bumps it) for the guide's 5 minutes."""

    type = ContextType.HOT_MEMORY
    priority = Priority.CRITICAL
    ttl_seconds = 300.0
    does_io = True

    def __init__(self, *, layers: Any, store: MemoryStore) -> None:
        self._layers = layers
        self._store = store

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        zh = ctx.locale == "zh"
        scopes = [ctx.user]
        if ctx.request.project_id:
            scopes.append(scope_ref(ctx.user.tenant_id, "projects", ctx.request.project_id))
        texts = []
        for scope in scopes:
            version = ctx.user_version(scope, self._store.user_version)
            text = cache.get_or_build(f"{self.type}#{scope.user_id}#v{version}#{ctx.locale}", self.ttl_seconds,
                                      partial(self._text, scope, zh))
            if text and len(scopes) > 1:  # say whose entries these are
                label = scope_label(scope)
                title = (("【用户】" if label["type"] == "user" else f"【项目 {one_line(label['id'], 80)}】") if zh
                         else ("[User]" if label["type"] == "user" else f"[Project {one_line(label['id'], 80)}]"))
                text = f"{title}\n{text}"
            texts.append(text)
        return "\n\n".join(t for t in texts if t)

    def _text(self, scope: UserRef, zh: bool) -> str:
        return str(self._layers.hot_memory_text(scope, zh=zh))


# The guide's retrieval by intent: a QC task reads the SOPs, a protocol question the protocol's knowledge
# base (RAG), each besides hot memory; QA_QUERY reads the history book and the log (context_for_prompt).
INTENT_RETRIEVALS: dict[str, tuple[str, str, str]] = {
    # intent type: (retriever, zh title, en title)
    "QC_TASK": ("sop", "## 相关SOP", "## Relevant SOPs"),
    "PROTOCOL_QA": ("protocol", "## 方案知识库", "## Protocol knowledge base"),
}


class IntentContextSource:
    """The guide's getContextForPrompt without its hot-memory part (that is its own block): for a
    question-like intent, the matching weekly reports, and the conversation log when they are thin;
    for a QC task the SOPs, for a protocol question the protocol knowledge base, from their retrievers."""

    type = ContextType.INTENT_CONTEXT
    priority = Priority.IMPORTANT
    ttl_seconds = 30.0
    does_io = True

    def __init__(self, *, layers: Any, retrievers: dict[str, Retriever | None] | None = None,
                 limit: int = 3) -> None:
        self._layers = layers
        self._retrievers = retrievers or {}
        self._limit = limit

    def build(self, ctx: FetchContext, cache: BlockCache) -> str:
        intent = ctx.request.intent
        if intent is None:
            return ""
        scope = (scope_ref(ctx.user.tenant_id, "projects", ctx.request.project_id) if ctx.request.project_id
                 else ctx.user)
        request = IntentContextRequest(intent=intent)
        key = hashlib.sha256(f"{scope.user_id}|{intent.model_dump_json()}".encode()).hexdigest()[:16]

        def history() -> str:
            result = self._layers.context_for_prompt(scope, request)
            parts = [p.text for p in result.parts if p.layer != "hot_memory"]
            return "\n\n".join(p for p in [*parts, self._retrieved(ctx, intent)] if p)

        return cache.get_or_build(f"{self.type}#{key}", self.ttl_seconds, history)

    def _retrieved(self, ctx: FetchContext, intent: Any) -> str:
        name, title_zh, title_en = INTENT_RETRIEVALS.get(intent.type.upper(), ("", "", ""))
        retriever = self._retrievers.get(name)
        if retriever is None:
            return ""
        query = intent.text or ctx.request.current_user_message
        items = [KnowledgeItem.model_validate(i) for i in retriever.retrieve(ctx.user, query, self._limit)]
        if not items:
            return ""
        lines = [_pick(ctx, title_zh, title_en)]
        for item in items:
            source = f"[{one_line(item.source, 200)}] " if item.source else ""
            lines.append(f"- {source}{one_line(item.content, 1000)}")
        return "\n".join(lines)


def default_sources(
    *,
    store: MemoryStore,
    search: SearchService,
    current_memories: Callable[[UserRef], list[Memory]] | None,
    knowledge: Retriever | None,
    experiences: Retriever | None,
    knowledge_triggers: tuple[str, ...] = SEED_KNOWLEDGE_TRIGGERS,
    top_memories: int = 5,
    relevant_memories: int = 3,
    relevant_search_mode: SearchMode | None = None,
    assessment_note: str = SEED_ASSESSMENT_NOTE,
    memory_layers: Any = None,
    sop: Retriever | None = None,
    protocol: Retriever | None = None,
) -> list[Any]:
    """The registry: the seed's order, which is also the order blocks keep within a priority."""
    layered: list[Any] = [] if memory_layers is None else [
        HotMemorySource(layers=memory_layers, store=store),
        IntentContextSource(layers=memory_layers, retrievers={"sop": sop, "protocol": protocol})]
    return [
        *layered[:1],
        UserMemorySource(store=store, search=search, current_memories=current_memories, top_n=top_memories,
                         relevant_n=relevant_memories, search_mode=relevant_search_mode),
        CollectedInfoSource(),
        ConversationStatsSource(),
        AssessmentResultSource(note=assessment_note),
        RelevantKnowledgeSource(retriever=knowledge, triggers=knowledge_triggers),
        SimilarExperiencesSource(retriever=experiences),
        DeviceContextSource(),
        ActiveAgentsHistorySource(),
        *layered[1:],
    ]
