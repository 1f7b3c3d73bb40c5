"""Money the user states: annual income (FACT), investment capacity and budget (INTENT)."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.grammar import CJK, Utterance, fact, intent, matches
from agent_memory.extraction.numbers import AMOUNT, MONTHLY_AFTER, Amount, money_text, parse_amount

# annualIncome / investmentCapacity
# --------------------------------------------------------------------------------------

_ZH_INCOME = re.compile(
    r"(?:税前|税后)?(?:年薪|年收入|年包|年总包|年收|一年(?:能)?(?:赚|挣|收入))"
    r"(?:大概|大约|约|差不多|估计|接近|将近|超过|有|在|是|为|:|能|税前|税后|\s)*"
    + AMOUNT
    + r"(?P<tail>左右|上下|以上|多)?",
    re.IGNORECASE,
)
_EN_APPROX = (
    r"(?:(?:about|around|roughly|approximately|approx\.?|nearly|almost|over|more than|close to|~|some)\s*)?"
)
_EN_INCOME_PATTERNS = (
    re.compile(
        r"\b(?:earn|earning|make|making|take home|get paid|paid)\s+"
        + _EN_APPROX
        + AMOUNT
        + r"\s*(?:a|per|/|each|every)\s*(?:year|yr|annum)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:earn|earning|make|making)\s+" + _EN_APPROX + AMOUNT + r"\s*(?:annually|yearly)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:annual|yearly)\s+(?:salary|income|pay|compensation|package|earnings|base)\s*(?:is|of|:|=|at)?\s*"
        + _EN_APPROX
        + AMOUNT,
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:salary|income|compensation|package)\s+(?:is|of|:|=|at)\s*" + _EN_APPROX + AMOUNT,
        re.IGNORECASE,
    ),
)
_ZH_INVEST = re.compile(
    r"(?:可以|能|可|打算|准备|愿意|计划|能够)?\s*(?:投资|投入|拿出)(?:资产|金额|额度|预算|资金)?"
    r"(?:大概|大约|约|差不多|有|在|是|为|:|左右|\s)*" + AMOUNT + r"(?P<tail>左右|上下|以上|多)?",
    re.IGNORECASE,
)
_ZH_INVEST_MORE = (
    re.compile(r"有\s*(?:大概|大约|约|差不多)?\s*" + AMOUNT + r"[^,，。;；]{0,8}?(?:可以|能)(?:拿来|用来|用于|拿出来)?投资"),
    re.compile(r"可(?:以)?(?:用于|用来)?投资的(?:资金|资产|钱)(?:大概|大约|约|在|有|是|\s)*" + AMOUNT + r"(?P<tail>以上|左右|多)?"),
)
_EN_INVEST_PATTERNS = (
    re.compile(_EN_APPROX + AMOUNT + r"\s+(?:available\s+|set aside\s+)?(?:for|to)\s+invest(?:ment)?\b", re.IGNORECASE),
    re.compile(r"\binvestable\s+(?:assets|funds|capital|wealth)\s+(?:are|is|of|total)\s*" + _EN_APPROX + AMOUNT,
               re.IGNORECASE),
    re.compile(
        r"\b(?:can|could|able to|willing to|plan to|planning to|prepared to|ready to)\s+"
        r"invest\s+(?:up to\s+)?"
        + _EN_APPROX
        + AMOUNT,
        re.IGNORECASE,
    ),
    re.compile(
        r"\binvestment\s+(?:budget|capacity|amount)\s+(?:is|of|:)\s*" + _EN_APPROX + AMOUNT, re.IGNORECASE
    ),
)


def _money_match(ctx: Utterance, patterns: tuple[re.Pattern[str], ...], *, negation: bool = True) -> Amount | None:
    for pattern in patterns:
        for m in matches(pattern, ctx, future=False, negation=negation):
            if MONTHLY_AFTER.match(ctx.text, m.end()) or re.search(
                r"月", ctx.text[m.start() : m.start("num")]
            ):
                continue
            amount = parse_amount(ctx, m)
            if amount:
                tail = m.groupdict().get("tail")
                return Amount(amount.value, amount.currency, amount.approximate or bool(tail))
    return None




_ZH_BUDGET = re.compile(
    r"(?<!投资)(?:总)?预算(?:大概|大约|约|差不多|有|在|是|为|:|控制在|左右|\s)*" + AMOUNT + r"(?P<tail>左右|上下|以内|以下|多)?",
    re.IGNORECASE,
)
_ZH_BUDGET_MORE = (
    re.compile(rf"(?<!投资)预算(?:的话)?[,，]?\s*[{CJK}]{{0,6}}?(?:大概|大约|约|有|在|是|为|控制在|最多|不超过|\s)*"
               + AMOUNT + r"(?P<tail>以内|左右|以下)?"),
    re.compile(r"(?:花|花费|开销)\s*(?:最多|顶多|不超过|控制在)\s*" + AMOUNT),
    re.compile(r"(?:最多|顶多|不超过)\s*花\s*" + AMOUNT),
)
_EN_BUDGET_PATTERNS = (
    re.compile(r"\bbudget\b[^.;!?]{0,30}?\b(?:is|of|around|about|:)\s+(?:up to\s+)?" + _EN_APPROX + AMOUNT, re.IGNORECASE),
    re.compile(r"\bspare\s+(?:up to\s+)?" + _EN_APPROX + AMOUNT, re.IGNORECASE),
    re.compile(r"\bspend\s+(?:more than|over|above)\s+" + AMOUNT, re.IGNORECASE),
    re.compile(r"\b(?:my|our)\s+budget\s+(?:is|of|:|would be|will be)\s*(?:up to\s+)?" + _EN_APPROX + AMOUNT,
               re.IGNORECASE),
    re.compile(r"\bbudget\s+of\s+(?:up to\s+)?" + _EN_APPROX + AMOUNT, re.IGNORECASE),
    re.compile(r"\b(?:can|could|willing to|able to|happy to)\s+spend\s+(?:up to\s+)?" + _EN_APPROX + AMOUNT,
               re.IGNORECASE),
)


def _money_memory(ctx: Utterance, amount: Amount | None, field: str, say: tuple[str, str], *,
                  plan: bool) -> ExtractedMemory | None:
    """An amount as a memory: a FACT about the user's money, or an INTENT to invest or spend it."""
    if not amount:
        return None
    money = money_text(ctx, amount)
    zh, en = say
    make = intent if plan else fact
    return make(field, amount.value, ctx.say(zh + money, en + money),
                metadata={"currency": amount.currency, "approximate": amount.approximate})


def annual_income(ctx: Utterance) -> ExtractedMemory | None:
    amount = _money_match(ctx, (_ZH_INCOME, *_EN_INCOME_PATTERNS))
    return _money_memory(ctx, amount, "annualIncome", ("年薪", "Annual income "), plan=False)


def investment_capacity(ctx: Utterance) -> ExtractedMemory | None:
    amount = _money_match(ctx, (_ZH_INVEST, *_ZH_INVEST_MORE, *_EN_INVEST_PATTERNS))
    return _money_memory(ctx, amount, "investmentCapacity", ("可投资", "Can invest "), plan=True)


def budget(ctx: Utterance) -> ExtractedMemory | None:
    # "I don't want to spend more than 30k" states a budget: the negation belongs to the amount's bound.
    amount = _money_match(ctx, (_ZH_BUDGET, *_ZH_BUDGET_MORE, *_EN_BUDGET_PATTERNS), negation=False)
    return _money_memory(ctx, amount, "budget", ("预算", "Budget "), plan=True)
