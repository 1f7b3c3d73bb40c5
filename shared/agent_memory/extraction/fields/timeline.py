"""When the user means to move or apply: a date ("明年三月前", "by the end of next year") or a span
that keeps its vagueness ("过几年再考虑", "maybe in a few years")."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.grammar import Utterance, intent, matches

# --------------------------------------------------------------------------------------
# immigrationTimeline
# --------------------------------------------------------------------------------------

# How many years or months a vague span counts: "几", "两三", "3".
_ZH_SPAN_COUNT = r"(?:几|一两|两三|三四|三五|四五|\d{1,2}|[一二两三四五六七八九十]{1,2})"
_ZH_TIME = (
    r"(?P<time>(?:明年|今年)?(?:春天|夏天|秋天|冬天|春季|夏季|秋季|冬季)|明年(?:年初|年底|年中|上半年|下半年|初|底)?|今年(?:年底|年内|下半年|内|底)?|后年|年底|年初|年内|下半年|"
    r"上半年|下个月|下个?季度|近期|尽快|尽早|马上|立刻|越快越好|明后年|"
    r"(?:\d+|[一二两三四五六七八九十半])\s*个?\s*(?:月|年|周|星期)\s*(?:之内|以内|内)|"
    rf"过\s*{_ZH_SPAN_COUNT}\s*个?\s*(?:年|月)|{_ZH_SPAN_COUNT}\s*个?\s*(?:年|月)\s*(?:以后|之后|后)|"
    r"\d{4}\s*年(?:\d{1,2}\s*月)?(?:前|之前|底|初)?)"
)
_ZH_TIMELINE = re.compile(
    # Each optional word carries its own whitespace, so a run of spaces is read once (linear time).
    r"(?:(?P<intent>打算|计划|准备|希望|想要|想|争取|预计|要|最好能?|最迟|最晚|最快|可能|大概|估计|也许|等)\s*)?(?:在\s*)?"
    + _ZH_TIME
    + r"(?:\s*(?P<by>之前|以前|前(?!后)))?(?:\s*(?:就|左右|前后))?(?:\s*(?:开始|着手|正式))?"
    r"(?:\s*(?P<action>申请|办理|递交|提交|移民|办|去香港|来香港|赴港|过去|搬过去|搬|递表|拿到?(?:香港)?(?:身份|签证)|"
    r"动身|出发|再(?:说|考虑|看看?|办|申请|去|搬|走)))?"
)
_ZH_URGENT = {"尽快", "尽早", "马上", "立刻", "越快越好"}

# A span counted in words or digits: "a few", "two or three", "5".
_EN_SPAN = (
    r"(?:a\s+few|a\s+couple(?:\s+of)?|several|few|\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|a)"
    r"(?:\s+(?:or|to)\s+(?:\d{1,2}|two|three|four|five|six))?"
)
_EN_TIME = (
    r"(?P<time>(?:next|this|in\s+the)\s+(?:spring|summer|autumn|fall|winter)|next\s+year|this\s+year|next\s+month|(?:(?:by|before)\s+)?(?:the\s+)?end\s+of\s+(?:this|next)\s+year|"
    r"early\s+next\s+year|later\s+this\s+year|"
    r"within\s+(?:the\s+next\s+)?(?:\d+|a|one|two|three|six|twelve|half\s+a)\s+(?:months?|years?|weeks?)|"
    r"in\s+the\s+next\s+(?:\d+|few|couple\s+of|two|three|six)\s+(?:months?|years?)|as\s+soon\s+as\s+possible|asap|"
    rf"in\s+{_EN_SPAN}\s+(?:years?|months?)(?:\s+or\s+so|\s+time)?|{_EN_SPAN}\s+(?:years?|months?)\s+from\s+now|"
    r"(?:in|by)\s+(?:early\s+|late\s+|mid-?)?20\d{2}|right\s+away|immediately)"
)
_EN_ACTIONS = {
    "apply": "apply", "applying": "apply", "submit": "submit", "submitting": "submit", "move": "move",
    "moving": "move", "relocate": "relocate", "relocating": "relocate", "immigrate": "immigrate",
    "immigrating": "immigrate", "do it": "apply", "get it done": "apply", "settle": "settle", "settled": "settle",
    "settling": "settle",
}
_EN_TIMELINE = re.compile(
    r"\b(?P<action>apply|applying|submit|submitting|move|moving|relocate|relocating|immigrate|immigrating|"
    rf"do it|get it done|settle|settled|settling)\b[^.;!?]{{0,40}}?\b{_EN_TIME}\b",
    re.IGNORECASE,
)
# A time that is the whole clause, alone or after a hedge: "Maybe in a few years, not right now".
_EN_TIME_ALONE = re.compile(
    r"(?:^|(?<=[,.;!?]))\s*(?P<hedge>(?:(?:maybe|probably|perhaps|possibly|likely|hopefully|ideally|realistically|"
    r"sometime)(?:\s*,)?\s+){1,2})?"
    + _EN_TIME
    + r"(?=\s*(?:[,.;!?]|$))",
    re.IGNORECASE,
)


def _zh_timeline(ctx: Utterance) -> ExtractedMemory | None:
    for m in matches(_ZH_TIMELINE, ctx, "time", future=False):
        time = re.sub(r"\s+", "", m["time"]).replace("之内", "内").replace("以内", "内")
        time = time.replace("以后", "后").replace("之后", "后")
        urgent = time in _ZH_URGENT
        at_clause_end = not ctx.text[m.end() :].strip() or ctx.text[m.end()] in ",.;!?。，；！？吧"
        if not (m["action"] or (m["intent"] and (urgent or at_clause_end)) or time == "越快越好"):
            continue
        value = "尽快" if urgent else time + ("前" if m["by"] and not time.endswith("前") else "")
        action = m["action"] or "申请"
        plan = "打算" if action.startswith("再") else "计划"  # "过几年再考虑": put off, not planned
        return intent("immigrationTimeline", value, ctx.say(f"{plan}{value}{action}", f"Plans to {action} {value}"))
    return None


def _en_timeline(ctx: Utterance) -> ExtractedMemory | None:
    for m in matches(_EN_TIMELINE, ctx, "action", future=False):
        time = re.sub(r"\s+", " ", m["time"].lower())
        value = "as soon as possible" if time == "asap" else time
        action = _EN_ACTIONS[re.sub(r"\s+", " ", m["action"].lower())]
        return intent("immigrationTimeline", value, ctx.say(f"计划{value}申请", f"Plans to {action} {value}"))
    for m in matches(_EN_TIME_ALONE, ctx, "time", future=False):
        if m["hedge"] or not ctx.text[: m.start("time")].strip():
            value = re.sub(r"\s+", " ", m["time"].lower())
            return intent("immigrationTimeline", value, ctx.say(f"计划{value}申请", f"Plans to move {value}"))
    return None


def timeline(ctx: Utterance) -> ExtractedMemory | None:
    return _zh_timeline(ctx) or _en_timeline(ctx)
