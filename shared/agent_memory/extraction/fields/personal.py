"""Personal facts: age, nationality, language skills."""

from __future__ import annotations

import re
from typing import Any

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.grammar import Utterance, clause_around, fact, matches
from agent_memory.extraction.numbers import EN_NUM, EN_TENS, parse_number

# --------------------------------------------------------------------------------------
# age
# --------------------------------------------------------------------------------------

_ZH_AGE = re.compile(
    r"(?<![\d.])(?P<qual>快|将近|接近|大概|大约|约)?(?P<num>\d{1,3}|[一二两三四五六七八九十]{1,3})\s*"
    r"(?P<vague>多|几|来)?\s*周?岁(?P<vague2>出头|多|左右|上下)?"
    r"(?!那年|时|的时候|就|开始|以前|之前|前|以后|之后|后|起)"
)
_ZH_AGE_EARLY = re.compile(r"(?P<num>[二三四五六七八九]十|[2-9]0)\s*(?:出头|多岁)")
_ZH_AGE_LABEL = re.compile(r"(?:年龄|年纪)\s*(?:是|:|有)?\s*(?P<num>\d{1,3})")
_EN_AGE = re.compile(
    rf"\bI(?:'m| am)\s+(?:about\s+|around\s+|almost\s+|nearly\s+)?(?P<num>\d{{1,2}}|{EN_NUM})"
    r"(?:[\s-]*(?:years?|yrs?)[\s-]*old\b|\s*y/?o\b|(?=\s*(?:[,.;!?)]|$|and\b|now\b|this\b|with\b|but\b)))",
    re.IGNORECASE,
)
_EN_AGE_OLD = re.compile(
    rf"\b(?P<num>\d{{1,2}}|{EN_NUM})[\s-]*(?:years?|yrs?)[\s-]*old\b(?!\s+(?:son|daughter|kid|child|boy|girl|baby))",
    re.IGNORECASE,
)
_EN_AGE_LABEL = re.compile(r"\b(?:my age is|I'm aged|I am aged|aged)\s+(?P<num>\d{1,2})\b", re.IGNORECASE)
_EN_DECADES = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60}
_EN_AGE_DECADE = re.compile(
    r"\bin\s+my\s+(?:early\s+|mid\s+|mid-|late\s+)?(?P<decade>twenties|thirties|forties|fifties|sixties|[2-6]0'?s)\b"
    r"|\b(?P<decade2>twenty|thirty|forty|fifty|sixty|[2-6]0)[\s-]something\b",
    re.IGNORECASE,
)


def _age_memory(ctx: Utterance, value: int | str, **metadata: Any) -> ExtractedMemory:
    if isinstance(value, str):  # "30+"
        decade = value.rstrip("+")
        content = ctx.say(f"用户{decade}多岁", f"User is in their {decade}s")
    else:
        approx = metadata.get("approximate")
        content = ctx.say(
            f"用户{'约' if approx else ''}{value}岁", f"User is {'about ' if approx else ''}{value} years old"
        )
    return fact("age", value, content, metadata=metadata)


def _age_number(text: str) -> int | None:
    """The age a number token states, or None when it is not a plausible adult age."""
    n = parse_number(text)
    return int(n) if n is not None and 10 <= n <= 100 else None


def age(ctx: Utterance) -> ExtractedMemory | None:
    for m in matches(_ZH_AGE, ctx, "num"):
        n = _age_number(m["num"])
        if n is None:
            continue
        if (m["vague"] or m["vague2"] in ("出头", "多")) and n % 10 == 0:
            return _age_memory(ctx, f"{n}+")
        approximate = bool(m["qual"] or m["vague2"] or m["vague"])
        return _age_memory(ctx, n, **({"approximate": True} if approximate else {}))
    for m in matches(_ZH_AGE_EARLY, ctx, "num"):
        n = _age_number(m["num"])
        if n and not re.search(r"薪|收入|万|元|块|月", clause_around(ctx.text, m.start(), m.end())):
            return _age_memory(ctx, f"{n}+")
    for pattern in (_ZH_AGE_LABEL, _EN_AGE, _EN_AGE_OLD, _EN_AGE_LABEL):
        for m in matches(pattern, ctx, "num"):
            n = _age_number(m["num"])
            if n is not None:
                return _age_memory(ctx, n)
    for m in matches(_EN_AGE_DECADE, ctx):
        word = (m["decade"] or m["decade2"]).lower()
        decade = _EN_DECADES.get(word) or EN_TENS.get(word) or int(word[:2])
        return _age_memory(ctx, f"{decade}+")
    return None
