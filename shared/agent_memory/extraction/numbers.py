"""Numbers and amounts of money as people write them in Chinese and English (二十八, 80万, HK$1.2m)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.extraction.grammar import Utterance

# Chinese numerals, e.g. 二十八 -> 28, 三千 -> 3000.
_CN_DIGITS = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
    "九": 9,
}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_NUM = "[零〇一二两三四五六七八九十百千]+"
SMALL_NUM = r"\d{1,2}|[一二两三四五六七八九十]{1,3}"

_EN_UNIT_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
)
_EN_TEN_WORDS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_EN_UNITS = {word: value for value, word in enumerate(_EN_UNIT_WORDS)}
EN_TENS = {word: 10 * (i + 2) for i, word in enumerate(_EN_TEN_WORDS)}
EN_NUM = (
    r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|nineteen|eighteen|seventeen|sixteen|fifteen|fourteen|thirteen|twelve|eleven|ten|nine|eight|seven|six|five|four"
    r"|three|two|one|a|an"
)

# Amounts of money: currency symbol/code, number, multiplier, currency word.
AMOUNT = (
    r"(?P<cur1>HK\$|US\$|C\$|A\$|S\$|\$|¥|£|€|HKD|USD|CNY|RMB|GBP|EUR|CAD|AUD|SGD)?\s*"
    rf"(?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|{_CN_NUM})\s*"
    r"(?P<mult>百万|千万|万|亿|千|w|k|mn|million|thousand|grand|m)?(?![A-Za-z])\s*"
    r"(?P<more>多|余|来|\+)?\s*"
    r"(?P<cur2>人民币|元|块钱?|港币|港元|港纸|美元|美金|刀|英镑|欧元|加元|加币|澳元|澳币|新币|"
    r"RMB|CNY|HKD|USD|GBP|EUR|CAD|AUD|SGD|(?:Hong Kong |HK |US |Canadian |Australian |Singapore )?dollars|"
    r"pounds|euros|yuan)?"
)
_MULTIPLIERS = {
    "万": 10000, "w": 10000, "千": 1000, "k": 1000, "百万": 1000000, "千万": 10000000, "亿": 100000000,
    "m": 1000000, "mn": 1000000, "million": 1000000, "thousand": 1000, "grand": 1000,
}
_CURRENCIES = {
    "人民币": "CNY", "元": "CNY", "块": "CNY", "块钱": "CNY", "¥": "CNY", "rmb": "CNY", "cny": "CNY",
    "yuan": "CNY", "港币": "HKD", "港元": "HKD", "港纸": "HKD", "hk$": "HKD", "hkd": "HKD",
    "hong kong dollars": "HKD", "hk dollars": "HKD", "美元": "USD", "美金": "USD", "刀": "USD", "$": "USD",
    "us$": "USD", "usd": "USD", "us dollars": "USD", "dollars": "USD", "英镑": "GBP", "£": "GBP",
    "gbp": "GBP", "pounds": "GBP", "欧元": "EUR", "€": "EUR", "eur": "EUR", "euros": "EUR", "加元": "CAD",
    "加币": "CAD", "c$": "CAD", "cad": "CAD", "canadian dollars": "CAD", "澳元": "AUD", "澳币": "AUD",
    "a$": "AUD", "aud": "AUD", "australian dollars": "AUD", "新币": "SGD", "s$": "SGD", "sgd": "SGD",
    "singapore dollars": "SGD",
}
_CURRENCY_ZH = {
    "CNY": "人民币", "HKD": "港币", "USD": "美元", "GBP": "英镑", "EUR": "欧元", "CAD": "加元", "AUD": "澳元",
    "SGD": "新加坡元",
}
_APPROX_WORDS = re.compile(
    r"大概|大约|约|差不多|估计|接近|将近|左右|上下|多|余|来|\+|about|around|roughly|approx|nearly|almost|over|"
    r"more than|close to|~|some",
    re.IGNORECASE,
)
MONTHLY_AFTER = re.compile(r"\s*(?:a|per|/|each|every)\s*month|\s*monthly", re.IGNORECASE)

@dataclass(frozen=True)
class Amount:
    value: int
    currency: str | None
    approximate: bool


def _cn_int(text: str) -> int | None:
    total, digit = 0, None
    for ch in text:
        if ch in _CN_DIGITS:
            if digit is not None:  # "三四年": a range, not a number
                return None
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            total += (1 if digit is None else digit) * _CN_UNITS[ch]
            digit = None
        else:
            return None
    return total + (digit or 0)


def _en_int(text: str) -> int | None:
    total = 0
    for word in re.split(r"[\s-]+", text.lower()):
        if word in ("a", "an"):
            total += 1
        elif word in EN_TENS:
            total += EN_TENS[word]
        elif word in _EN_UNITS:
            total += _EN_UNITS[word]
        else:
            return None
    return total


def parse_number(text: str) -> float | None:
    text = text.replace(",", "").strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    value = _cn_int(text)
    return float(value) if value is not None else _en_int(text)


def _currency(token: str | None) -> str | None:
    return _CURRENCIES.get(token.lower()) if token else None


def parse_amount(ctx: Utterance, m: re.Match[str]) -> Amount | None:
    number = parse_number(m["num"])
    if number is None:
        return None
    multiplier = _MULTIPLIERS.get((m["mult"] or "").lower(), 1)
    value = round(number * multiplier)
    if value < 1000:  # "年薪80" without a unit: not explicit enough
        return None
    currency = _currency(m["cur1"]) or _currency(m["cur2"]) or ("CNY" if ctx.zh else None)
    approximate = bool(_APPROX_WORDS.search(m.group(0)[: m.start("num") - m.start()])) or bool(m["more"])
    return Amount(value, currency, approximate)


def _zh_money(value: int) -> str:
    if value >= 100_000_000 and value % 10_000_000 == 0:
        return f"{value / 100_000_000:g}亿"
    if value >= 10_000:
        return f"{value / 10_000:g}万"
    return str(value)


def money_text(ctx: Utterance, amount: Amount) -> str:
    if ctx.zh:
        return (
            ("约" if amount.approximate else "")
            + _zh_money(amount.value)
            + _CURRENCY_ZH.get(amount.currency or "", "")
        )
    currency = f"{amount.currency} " if amount.currency else ""
    return ("about " if amount.approximate else "") + f"{currency}{amount.value:,}"
