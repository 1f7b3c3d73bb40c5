"""The bodies of the blocks that only restate the request: collected information, conversation stats,
the assessment, the device, the specialist agents called. Pure formatting, in the request's locale;
every caller-supplied text goes through `neutralize`/`one_line`. An empty body means no block."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent_memory.domain.inject.caller_state import AgentExecutionRecord, ConsultingState, DeviceInfo
from agent_memory.domain.inject.context import Locale, neutralize, one_line
from agent_memory.domain.packs import AssessmentWording


def pick(locale: Locale, zh: str, en: str) -> str:
    return zh if locale == "zh" else en


# ---- collected_info -------------------------------------------------------------------------------

def _value_text(value: Any, zh: bool) -> str:
    if isinstance(value, bool):
        return ("是" if value else "否") if zh else ("yes" if value else "no")
    if isinstance(value, list | tuple):
        return ("、" if zh else ", ").join(_value_text(v, zh) for v in value)
    return one_line(value, 200)


def collected_info_text(state: ConsultingState | None, wording: AssessmentWording, locale: Locale) -> str:
    """The collected fields, labelled in the pack's words, then which of its core fields are still missing."""
    info = {k: v for k, v in (state.collected_info if state else {}).items() if v is not None and v != ""}
    if not info:
        return ""
    zh = locale == "zh"
    index = 0 if zh else 1
    labels = wording.collected_labels
    lines = [f"- {labels.get(k, (one_line(k, 80),) * 2)[index]}: {_value_text(v, zh)}" for k, v in info.items()]
    missing = [labels.get(k, (k, k))[index] for k in wording.core_collected if k not in info]
    tail = (f"尚未收集: {'、'.join(missing)}" if missing else "核心信息已收集完毕") if zh else (
        f"Not collected yet: {', '.join(missing)}" if missing else "All core information is collected")
    return "\n".join([pick(locale, "本次对话已收集的用户信息：", "Information collected in this conversation:"),
                      *lines, tail])


# ---- conversation_stats ---------------------------------------------------------------------------

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
    # The thresholds are in CJK characters; Latin text carries ~4x fewer ideas per character.
    scale = 1 if zh else 4
    styles = (("极简短，可能在移动设备", "very short, possibly on a phone"),
              ("较简短，需引导展开", "short; invite them to elaborate"),
              ("中等长度，表达较充分", "medium length, fairly expressive"),
              ("详细表达，用户积极参与", "detailed; the user is engaged"))
    bands = (20 * scale, 50 * scale, 150 * scale)
    band = next((i for i, limit in enumerate(bands) if avg_chars < limit), 3)
    return styles[band][0 if zh else 1]


def conversation_stats_text(*, user_texts: Sequence[str], turn_number: int, state: ConsultingState | None,
                            started_at: datetime | None, now: float, locale: Locale) -> str:
    """Turns, duration, stage and its history, and how long the user's replies are. `user_texts` are the
    user's texts in the messages about to be sent, the current message among them exactly once."""
    zh = locale == "zh"
    texts = [t for t in user_texts if t.strip()]
    avg = sum(len(t) for t in texts) / max(len(texts), 1)
    minutes = round((now - started_at.timestamp()) / 60) if started_at else None
    history = " → ".join(f"{_stage(h.stage_id, zh)}({h.turns_in_stage}{'轮' if zh else ' turns'})"
                         for h in (state.stage_history if state else []))
    stage = _stage(state.current_stage_id if state else None, zh)
    # The turn within the stage only when the caller's state names a stage (else it would be a made-up 1).
    stage_turn = state.stage_turn_count + 1 if state and state.current_stage_id else None
    if zh:
        lines = ["对话统计:", f"- 总轮次: {turn_number}轮 (用户发言{len(texts)}次)",
                 f"- 对话时长: {minutes}分钟" if minutes is not None else "- 对话时长: 未知",
                 f"- 当前阶段: {stage} (第{stage_turn}轮)" if stage_turn else f"- 当前阶段: {stage}",
                 f"- 阶段历程: {history or '无'}",
                 f"- 用户回复特点: 平均每次{round(avg)}字，{_reply_style(avg, zh)}"]
    else:
        lines = ["Conversation stats:", f"- Turns: {turn_number} ({len(texts)} user messages)",
                 f"- Duration: {minutes} minutes" if minutes is not None else "- Duration: unknown",
                 f"- Current stage: {stage} (turn {stage_turn})" if stage_turn else f"- Current stage: {stage}",
                 f"- Stage history: {history or 'none'}",
                 f"- User replies: {round(avg)} characters on average, {_reply_style(avg, zh)}"]
    return "\n".join(lines)


# ---- assessment_result ----------------------------------------------------------------------------

def assessment_text(state: ConsultingState | None, wording: AssessmentWording, locale: Locale) -> str:
    """The preliminary assessment: programs, score, strengths, concerns, opened and closed in the pack's
    wording."""
    result = state.assessment_result if state else None
    if result is None:
        return ""
    zh = locale == "zh"
    programs = ("、" if zh else ", ").join(one_line(p, 100) for p in result.recommended_programs) or "-"
    score = "-" if result.suitability_score is None else f"{result.suitability_score:g}"
    lines = [pick(locale, wording.heading_zh, wording.heading_en),
             f"{pick(locale, '推荐方案', 'Recommended')}: {programs}",
             f"{pick(locale, '匹配度', 'Suitability')}: {score}{pick(locale, '分/100分', '/100')}"]
    if result.highlights:
        lines += [pick(locale, "优势:", "Strengths:"), *(f"  - {one_line(h)}" for h in result.highlights)]
    if result.concerns:
        lines += [pick(locale, "注意事项:", "Concerns:"), *(f"  - {one_line(c)}" for c in result.concerns)]
    if wording.note_zh and zh:
        lines.append(neutralize(wording.note_zh))
    return "\n".join(lines)


# ---- device_context -------------------------------------------------------------------------------

WEEKDAYS_ZH = "一二三四五六日"
_DEVICE_KINDS = {"mobile": ("移动设备", "mobile"), "phone": ("移动设备", "mobile"), "tablet": ("平板", "tablet"),
                 "desktop": ("桌面电脑", "desktop")}


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


def device_text(device: DeviceInfo | None, *, now: float, turn_number: int, every_turns: int,
                locale: Locale) -> str:
    """Device and local time: on the conversation's first message and every `every_turns` turns."""
    if device is None or (turn_number - 1) % every_turns:
        return ""
    zh = locale == "zh"
    zone, zone_label = _zone(device.timezone)
    lines = [pick(locale, "用户环境信息:", "User environment:")]
    kind = (device.device_type or "").lower()
    if device.device_type or device.device_model:
        kind_text = _DEVICE_KINDS.get(kind, (one_line(device.device_type or "-", 40),) * 2)[0 if zh else 1]
        model = f" ({one_line(device.device_model, 60)})" if device.device_model else ""
        lines.append(f"- {pick(locale, '设备类型', 'Device')}: {kind_text}{model}")
    if zone_label:
        lines.append(f"- {pick(locale, '时区', 'Timezone')}: {zone_label}")
    if device.region:
        lines.append(f"- {pick(locale, '地区', 'Region')}: {one_line(device.region, 80)}")
    local = datetime.fromtimestamp(now, zone or UTC)
    if zh:
        period = "上午" if local.hour < 12 else "下午" if local.hour < 18 else "晚上"
        hour12 = local.hour if local.hour <= 12 else local.hour - 12
        when = f"{local:%Y-%m-%d} 周{WEEKDAYS_ZH[local.weekday()]} {period}{hour12}:{local:%M}"
    else:
        when = local.strftime("%Y-%m-%d %A %H:%M")
    lines.append(f"- {pick(locale, '当前时间', 'Local time')}: {when}{'' if zone else ' (UTC)'}")
    if kind in ("mobile", "phone", "tablet"):
        lines.append(pick(locale, "提示: 用户在手机上咨询，回复可适当简短。",
                          "Hint: the user is on a phone; keep replies short."))
    return "\n".join(lines) if len(lines) > 2 or device.device_type else ""


# ---- active_agents_history ------------------------------------------------------------------------

def _ago(record: AgentExecutionRecord, now: float, zh: bool) -> str:
    minutes = max(0, round((now - record.invoked_at / 1000) / 60))
    if minutes == 0:
        return "刚刚" if zh else "just now"
    return f"{minutes}分钟前" if zh else f"{minutes} min ago"


def agents_text(records: Sequence[AgentExecutionRecord] | None, *, now: float, keep_last: int,
                locale: Locale) -> str:
    """The last `keep_last` agent calls, oldest first, and a reminder not to repeat them."""
    recent = sorted(records or [], key=lambda r: r.invoked_at)[-keep_last:]
    if not recent:
        return ""
    zh = locale == "zh"
    lines = [pick(locale, "最近调用的专家 Agent（本次对话中）：",
                  "Specialist agents called recently in this conversation:")]
    for i, record in enumerate(recent, 1):
        lines.append(f"{i}. [{_ago(record, now, zh)}] {one_line(record.agent_name, 80)} - "
                     f"{one_line(record.input_summary, 200)}")
        if record.output_summary:
            lines.append(f"   → {one_line(record.output_summary, 200)}")
    lines.append(pick(locale, "注意: 避免重复调用相同 Agent 查询相同信息。如需进一步了解，可直接使用已获取的信息。",
                      "Note: avoid calling the same agent for the same information again; reuse these results."))
    return "\n".join(lines)
