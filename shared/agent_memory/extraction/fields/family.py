"""Family: marital status, children, how the family feels about the plan."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.grammar import Utterance, fact, matches
from agent_memory.extraction.numbers import parse_number

# --------------------------------------------------------------------------------------
# maritalStatus / hasChildren
# --------------------------------------------------------------------------------------

# (code, pattern, apply the negation check). Order matters: "还没结婚" before "结婚了".
_MARITAL_PATTERNS = (
    ("divorced", re.compile(r"离异|离婚|离过婚|\bdivorced\b", re.IGNORECASE), True),
    ("widowed", re.compile(r"丧偶|\bwidow(?:ed|er)?\b", re.IGNORECASE), True),
    (
        "single",
        re.compile(
            r"未婚|单身|(?:还|尚)?没有?结婚|尚未结婚|未结婚"
            r"|\b(?:I'm|I am)\s+(?:still\s+|currently\s+)?single\b"
            r"|\b(?:not|never been|never got|never)\s+married\b|\bunmarried\b",
            re.IGNORECASE,
        ),
        False,
    ),
    (
        "married",
        re.compile(
            r"已婚|结婚了|已经结婚|刚结婚|成家了|结婚(?:\d+|[一二两三四五六七八九十]+)年|"
            r"我(?:的)?(?:老婆|妻子|太太|老公|丈夫|爱人)|"
            r"^\s*married\b(?=\s*[,;.]|\s+with)|\b(?:I'm|I am|I've been|I have been|I got|we're|we are|we got|happily|recently|just got)\s+"
            r"(?:\w+\s+)?married\b|\bmarried\s+with\b|\bmy\s+(?:wife|husband)\b",
            re.IGNORECASE,
        ),
        True,
    ),
)
_MARITAL_LABELS = {"divorced": "离异", "widowed": "丧偶", "single": "未婚", "married": "已婚"}

_ZH_KID = r"(?:孩子|小孩|子女|娃|儿子|女儿|宝宝|男孩|女孩)"
_CHILDREN_NONE = re.compile(
    r"没有?(?:孩子|小孩|子女|娃)|无(?:小孩|孩子|子女|娃)|还没(?:有|要|生)?(?:孩子|小孩|娃)|无子女|丁克|没要(?:孩子|小孩)|没生(?:孩子|小孩)"
    r"|\b(?:no|don't have any|do not have any|don't have|do not have|haven't got any|have no)\s+"
    r"(?:kids|children|child)\b"
    r"|\bchildless\b|\bchild-free\b",
    re.IGNORECASE,
)
_CHILDREN_SOME = (
    re.compile(r"带着?(?:一个|两个)?(?:儿子|女儿|孩子|小孩)"),
    re.compile(
        r"\b(?:with|have|has|'ve got)\s+(?P<n>a|an|one|two|three|four|five|\d)\s+(?:young\s+|little\s+|small\s+|teenage\s+|"
        r"grown-up\s+|adult\s+|baby\s+|toddler\s+)?(?:kids?|children|child|sons?|daughters?|boys?|girls?)\b",
        re.IGNORECASE,
    ),
    re.compile(r"(?:^|[,;]\s*)(?P<n>one|two|three|\d)\s+(?:kids?|children|sons?|daughters?)\b", re.IGNORECASE),
    re.compile(rf"(?:有|生了|养了)\s*(?P<n>\d|[一两二三四五])?\s*(?P<ge>个)?\s*{_ZH_KID}"),
    re.compile(rf"(?P<n>\d|[一两二三四五])\s*个\s*{_ZH_KID}"),
    re.compile(r"(?P<pair>一儿一女|儿女双全)"),
    re.compile(r"我(?:的)?(?:儿子|女儿|孩子|小孩|大宝|二宝)"),
    re.compile(
        r"\b(?:have|'ve got|have got|'ve)\s+(?P<n>a|an|one|two|three|four|five|\d)\s+"
        r"(?:young\s+|little\s+|small\s+)?(?:kids?|children|child|sons?|daughters?|baby|boys?|girls?)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:father|mother|dad|mom|mum|parent)\s+of\s+(?P<n>one|two|three|four|five|\d)\b", re.IGNORECASE
    ),
    re.compile(
        r"\b(?:have|'ve got|have got)\s+(?:kids|children)\b|\bmy\s+(?:kids?|children|son|daughter|baby)\b",
        re.IGNORECASE,
    ),
)


# The spouse's name, kept with the relation: "my wife is called Lena", "我老婆叫李娜".
_EN_SPOUSE_NAME = re.compile(r"\bmy\s+(?P<rel>wife|husband|partner|spouse)(?:'s\s+name\s+is|\s+is\s+(?:called|named)|,)\s+"
                             r"(?P<name>[A-Z][a-z]+)\b", re.IGNORECASE)
_ZH_SPOUSE_NAME = re.compile(r"我(?:的)?(?P<rel>老婆|妻子|太太|老公|丈夫|爱人)(?:叫|名叫|名字叫)\s*(?P<name>[\u4e00-\u9fff]{2,3}|[A-Z][a-z]+)")


def marital_status(ctx: Utterance) -> ExtractedMemory | None:
    for code, pattern, check_negation in _MARITAL_PATTERNS:
        for _ in matches(pattern, ctx, negation=check_negation):
            value = ctx.say(_MARITAL_LABELS[code], code)
            spouse = (_ZH_SPOUSE_NAME if ctx.zh else _EN_SPOUSE_NAME).search(ctx.text) if code == "married" else None
            if spouse is not None:
                relation, name = spouse["rel"].lower(), spouse["name"]
                return fact("maritalStatus", value, ctx.say(f"已婚，{relation}叫{name}", f"Married; {relation}: {name}"),
                            metadata={"spouse": {"relation": relation, "name": name}})
            return fact("maritalStatus", value, ctx.say(value, f"Marital status: {value}"))
    return None


def has_children(ctx: Utterance) -> ExtractedMemory | None:
    for _ in matches(_CHILDREN_NONE, ctx, negation=False):
        return fact("hasChildren", False, ctx.say("没有孩子", "Has no children"))
    for pattern in _CHILDREN_SOME:
        for m in matches(pattern, ctx):
            groups = m.groupdict()
            count = 2 if groups.get("pair") else None
            if groups.get("n"):
                count = int(parse_number(groups["n"]) or 0) or None
            elif groups.get("ge"):
                count = 1  # "有个女儿"
            if count:
                noun = "child" if count == 1 else "children"
                text = ctx.say(f"有{count}个孩子", f"Has {count} {noun}")
                return fact("hasChildren", True, text, metadata={"count": count})
            return fact("hasChildren", True, ctx.say("有孩子", "Has children"))
    return None


# --------------------------------------------------------------------------------------
# familySupport
# --------------------------------------------------------------------------------------

# The family are the subject here, so the "somebody else" check does not apply.
_ZH_FAMILY = r"(?:家人|家里人?|全家|父母|爸妈|老婆|老公|太太|妻子|丈夫|爱人|另一半|孩子们?)"
_FAMILY_STANCES = (  # (value zh, value en, Chinese words, English words); order: negated forms first
    ("反对", "against", r"反对|不同意|不支持|不太支持|不愿意|不想让我", r"against|oppos\w+|not supportive|don't support|"
     r"doesn't support|won't support|don't want me to|doesn't want me to|not on board"),
    ("犹豫", "undecided", r"犹豫|有顾虑|还在考虑|不太确定|拿不定主意|有点担心", r"hesitant|unsure|not sure|undecided|"
     r"on the fence|have doubts|has doubts|worried|(?:hasn't|haven't) made up (?:their|his|her) minds?"),
    ("支持", "supportive", r"支持|赞成|同意|鼓励|很期待|都愿意", r"support(?:s|ive)?|on board|behind (?:me|us|it|the move)|"
     r"encourag\w+|all for it|agree[sd]?"),
)
_FAMILY_PATTERNS = tuple(
    (zh, en, re.compile(
        rf"{_ZH_FAMILY}(?:都|也|们)?(?:还在|还是|一直|很|非常|挺|比较|十分|特别|还)?(?:{zh_words})"
        rf"|\bmy\s+(?:family|wife|husband|partner|spouse|parents|kids)\b[^.;!?]{{0,25}}?\b(?:{en_words})",
        re.IGNORECASE,
    ))
    for zh, en, zh_words, en_words in _FAMILY_STANCES
)


def family_support(ctx: Utterance) -> ExtractedMemory | None:
    for zh, en, pattern in _FAMILY_PATTERNS:
        for _ in matches(pattern, ctx, negation=False, other=False, future=False):
            value = ctx.say(zh, en)
            return fact("familySupport", value, ctx.say(f"家人态度：{value}", f"Family's stance on the move: {en}"))
    return None
