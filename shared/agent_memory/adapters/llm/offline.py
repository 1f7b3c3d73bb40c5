"""Rule-based fallback extractor, used when no LLM is configured.

Deterministic and conservative: it reports only what the user states outright in
`turn.user_message` (Chinese or English) -- never the assistant's words -- as one
memory per profile field, worded in the user's own language. Vague statements keep
their vagueness ("三十多岁" -> "30+"). Negated, hypothetical ("想读博") and third-person
("我老婆是博士") mentions are ignored. Standard library only; every table and regex is
compiled once at import.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agent_memory.domain.models import ExtractedMemory, MemoryType, is_cjk_text
from agent_memory.ports import ConversationTurn

# --------------------------------------------------------------------------------------
# Shared building blocks
# --------------------------------------------------------------------------------------

_CJK = "\u4e00-\u9fff"

# Where a clause ends: qualifiers (negation, "想", "my wife") only reach back to here.
_CLAUSE_BREAK = re.compile(
    r"[;!?。；！？\n]|[,，、](?!\d{3})|\.(?=\s|$)|\b(?:and|but|while|whereas|although)\b|但是|不过|而且|并且|另外|同时",
    re.IGNORECASE,
)

# Negation just before a mention ("我不是硕士", "I don't have a PhD"). "差不多"/"不错" are not negations.
_NEG_ZH = re.compile(r"没|并非|从未|(?<!差)不(?![错少久仅但过太])")
_NEG_EN = re.compile(r"\b(?:not|no|never|neither|nor|without)\b|n't\b", re.IGNORECASE)
_NEG_ZH_WINDOW = 6
_NEG_EN_WINDOW = 30

# Wishes and plans: "想读博", "I want to study at MIT" are not facts.
_FUTURE_ZH = re.compile(r"想|打算|准备|计划|希望|申请|考虑|将来|以后|未来|要去|争取|梦想|考")
_FUTURE_EN = re.compile(
    r"\b(?:want|wants|wanted|wanna|plan|plans|planning|hope|hoping|would like|going to|gonna|intend|"
    r"intending|apply|applying|considering|consider|dream|dreaming|aim|aiming|thinking about|might|may)\b"
    r"|'d like",
    re.IGNORECASE,
)
# Past statements: "以前在腾讯工作", "I used to work at IBM" are not current.
_PAST_ZH = re.compile(r"以前|之前|曾经|过去|当年|原来|上一份")
_PAST_EN = re.compile(r"\b(?:used to|previously|formerly|former|before)\b", re.IGNORECASE)
# Somebody else is the subject: "我老婆是博士", "my son is 5 years old".
_OTHER_ZH = re.compile(
    r"老婆|老公|妻子|丈夫|太太|爱人|儿子|女儿|孩子|小孩|父亲|母亲|爸|妈|父母|哥哥|姐姐|弟弟|妹妹|"
    r"朋友|同学|室友|亲戚|家人|同事|老板|领导|(?<!其)他|她|对象|男友|女友|客户|你"
)
_OTHER_EN = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?:wife|husband|spouse|partner|sons?|daughters?|kids?|child(?:ren)?|"
    r"father|mother|dad|mom|mum|parents?|brother|sister|friends?|colleagues?|boss|girlfriend|boyfriend)\b"
    r"|\b(?:he|she|they|he's|she's|they're|you|you're)\b",
    re.IGNORECASE,
)

# Chinese numerals, e.g. 二十八 -> 28, 三千 -> 3000.
_CN_DIGITS = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
    "九": 9,
}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_NUM = "[零〇一二两三四五六七八九十百千]+"
_SMALL_NUM = r"\d{1,2}|[一二两三四五六七八九十]{1,3}"

_EN_UNIT_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
)
_EN_TEN_WORDS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_EN_UNITS = {word: value for value, word in enumerate(_EN_UNIT_WORDS)}
_EN_TENS = {word: 10 * (i + 2) for i, word in enumerate(_EN_TEN_WORDS)}
_EN_NUM = (
    r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|nineteen|eighteen|seventeen|sixteen|fifteen|fourteen|thirteen|twelve|eleven|ten|nine|eight|seven|six|five|four"
    r"|three|two|one|a|an"
)

# Amounts of money: currency symbol/code, number, multiplier, currency word.
_AMOUNT = (
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
_MONTHLY_AFTER = re.compile(r"\s*(?:a|per|/|each|every)\s*month|\s*monthly", re.IGNORECASE)


@dataclass(frozen=True)
class _Ctx:
    """The user's message, NFKC-normalised (full-width digits/punctuation folded), and its language."""

    text: str
    zh: bool

    def say(self, zh: str, en: str) -> str:
        return zh if self.zh else en


@dataclass(frozen=True)
class _Amount:
    value: int
    currency: str | None
    approximate: bool


def _clause_prefix(text: str, pos: int) -> str:
    start = 0
    for m in _CLAUSE_BREAK.finditer(text, 0, pos):
        start = m.end()
    return text[start:pos]


def _clause_around(text: str, start: int, end: int) -> str:
    after = _CLAUSE_BREAK.search(text, end)
    return _clause_prefix(text, start) + text[start : after.start() if after else len(text)]


def _stated(
    ctx: _Ctx, pos: int, *, negation: bool = True, future: bool = True, other: bool = True, past: bool = False
) -> bool:
    """True when the mention at `pos` is the user's own, current, affirmative statement."""
    prefix = _clause_prefix(ctx.text, pos)
    if negation and (_NEG_ZH.search(prefix[-_NEG_ZH_WINDOW:]) or _NEG_EN.search(prefix[-_NEG_EN_WINDOW:])):
        return False
    if future and (_FUTURE_ZH.search(prefix) or _FUTURE_EN.search(prefix)):
        return False
    if other and (_OTHER_ZH.search(prefix) or _OTHER_EN.search(prefix)):
        return False
    return not (past and (_PAST_ZH.search(prefix) or _PAST_EN.search(prefix)))


def _matches(
    pattern: re.Pattern[str], ctx: _Ctx, group: str | int = 0, **checks: bool
) -> Iterator[re.Match[str]]:
    """Matches of `pattern` whose `group` passes `_stated`."""
    for m in pattern.finditer(ctx.text):
        if _stated(ctx, m.start(group), **checks):
            yield m


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
        elif word in _EN_TENS:
            total += _EN_TENS[word]
        elif word in _EN_UNITS:
            total += _EN_UNITS[word]
        else:
            return None
    return total


def _number(text: str) -> float | None:
    text = text.replace(",", "").strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    value = _cn_int(text)
    return float(value) if value is not None else _en_int(text)


def _currency(token: str | None) -> str | None:
    return _CURRENCIES.get(token.lower()) if token else None


def _amount(ctx: _Ctx, m: re.Match[str]) -> _Amount | None:
    number = _number(m["num"])
    if number is None:
        return None
    multiplier = _MULTIPLIERS.get((m["mult"] or "").lower(), 1)
    value = round(number * multiplier)
    if value < 1000:  # "年薪80" without a unit: not explicit enough
        return None
    currency = _currency(m["cur1"]) or _currency(m["cur2"]) or ("CNY" if ctx.zh else None)
    approximate = bool(_APPROX_WORDS.search(m.group(0)[: m.start("num") - m.start()])) or bool(m["more"])
    return _Amount(value, currency, approximate)


def _zh_money(value: int) -> str:
    if value >= 100_000_000 and value % 10_000_000 == 0:
        return f"{value / 100_000_000:g}亿"
    if value >= 10_000:
        return f"{value / 10_000:g}万"
    return str(value)


def _money_text(ctx: _Ctx, amount: _Amount) -> str:
    if ctx.zh:
        return (
            ("约" if amount.approximate else "")
            + _zh_money(amount.value)
            + _CURRENCY_ZH.get(amount.currency or "", "")
        )
    currency = f"{amount.currency} " if amount.currency else ""
    return ("about " if amount.approximate else "") + f"{currency}{amount.value:,}"


def _fact(field: str, value: Any, content: str, **extra: Any) -> ExtractedMemory:
    return ExtractedMemory(memory_type=MemoryType.FACT, field=field, value=value, content=content, **extra)


def _intent(field: str, value: Any, content: str, **extra: Any) -> ExtractedMemory:
    return ExtractedMemory(memory_type=MemoryType.INTENT, field=field, value=value, content=content, **extra)


def _alternation(words: list[str] | tuple[str, ...] | dict[str, Any]) -> str:
    """A regex alternation, longest first so that "上海交大" wins over "上交"."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


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
    rf"\bI(?:'m| am)\s+(?:about\s+|around\s+|almost\s+|nearly\s+)?(?P<num>\d{{1,2}}|{_EN_NUM})"
    r"(?:[\s-]*(?:years?|yrs?)[\s-]*old\b|\s*y/?o\b|(?=\s*(?:[,.;!?)]|$|and\b|now\b|this\b|with\b|but\b)))",
    re.IGNORECASE,
)
_EN_AGE_OLD = re.compile(
    rf"\b(?P<num>\d{{1,2}}|{_EN_NUM})[\s-]*(?:years?|yrs?)[\s-]*old\b(?!\s+(?:son|daughter|kid|child|boy|girl|baby))",
    re.IGNORECASE,
)
_EN_AGE_LABEL = re.compile(r"\b(?:my age is|I'm aged|I am aged|aged)\s+(?P<num>\d{1,2})\b", re.IGNORECASE)
_EN_DECADES = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60}
_EN_AGE_DECADE = re.compile(
    r"\bin\s+my\s+(?:early\s+|mid\s+|mid-|late\s+)?(?P<decade>twenties|thirties|forties|fifties|sixties|[2-6]0'?s)\b"
    r"|\b(?P<decade2>twenty|thirty|forty|fifty|sixty|[2-6]0)[\s-]something\b",
    re.IGNORECASE,
)


def _age_memory(ctx: _Ctx, value: int | str, **metadata: Any) -> ExtractedMemory:
    if isinstance(value, str):  # "30+"
        decade = value.rstrip("+")
        content = ctx.say(f"用户{decade}多岁", f"User is in their {decade}s")
    else:
        approx = metadata.get("approximate")
        content = ctx.say(
            f"用户{'约' if approx else ''}{value}岁", f"User is {'about ' if approx else ''}{value} years old"
        )
    return _fact("age", value, content, metadata=metadata)


def _age_number(text: str) -> int | None:
    """The age a number token states, or None when it is not a plausible adult age."""
    n = _number(text)
    return int(n) if n is not None and 10 <= n <= 100 else None


def _age(ctx: _Ctx) -> ExtractedMemory | None:
    for m in _matches(_ZH_AGE, ctx, "num"):
        n = _age_number(m["num"])
        if n is None:
            continue
        if (m["vague"] or m["vague2"] in ("出头", "多")) and n % 10 == 0:
            return _age_memory(ctx, f"{n}+")
        approximate = bool(m["qual"] or m["vague2"] or m["vague"])
        return _age_memory(ctx, n, **({"approximate": True} if approximate else {}))
    for m in _matches(_ZH_AGE_EARLY, ctx, "num"):
        n = _age_number(m["num"])
        if n and not re.search(r"薪|收入|万|元|块|月", _clause_around(ctx.text, m.start(), m.end())):
            return _age_memory(ctx, f"{n}+")
    for pattern in (_ZH_AGE_LABEL, _EN_AGE, _EN_AGE_OLD, _EN_AGE_LABEL):
        for m in _matches(pattern, ctx, "num"):
            n = _age_number(m["num"])
            if n is not None:
                return _age_memory(ctx, n)
    for m in _matches(_EN_AGE_DECADE, ctx):
        word = (m["decade"] or m["decade2"]).lower()
        decade = _EN_DECADES.get(word) or _EN_TENS.get(word) or int(word[:2])
        return _age_memory(ctx, f"{decade}+")
    return None


# --------------------------------------------------------------------------------------
# education
# --------------------------------------------------------------------------------------

# Rank -> (Chinese label, English label). Higher rank = higher degree.
_EDU_LEVELS = {
    5: ("博士", "PhD"), 4: ("硕士", "Master's"), 3: ("学士", "Bachelor's"), 2: ("大专", "Associate"),
    1: ("高中", "High school"),
}
_ZH_EDU_TERMS = {
    "博士后": 5, "博士": 5, "读博": 5, "硕士": 4, "研究生": 4, "读研": 4, "本科": 3, "学士": 3, "大专": 2,
    "专科": 2, "高中": 1, "中专": 1,
}
_ZH_EDU = re.compile(rf"(?P<term>{_alternation(_ZH_EDU_TERMS)})")
_ZH_HIGH_SCHOOL_CONTEXT = re.compile(r"^(?:高中|中专)(?:毕业|学历|文凭)|(?:学历|文凭)(?:是|:)?\s*$")
_EN_EDU = re.compile(
    r"(?P<r5>(?<![A-Za-z])(?:Ph\.?\s?D|DPhil)(?![A-Za-z])\.?|\bdoctorate\b|\bdoctoral degree\b)"
    r"|(?P<r4>\bmaster'?s\b|\bmasters\b|\bmaster degree\b|\bmaster of (?:science|arts|engineering|business)\b"
    r"|(?<![A-Za-z])(?:M\.?Sc|E?MBA|MEng|MPhil|MPA|LLM)(?![A-Za-z])|\bM\.S\.|\bgraduate degree\b)"
    r"|(?P<r3>\bbachelor'?s\b|\bbachelors\b|\bbachelor degree\b"
    r"|(?<![A-Za-z])(?:B\.?Sc|BEng)(?![A-Za-z])|\bB\.S\."
    r"|\bundergraduate degree\b|\bcollege degree\b)"
    r"|(?P<r2>\bassociate'?s? degree\b)"
    r"|(?P<r1>\bhigh school (?:diploma|graduate|education)\b|\bfinished high school\b"
    r"|(?<![A-Za-z])GED(?![A-Za-z]))",
    re.IGNORECASE,
)


def _education(ctx: _Ctx) -> ExtractedMemory | None:
    best = 0
    for m in _matches(_ZH_EDU, ctx, "term"):
        rank = _ZH_EDU_TERMS[m["term"]]
        if rank == 1 and not (
            _ZH_HIGH_SCHOOL_CONTEXT.search(ctx.text[m.start() : m.end() + 2])
            or _ZH_HIGH_SCHOOL_CONTEXT.search(ctx.text[max(0, m.start() - 4) : m.start()])
        ):
            continue  # "高中同学" is not a degree
        best = max(best, rank)
    for m in _matches(_EN_EDU, ctx):
        best = max(best, next(int(name[1]) for name, value in m.groupdict().items() if value))
    if not best:
        return None
    zh_label, en_label = _EDU_LEVELS[best]
    value = ctx.say(zh_label, en_label)
    return _fact("education", value, ctx.say(f"最高学历：{value}", f"Highest education: {value}"))


# --------------------------------------------------------------------------------------
# university
# --------------------------------------------------------------------------------------

_ZH_UNI_ALIASES = {
    "浙大": "浙江大学", "清华": "清华大学", "北大": "北京大学", "复旦": "复旦大学", "上交": "上海交通大学",
    "上海交大": "上海交通大学", "南大": "南京大学", "武大": "武汉大学", "中大": "中山大学",
    "哈工大": "哈尔滨工业大学", "华科": "华中科技大学", "华中大": "华中科技大学",
    "中科大": "中国科学技术大学", "港大": "香港大学", "港科大": "香港科技大学", "港科技": "香港科技大学",
    "港中文": "香港中文大学", "港中大": "香港中文大学", "港城大": "香港城市大学", "港理工": "香港理工大学",
    "西交": "西安交通大学", "西安交大": "西安交通大学", "同济": "同济大学", "人大": "中国人民大学",
    "北航": "北京航空航天大学", "北理工": "北京理工大学", "北师大": "北京师范大学", "华师大": "华东师范大学",
    "华东师大": "华东师范大学", "厦大": "厦门大学", "川大": "四川大学", "南开": "南开大学",
    "北邮": "北京邮电大学", "电子科大": "电子科技大学", "西电": "西安电子科技大学",
    "华南理工": "华南理工大学", "上财": "上海财经大学", "央财": "中央财经大学", "哈佛": "哈佛大学",
    "斯坦福": "斯坦福大学", "麻省理工": "麻省理工学院", "牛津": "牛津大学", "剑桥": "剑桥大学",
}
# Aliases that are also ordinary words in some contexts ("中大型企业", "人大代表", "北大荒").
_ZH_UNI_ALIAS = re.compile(
    rf"(?<!全国)(?P<alias>{_alternation(_ZH_UNI_ALIASES)})(?!型|规模|小|企业|代表|常委|会议|荒|街|郎)"
)
# A full name: 2-10 CJK characters ending in 大学/学院, not crossing function words like 我/是/在/于.
_ZH_NAME_STOP = "我你他她是在于从读自念考去到和与及的了也都就还已想要"
_ZH_UNI_FULL = re.compile(rf"(?P<name>(?:(?![{_ZH_NAME_STOP}])[{_CJK}]){{2,10}}?(?:大学|学院))")
_ZH_NAME_JUNK = re.compile(
    r"^(?:本科|硕士|研究生|博士|本硕|硕博|毕业|母校|就读|目前|现在|当时|之前|以前|曾经|已经|一所|一个|一家|"
    r"国内|海外|名牌|本地|所以|然后|但是|而且|不过|因为|其实|大概|老家)+"
)
_ZH_GENERIC_UNIS = {
    "名牌大学", "重点大学", "普通大学", "国外大学", "海外大学", "国内大学", "美国大学", "英国大学",
    "一流大学", "野鸡大学", "一般大学", "本地大学", "外国大学", "澳洲大学", "老年大学", "开放大学",
}
_EN_UNI_KNOWN = {
    "MIT": "MIT", "Stanford": "Stanford University", "Harvard": "Harvard University",
    "Oxford": "University of Oxford", "Cambridge": "University of Cambridge", "Caltech": "Caltech",
    "UC Berkeley": "UC Berkeley", "Berkeley": "UC Berkeley", "UCLA": "UCLA",
    "CMU": "Carnegie Mellon University", "Carnegie Mellon": "Carnegie Mellon University",
    "Princeton": "Princeton University", "Yale": "Yale University", "Columbia": "Columbia University",
    "HKU": "The University of Hong Kong", "HKUST": "HKUST", "CUHK": "CUHK",
    "NUS": "National University of Singapore", "LSE": "LSE", "Imperial": "Imperial College London",
    "Tsinghua": "Tsinghua University", "Peking": "Peking University", "Fudan": "Fudan University",
    "ZJU": "Zhejiang University", "SJTU": "Shanghai Jiao Tong University",
}
_EN_UNI_SHORT = re.compile(rf"(?<![A-Za-z])(?P<name>{_alternation(_EN_UNI_KNOWN)})(?![A-Za-z])")
# A bare short name counts only next to a word about studying ("Cambridge" may be the city).
_STUDY_CUE = re.compile(
    r"graduat|studied|study|studying|degree|alum|attended|went to|master|bachelor|ph\.?d|mba|\bgrad\b|"
    r"毕业|读|学位|硕士|博士|本科|留学",
    re.IGNORECASE,
)
_EN_UNI_FULL = re.compile(
    r"(?P<name>(?:[A-Z](?:[\w&'-]|\.(?=\w))*\s+)*(?:University|College|Institute|Polytechnic|School)"
    r"(?:\s+(?:of|and|for|at|&|[A-Z](?:[\w&'-]|\.(?=\w))*))*)"
)
_EN_NAME_EDGE = {
    "I", "At", "In", "From", "My", "And", "Then", "After", "Before", "Both", "Also", "So", "But", "Yes", "of",
    "and", "for", "at", "&",
}


def _clean_en_name(name: str) -> str:
    words = name.split()
    while words and words[0] in _EN_NAME_EDGE:
        words.pop(0)
    while words and words[-1] in _EN_NAME_EDGE:
        words.pop()
    return " ".join(words)


def _university_candidates(ctx: _Ctx) -> list[tuple[int, int, str]]:
    """(start, end, name) of every university mentioned, before any negation check."""
    found: list[tuple[int, int, str]] = []
    for m in _ZH_UNI_FULL.finditer(ctx.text):
        name = _ZH_NAME_JUNK.sub("", m["name"])
        start = m.end() - len(name)
        alias = _ZH_UNI_ALIAS.match(name)
        if alias and name.endswith("学院"):  # "浙大计算机学院" -> 浙江大学
            name = _ZH_UNI_ALIASES[alias["alias"]]
        if len(name) > 3 and name not in _ZH_GENERIC_UNIS:
            found.append((start, m.end(), name))
    for m in _ZH_UNI_ALIAS.finditer(ctx.text):
        if not any(start <= m.start() < end for start, end, _ in found):
            found.append((m.start(), m.end(), _ZH_UNI_ALIASES[m["alias"]]))
    for m in _EN_UNI_FULL.finditer(ctx.text):
        name = _clean_en_name(m["name"])
        if " " in name and "High School" not in name:
            start = ctx.text.index(name, m.start())
            found.append((start, start + len(name), name))
    for m in _EN_UNI_SHORT.finditer(ctx.text):
        if any(start <= m.start() < end for start, end, _ in found):
            continue
        if _STUDY_CUE.search(_clause_around(ctx.text, m.start(), m.end())):
            found.append((m.start(), m.end(), _EN_UNI_KNOWN[m["name"]]))
    return sorted(found)


def _university(ctx: _Ctx) -> ExtractedMemory | None:
    names = list(dict.fromkeys(name for start, _, name in _university_candidates(ctx) if _stated(ctx, start)))
    if not names:
        return None
    name, others = names[0], names[1:]
    metadata = {"also_mentioned": others} if others else {}
    return _fact("university", name, ctx.say(f"毕业于{name}", f"Graduated from {name}"), metadata=metadata)


# --------------------------------------------------------------------------------------
# major
# --------------------------------------------------------------------------------------

_ZH_MAJOR_RUN = rf"(?P<major>(?:(?![{_ZH_NAME_STOP}])[{_CJK}A-Za-z]){{2,14}}?)"
_ZH_MAJOR_PATTERNS = (
    re.compile(
        rf"(?:专业(?:是|为|:)|主修)\s*(?P<major>[{_CJK}A-Za-z]{{2,10}}?)(?=[,.;!?。，；！？\s]|$|的|专业|方向)"
    ),
    re.compile(rf"(?:学的是|读的是|学|念的是){_ZH_MAJOR_RUN}专业"),
    re.compile(rf"{_ZH_MAJOR_RUN}专业"),
    re.compile(rf"{_ZH_MAJOR_RUN}(?:专业)?(?:博士后|博士|硕士|研究生|本科|学士)"),
    re.compile(rf"(?:学的是|读的是){_ZH_MAJOR_RUN}(?=[,.;!?。，；！？\s]|$|的)"),
)
_ZH_MAJOR_JUNK = re.compile(r"^(?:学的是|读的是|学|读|念|修|主修|本科|硕士|博士|研究生|毕业|大学|学院|的)+")
_ZH_MAJOR_INVALID = re.compile(
    r"博士|硕士|本科|学士|研究生|大学|学院|^(?:理学|工学|文学|农学|全日制|非全日制|在职|海外|国外|名校|目前|现在|"
    r"已经|正在|刚刚|去年|今年|什么|哪个|这个|一个|E?MBA|MPA|EMBA)$",
    re.IGNORECASE,
)
_EN_MAJOR_TAIL = (
    r"(?P<major>[A-Za-z][A-Za-z&/ -]{1,40}?)"
    r"(?=\s+(?:from|at|with|in|and\s+(?:I|my|now|then|have|am|work|currently)\b)|\s*[,.;!?()]|$)"
)
_EN_MAJOR_PATTERNS = (
    re.compile(
        rf"\b(?:degree|major|majored|majoring|specialization|specialized|concentration)\s+in\s+{_EN_MAJOR_TAIL}",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:master'?s|masters|bachelor'?s|bachelors|Ph\.?D\.?|doctorate|MSc|BSc|M\.S\.|B\.S\.|BA|BEng|MEng|MPhil)"
        rf"\s+(?:degree\s+)?in\s+{_EN_MAJOR_TAIL}",
        re.IGNORECASE,
    ),
    re.compile(rf"\bmy\s+major\s+(?:is|was)\s+{_EN_MAJOR_TAIL}", re.IGNORECASE),
    re.compile(rf"\bstudied\s+(?!(?:at|in|abroad|hard|there|here|for)\b){_EN_MAJOR_TAIL}", re.IGNORECASE),
)


def _strip_university(name: str) -> str:
    """Drop a leading university name: 浙大计算机 -> 计算机, 浙江大学计算机 -> 计算机."""
    name = re.sub(r"^.*(?:大学|学院)", "", name)
    return re.sub(rf"^(?:{_alternation(_ZH_UNI_ALIASES)})", "", name)


def _major(ctx: _Ctx) -> ExtractedMemory | None:
    for pattern in _ZH_MAJOR_PATTERNS:
        for m in _matches(pattern, ctx, "major"):
            major = _ZH_MAJOR_JUNK.sub("", _strip_university(_ZH_MAJOR_JUNK.sub("", m["major"])))
            if len(major) >= 2 and not _ZH_MAJOR_INVALID.search(major):
                return _fact("major", major, ctx.say(f"专业：{major}", f"Major: {major}"))
    for pattern in _EN_MAJOR_PATTERNS:
        for m in _matches(pattern, ctx, "major"):
            major = re.sub(r"^(?:a|an|the)\s+", "", m["major"].strip(), flags=re.IGNORECASE)
            if major and len(major.split()) <= 5 and not _EN_UNI_SHORT.fullmatch(major):
                return _fact("major", major, ctx.say(f"专业：{major}", f"Major: {major}"))
    return None


# --------------------------------------------------------------------------------------
# currentJobTitle / currentCompany / currentIndustry
# --------------------------------------------------------------------------------------

_ZH_JOB_WORDS = re.compile(
    r"开发|工程师|程序员|码农|经理|总监|主管|总裁|总经理|设计师|设计|产品|运营|销售|市场|测试|算法|架构|分析师|"
    r"研究员|顾问|会计|审计|律师|医生|护士|教师|老师|教授|讲师|咨询|人力资源|招聘|行政|编辑|记者|财务|交易员|风控|"
    r"前端|后端|全栈|运维|科学家|创始人|合伙人|公务员|研发|技术|策划|翻译|主播|厨师|司机|店长|主任|专员|助理|秘书|"
    r"精算师|董事|高管|负责人|CEO|CTO|CFO|COO|VP|HR|PM|BD"
)
_ZH_JOB_PATTERNS = (
    re.compile(r"(?:职位|岗位|职务|头衔)(?:是|为|:)\s*(?P<title>[^\s,.;!?。，；！？、]{2,20})"),
    re.compile(r"(?:担任|任职为|当上了?|当了?|做了?|干|从事)\s*(?P<title>[^\s\d,.;!?。，；！？、]{2,20})"),
    re.compile(r"是(?:一名|一个|一位|名|个|位)?\s*(?P<title>[^\s\d,.;!?。，；！？、]{2,20})"),
)
# Words that end a title: "前端开发工作8年" -> "前端开发".
_ZH_TITLE_END = re.compile(
    r"的?工作|相关|方面|岗位|职位|已经|了|有|快|差不多|大概|在|和|而且|但|也|还|这|那|年"
)
_ZH_TITLE_LEAD = re.compile(r"^(?:一名|一个|一位|名|个|位|做|当)+")
_ZH_COMPANIES = (
    "阿里巴巴", "阿里", "蚂蚁集团", "蚂蚁金服", "腾讯", "字节跳动", "字节", "百度", "华为", "美团", "京东",
    "网易", "小米", "拼多多", "滴滴", "快手", "微软", "谷歌", "苹果", "亚马逊", "英伟达", "英特尔", "汇丰",
    "渣打", "中金", "中信", "招商银行", "平安", "携程", "大疆", "比亚迪", "宁德时代", "蔚来", "小红书",
    "哔哩哔哩", "B站", "商汤", "海康威视", "中兴", "联想", "高盛", "摩根士丹利", "摩根大通", "德勤",
    "普华永道", "安永", "毕马威", "麦肯锡",
)
_ZH_COMPANY_SUFFIX = re.compile(
    r"(?:公司|集团|银行|科技|证券|基金|保险|资本|医院|律所|事务所|研究院|研究所|控股|有限)$"
)
_ZH_COMPANY_PATTERNS = (
    # (pattern, needs a known name or a company suffix)
    (
        re.compile(
            r"(?:就职于|任职于|供职于|受雇于|入职了?)\s*(?P<company>[^\s,.;!?。，；！？、]{2,20}?)"
            r"(?=[,.;!?。，；！？\s]|$|工作|上班|任职|做|当|担任|的|了)"
        ),
        False,
    ),
    (
        re.compile(
            r"(?:公司|单位|东家)(?:是|为|:)\s*(?P<company>[^\s,.;!?。，；！？、]{2,20}?)(?=[,.;!?。，；！？\s]|$)"
        ),
        False,
    ),
    (
        re.compile(
            r"在\s*(?!在)(?P<company>[^\s\d,.;!?。，；！？、]{2,20}?)(?:工作|上班|任职|就职|做|当|担任|干|实习)"
        ),
        True,
    ),
    (
        re.compile(
            rf"(?:是|在|加入了?)\s*(?P<company>{_alternation(_ZH_COMPANIES)})(?=的|,|，|$|做|当|工作|上班)"
        ),
        True,
    ),
)
_ZH_COMPANY_GENERIC = re.compile(
    r"^(?:一家|一个|某|这家|那家|家|本地|外企|国企|私企|大厂|小公司|公司|创业公司)"
)

_EN_JOB_WORDS = re.compile(
    r"engineer|developer|programmer|manager|director|designer|analyst|consultant|architect|scientist|researcher|"
    r"accountant|auditor|lawyer|attorney|solicitor|doctor|physician|surgeon|nurse|teacher|professor|lecturer|"
    r"officer|specialist|executive|administrator|coordinator|president|founder|partner|\bCEO\b|\bCTO\b|\bCFO\b|"
    r"\bCOO\b|\bVP\b|head of|\blead\b|trader|banker|editor|writer|journalist|recruiter|\bsales\b|marketing|"
    r"product owner|entrepreneur|pharmacist|dentist|technician|strategist|economist|actuary|pilot|chef|"
    r"\bPM\b",
    re.IGNORECASE,
)
_EN_TITLE = r"(?:\d{1,2}[\s-]*years?[\s-]*old\s+)?(?P<title>[A-Za-z][A-Za-z/&+ -]{1,60})"
_EN_JOB_PATTERNS = (
    re.compile(rf"\bI\s+work\s+as\s+(?:an?\s+|the\s+)?{_EN_TITLE}", re.IGNORECASE),
    re.compile(rf"\bworking\s+as\s+(?:an?\s+|the\s+)?{_EN_TITLE}", re.IGNORECASE),
    re.compile(
        rf"\bmy\s+(?:job\s+title|title|position|role|job)\s+is\s+(?:an?\s+|the\s+)?{_EN_TITLE}", re.IGNORECASE
    ),
    re.compile(rf"\bI(?:'m| am)\s+(?:currently\s+|now\s+)?(?:an?|the)\s+{_EN_TITLE}", re.IGNORECASE),
)
_EN_TITLE_END = re.compile(
    r"\s+(?:at|in|for|with|and|from|based|who|since|working|here|there|by|currently|now)\b", re.IGNORECASE
)
# A capitalised word; a dot only inside it ("A.I."-style), never the sentence's full stop.
_EN_CAP_WORD = r"[A-Z](?:[\w&'-]|\.(?=\w))*"
_EN_CAP_NAME = rf"(?P<name>{_EN_CAP_WORD}(?:\s+(?:{_EN_CAP_WORD}|&|of))*)"
_EN_COMPANY = re.compile(
    rf"\b(?:work(?:ing|s)?|employed|joined)\b[^.;!?]{{0,60}}?\b(?:at|for|by|joined)\s+{_EN_CAP_NAME}"
)
# "I'm a product manager at Tencent": the company follows a job title.
_EN_COMPANY_AFTER_TITLE = re.compile(rf"\s+(?:at|for|with)\s+{_EN_CAP_NAME}")

_ZH_INDUSTRY_PATTERNS = (
    re.compile(rf"(?P<industry>(?:(?![{_ZH_NAME_STOP}做事干属所])[{_CJK}A-Za-z/]){{2,8}}?)行业"),
    re.compile(rf"行业(?:是|为|:)\s*(?P<industry>[{_CJK}A-Za-z/]{{2,8}}?)(?=[,.;!?。，；！？\s]|$|的|行业)"),
)
_ZH_INDUSTRY_GENERIC = re.compile(r"^(?:这个|那个|哪个|什么|同一|整个|各个|相关|一个|本)")
_EN_INDUSTRY_PATTERNS = (
    re.compile(r"\bin\s+the\s+(?P<industry>[A-Za-z&/ -]{2,30}?)\s+(?:industry|sector)\b", re.IGNORECASE),
    re.compile(
        r"\bwork\s+in\s+(?P<industry>[A-Za-z&/-]{2,20}(?:\s+[A-Za-z&/-]{2,20})?)\s+(?:industry|sector)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:my\s+)?(?:industry|sector)\s+is\s+(?P<industry>[A-Za-z&/ -]{2,30}?)(?=\s*[,.;!?]|$|\s+and\b)",
        re.IGNORECASE,
    ),
)


def _zh_title(raw: str) -> str:
    """The title in a raw run: "阿里的产品经理工作" -> "产品经理"."""
    end = _ZH_TITLE_END.search(raw)
    raw = raw[: end.start()] if end else raw
    return _ZH_TITLE_LEAD.sub("", raw.rpartition("的")[2])


def _job_title(ctx: _Ctx) -> ExtractedMemory | None:
    candidates: list[tuple[int, str]] = []
    for pattern in _ZH_JOB_PATTERNS:
        for m in _matches(pattern, ctx, "title", past=True):
            title = _zh_title(m["title"])
            if 2 <= len(title) <= 12 and _ZH_JOB_WORDS.search(title) and not _CITY_ZH_RE.fullmatch(title):
                candidates.append((m.start(), title))
    for pattern in _EN_JOB_PATTERNS:
        for m in _matches(pattern, ctx, "title", past=True):
            title = _EN_TITLE_END.split(m["title"], maxsplit=1)[0].strip(" -")
            if _EN_JOB_WORDS.search(title) and len(title.split()) <= 5:
                candidates.append((m.start(), title))
    if not candidates:
        return None
    title = min(candidates)[1]
    return _fact("currentJobTitle", title, ctx.say(f"职位：{title}", f"Job title: {title}"))


def _company(ctx: _Ctx) -> ExtractedMemory | None:
    for pattern, needs_evidence in _ZH_COMPANY_PATTERNS:
        for m in _matches(pattern, ctx, "company", past=True):
            company = m["company"].rpartition("的")[2]  # "香港的汇丰银行" -> "汇丰银行"
            if len(company) < 2 or _ZH_COMPANY_GENERIC.match(company) or _is_city(company):
                continue
            if company.startswith(("做", "搞", "从事")) or company.endswith("行业"):
                continue
            known = company in _ZH_COMPANIES or bool(_ZH_COMPANY_SUFFIX.search(company))
            if needs_evidence and not known:
                continue
            return _fact("currentCompany", company, ctx.say(f"就职于{company}", f"Works at {company}"))
    for m in _matches(_EN_COMPANY, ctx, "name", past=True):
        company = _clean_en_name(m["name"])
        if company and not _is_city(company):
            return _fact("currentCompany", company, ctx.say(f"就职于{company}", f"Works at {company}"))
    for pattern in _EN_JOB_PATTERNS:
        for m in _matches(pattern, ctx, "title", past=True):
            title = _EN_TITLE_END.split(m["title"], maxsplit=1)[0]
            after = _EN_COMPANY_AFTER_TITLE.match(ctx.text, m.start("title") + len(title))
            company = _clean_en_name(after["name"]) if after else ""
            if company and _EN_JOB_WORDS.search(title) and not _is_city(company):
                return _fact("currentCompany", company, ctx.say(f"就职于{company}", f"Works at {company}"))
    return None


def _industry(ctx: _Ctx) -> ExtractedMemory | None:
    for pattern in _ZH_INDUSTRY_PATTERNS:
        for m in _matches(pattern, ctx, "industry", past=True):
            industry = _CITY_PREFIX_RE.sub("", m["industry"])
            if len(industry) >= 2 and not _ZH_INDUSTRY_GENERIC.match(industry):
                return _fact(
                    "currentIndustry", industry, ctx.say(f"所在行业：{industry}", f"Industry: {industry}")
                )
    for pattern in _EN_INDUSTRY_PATTERNS:
        for m in _matches(pattern, ctx, "industry", past=True):
            industry = m["industry"].strip()
            if industry and len(industry.split()) <= 3:
                return _fact(
                    "currentIndustry", industry, ctx.say(f"所在行业：{industry}", f"Industry: {industry}")
                )
    return None


# --------------------------------------------------------------------------------------
# totalYearsOfExperience
# --------------------------------------------------------------------------------------

_YEARS_NUM = (
    r"(?P<qual>快|近|将近|接近|大概|差不多|约|超过|有)?\s*"
    rf"(?P<num>{_SMALL_NUM})\s*(?P<more>多|几|来)?\s*(?:个)?\s*年"
)
_ZH_YEARS_PATTERNS = (
    re.compile(
        rf"(?:工作年限|工龄|从业|工作)(?:了|有|已经|已|:|是)*\s*{_YEARS_NUM}(?!前|后|以前|以后|之前|之后)"
    ),
    re.compile(rf"(?P<num>{_SMALL_NUM})\s*(?P<more>多|几|来)?\s*年(?:的)?(?:工作|从业)?(?:经验|经历)"),
    re.compile(rf"(?:干了|做了|从事[{_CJK}A-Za-z]{{0,8}}?)\s*{_YEARS_NUM}(?!前|后|以前|以后|之前|之后)"),
)
_EN_YEARS_PATTERNS = (
    re.compile(
        rf"\b(?P<qual>about|around|over|nearly|almost|more than|roughly)?\s*(?P<num>\d{{1,2}}|{_EN_NUM})\s*"
        r"(?P<more>\+|plus)?\s*(?:years?|yrs?)(?:\s+of)?\s+(?:(?:work|working|professional|industry|relevant|total)\s+)?"
        r"experience\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:been\s+working|(?:have|'ve)\s+(?:been\s+)?work(?:ed|ing))\s+(?:for\s+)?"
        rf"(?P<qual>about|around|over|nearly|almost|more than|roughly)?\s*(?P<num>\d{{1,2}}|{_EN_NUM})\s*"
        r"(?P<more>\+|plus)?\s*(?:years?|yrs?)\b",
        re.IGNORECASE,
    ),
)


def _years_of_experience(ctx: _Ctx) -> ExtractedMemory | None:
    for pattern in (*_ZH_YEARS_PATTERNS, *_EN_YEARS_PATTERNS):
        for m in _matches(pattern, ctx, "num", future=False):
            n = _number(m["num"])
            if n is None or not 0 < n < 60:
                continue
            qual = (m.groupdict().get("qual") or "").lower()
            if m["more"] or qual in ("超过", "over", "more than"):
                value: int | str = f"{int(n)}+"
                text = ctx.say(f"工作年限：{int(n)}年以上", f"Work experience: {int(n)}+ years")
                return _fact("totalYearsOfExperience", value, text)
            metadata = {"approximate": True} if qual and qual != "有" else {}
            text = ctx.say(
                f"工作年限：{'约' if metadata else ''}{int(n)}年",
                f"Work experience: {'about ' if metadata else ''}{int(n)} years",
            )
            return _fact("totalYearsOfExperience", int(n), text, metadata=metadata)
    return None


# --------------------------------------------------------------------------------------
# annualIncome / investmentAmount
# --------------------------------------------------------------------------------------

_ZH_INCOME = re.compile(
    r"(?:税前|税后)?(?:年薪|年收入|年包|年总包|年收|一年(?:能)?(?:赚|挣|收入))"
    r"(?:大概|大约|约|差不多|估计|接近|将近|超过|有|在|是|为|:|能|税前|税后|\s)*"
    + _AMOUNT
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
        + _AMOUNT
        + r"\s*(?:a|per|/|each|every)\s*(?:year|yr|annum)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:earn|earning|make|making)\s+" + _EN_APPROX + _AMOUNT + r"\s*(?:annually|yearly)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:annual|yearly)\s+(?:salary|income|pay|compensation|package|earnings|base)\s*(?:is|of|:|=|at)?\s*"
        + _EN_APPROX
        + _AMOUNT,
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:salary|income|compensation|package)\s+(?:is|of|:|=|at)\s*" + _EN_APPROX + _AMOUNT,
        re.IGNORECASE,
    ),
)
_ZH_INVEST = re.compile(
    r"(?:可以|能|可|打算|准备|愿意|计划|能够)?\s*(?:投资|投入|拿出)(?:资产|金额|额度|预算|资金)?"
    r"(?:大概|大约|约|差不多|有|在|是|为|:|左右|\s)*" + _AMOUNT + r"(?P<tail>左右|上下|以上|多)?",
    re.IGNORECASE,
)
_EN_INVEST_PATTERNS = (
    re.compile(
        r"\b(?:can|could|able to|willing to|plan to|planning to|prepared to|ready to)\s+"
        r"invest\s+(?:up to\s+)?"
        + _EN_APPROX
        + _AMOUNT,
        re.IGNORECASE,
    ),
    re.compile(
        r"\binvestment\s+(?:budget|capacity|amount)\s+(?:is|of|:)\s*" + _EN_APPROX + _AMOUNT, re.IGNORECASE
    ),
)


def _money_match(ctx: _Ctx, patterns: tuple[re.Pattern[str], ...]) -> _Amount | None:
    for pattern in patterns:
        for m in _matches(pattern, ctx, future=False):
            if _MONTHLY_AFTER.match(ctx.text, m.end()) or re.search(
                r"月", ctx.text[m.start() : m.start("num")]
            ):
                continue
            amount = _amount(ctx, m)
            if amount:
                tail = m.groupdict().get("tail")
                return _Amount(amount.value, amount.currency, amount.approximate or bool(tail))
    return None


def _annual_income(ctx: _Ctx) -> ExtractedMemory | None:
    amount = _money_match(ctx, (_ZH_INCOME, *_EN_INCOME_PATTERNS))
    if not amount:
        return None
    money = _money_text(ctx, amount)
    return _fact(
        "annualIncome",
        amount.value,
        ctx.say(f"年薪{money}", f"Annual income {money}"),
        metadata={"currency": amount.currency, "approximate": amount.approximate},
    )


def _investment_amount(ctx: _Ctx) -> ExtractedMemory | None:
    amount = _money_match(ctx, (_ZH_INVEST, *_EN_INVEST_PATTERNS))
    if not amount:
        return None
    money = _money_text(ctx, amount)
    return _intent(
        "investmentAmount",
        amount.value,
        ctx.say(f"可投资{money}", f"Can invest {money}"),
        metadata={"currency": amount.currency, "approximate": amount.approximate},
    )


# --------------------------------------------------------------------------------------
# currentLocation
# --------------------------------------------------------------------------------------

_CITIES_ZH = (
    "北京", "上海", "广州", "深圳", "杭州", "南京", "苏州", "成都", "重庆", "武汉", "西安", "天津", "长沙",
    "郑州", "青岛", "厦门", "宁波", "合肥", "济南", "大连", "沈阳", "哈尔滨", "长春", "福州", "昆明", "南昌",
    "贵阳", "南宁", "太原", "石家庄", "无锡", "常州", "东莞", "佛山", "珠海", "中山", "惠州", "温州", "绍兴",
    "嘉兴", "金华", "台州", "烟台", "徐州", "南通", "扬州", "泉州", "兰州", "乌鲁木齐", "呼和浩特", "海口",
    "三亚", "香港", "澳门", "台北", "新加坡", "东京", "大阪", "首尔", "伦敦", "曼彻斯特", "纽约", "旧金山",
    "硅谷", "湾区", "洛杉矶", "西雅图", "波士顿", "芝加哥", "多伦多", "温哥华", "蒙特利尔", "悉尼", "墨尔本",
    "奥克兰", "巴黎", "柏林", "慕尼黑", "阿姆斯特丹", "迪拜", "吉隆坡", "曼谷", "苏黎世", "都柏林",
)
_CITIES_EN = (
    "Hong Kong", "Shanghai", "Beijing", "Shenzhen", "Guangzhou", "Hangzhou", "Nanjing", "Suzhou", "Chengdu",
    "Wuhan", "Xi'an", "Tianjin", "Chongqing", "Xiamen", "Macau", "Taipei", "Singapore", "Tokyo", "Seoul",
    "London", "Manchester", "New York", "San Francisco", "Bay Area", "Silicon Valley", "Los Angeles",
    "Seattle", "Boston", "Chicago", "Toronto", "Vancouver", "Montreal", "Sydney", "Melbourne", "Auckland",
    "Paris", "Berlin", "Munich", "Amsterdam", "Dubai", "Kuala Lumpur", "Bangkok", "Zurich", "Dublin",
)
_CITY_ZH_RE = re.compile(_alternation(_CITIES_ZH))
_CITY_PREFIX_RE = re.compile(rf"^(?:{_alternation(_CITIES_ZH)})")
_CITY_FOLLOW = (
    r"(?=工作|上班|生活|定居|做|当|从事|读书|上学|发展|打工|创业|任职|就职|住|这边|那边|呢|了|,|\.|。|，|;|；|!|！|\?|？"
    r"|\s|$)"
)
_ZH_LOCATION_PATTERNS = (
    re.compile(
        r"(?:住在|定居在?|定居于|现居(?:住)?(?:在|于)?|生活在|人在|base在|坐标|在)\s*"
        rf"(?P<city>{_alternation(_CITIES_ZH)})市?{_CITY_FOLLOW}(?!的时候)",
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?:住在|定居在|定居于|现居(?:住)?(?:在|于)?|生活在|坐标)\s*(?P<city>[{_CJK}]{{2,4}}?)市?"
        r"(?=[,.;!?。，；！？\s]|$|工作|生活)"
    ),
)
_EN_LOCATION_PATTERNS = (
    re.compile(
        r"\b(?:live|living|lives|based|located|reside|residing|work|working|stay|staying|settled|moved|"
        r"I'm|I am)\b"
        rf"[^.;!?]{{0,60}}?\b(?:in|to)\s+(?P<city>{_alternation(_CITIES_EN)})\b"
    ),
    re.compile(
        r"\b(?:I\s+live|I'm\s+living|I\s+am\s+living|I\s+reside|I'm\s+based|I\s+am\s+based|based|moved)\s+"
        r"(?:in|to)\s+(?P<city>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
    ),
)


def _is_city(name: str) -> bool:
    return name in _CITIES_ZH or name in _CITIES_EN


def _location(ctx: _Ctx) -> ExtractedMemory | None:
    for pattern in (*_ZH_LOCATION_PATTERNS, *_EN_LOCATION_PATTERNS):
        for m in _matches(pattern, ctx, "city", past=True):
            city = m["city"]
            return _fact("currentLocation", city, ctx.say(f"目前在{city}", f"Currently based in {city}"))
    return None


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
            r"\b(?:I'm|I am|I've been|I have been|I got|we're|we are|we got|happily|recently|just got)\s+"
            r"(?:\w+\s+)?married\b|\bmarried\s+with\b|\bmy\s+(?:wife|husband)\b",
            re.IGNORECASE,
        ),
        True,
    ),
)
_MARITAL_LABELS = {"divorced": "离异", "widowed": "丧偶", "single": "未婚", "married": "已婚"}

_ZH_KID = r"(?:孩子|小孩|子女|娃|儿子|女儿|宝宝|男孩|女孩)"
_CHILDREN_NONE = re.compile(
    r"没有?(?:孩子|小孩|子女|娃)|还没(?:有|要|生)?(?:孩子|小孩|娃)|无子女|丁克|没要(?:孩子|小孩)|没生(?:孩子|小孩)"
    r"|\b(?:no|don't have any|do not have any|don't have|do not have|haven't got any|have no)\s+"
    r"(?:kids|children|child)\b"
    r"|\bchildless\b|\bchild-free\b",
    re.IGNORECASE,
)
_CHILDREN_SOME = (
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


def _marital_status(ctx: _Ctx) -> ExtractedMemory | None:
    for code, pattern, check_negation in _MARITAL_PATTERNS:
        for _ in _matches(pattern, ctx, negation=check_negation):
            value = ctx.say(_MARITAL_LABELS[code], code)
            return _fact("maritalStatus", value, ctx.say(value, f"Marital status: {value}"))
    return None


def _has_children(ctx: _Ctx) -> ExtractedMemory | None:
    for _ in _matches(_CHILDREN_NONE, ctx, negation=False):
        return _fact("hasChildren", False, ctx.say("没有孩子", "Has no children"))
    for pattern in _CHILDREN_SOME:
        for m in _matches(pattern, ctx):
            groups = m.groupdict()
            count = 2 if groups.get("pair") else None
            if groups.get("n"):
                count = int(_number(groups["n"]) or 0) or None
            elif groups.get("ge"):
                count = 1  # "有个女儿"
            if count:
                noun = "child" if count == 1 else "children"
                text = ctx.say(f"有{count}个孩子", f"Has {count} {noun}")
                return _fact("hasChildren", True, text, metadata={"count": count})
            return _fact("hasChildren", True, ctx.say("有孩子", "Has children"))
    return None


# --------------------------------------------------------------------------------------
# targetCategory / immigrationTimeline / hasHongKongEmployer
# --------------------------------------------------------------------------------------


def _acronym(word: str) -> str:
    """An acronym not glued to other Latin letters (CJK neighbours are fine: "申请TTPS")."""
    return rf"(?<![A-Za-z]){word}(?![A-Za-z])"


_CATEGORY_ALIASES = {
    "TTPS": r"高才通(?:计划)?|高端人才通行证(?:计划)?|Top\s+Talent\s+Pass(?:\s+Scheme)?(?:\s*\(TTPS\))?|"
    + _acronym("TTPS"),
    "QMAS": r"优才(?:计划)?|优秀人才入境计划|Quality\s+Migrant\s+Admission\s+Scheme(?:\s*\(QMAS\))?|"
    + _acronym("QMAS"),
    "GEP": r"专才(?:计划)?|一般就业政策|输入内地人才计划|General\s+Employment\s+Policy(?:\s*\(GEP\))?|"
    r"Admission\s+Scheme\s+for\s+Mainland\s+Talents(?:\s+and\s+Professionals)?|"
    + _acronym("ASMTP")
    + "|"
    + _acronym("GEP"),
    "IANG": r"非本地毕业生(?:留港/回港就业安排)?|Immigration\s+Arrangements\s+for\s+Non-local\s+Graduates"
    r"(?:\s*\(IANG\))?|" + _acronym("IANG"),
    "CIES": r"新?资本投资者(?:入境计划)?|投资移民"
    r"|(?:New\s+)?Capital\s+Investment\s+Entrant\s+Scheme(?:\s*\(CIES\))?"
    r"|investment\s+(?:migration|immigration)|" + _acronym("CIES"),
    "TECHTAS": r"科技人才(?:入境计划)?|Technology\s+Talent\s+Admission\s+Scheme(?:\s*\(TechTAS\))?|"
    + _acronym("TechTAS"),
}
_CATEGORY = re.compile(
    "(?:" + "|".join(f"(?P<{code}>{alias})" for code, alias in _CATEGORY_ALIASES.items()) + ")"
    r"(?:\s*(?P<cls>[A-C])\s*类|\s+(?:Category|Class|Type)\s+(?P<cls_en>[A-C])\b)?",
    re.IGNORECASE,
)
_CATEGORY_INTEREST = re.compile(
    r"感兴趣|兴趣|想|打算|考虑|倾向|准备|计划|申请|走|办|选|目标|意向|关注|了解|适合|符合|"
    r"\b(?:interest|interested|consider|considering|plan|planning|apply|applying|want|"
    r"looking at|looking into|"
    r"prefer|go for|going for|target|targeting|eligible|qualify|thinking about|aim|aiming)\b",
    re.IGNORECASE,
)
_CATEGORY_REJECTION = re.compile(
    r"不感兴趣|没兴趣|没有兴趣|不考虑|不想|不打算|不适合|不申请|不走|放弃|"
    r"\b(?:not interested|no interest|don't want|do not want|not considering|not planning|not going to|"
    r"rule out|ruled out|won't)\b",
    re.IGNORECASE,
)

_ZH_TIME = (
    r"(?P<time>明年(?:年初|年底|年中|上半年|下半年|初|底)?|今年(?:年底|年内|下半年|内|底)?|后年|年底|年初|年内|下半年|"
    r"上半年|下个月|下个?季度|近期|尽快|尽早|马上|立刻|越快越好|"
    r"(?:\d+|[一二两三四五六七八九十半])\s*个?\s*(?:月|年|周|星期)\s*(?:之内|以内|内)|"
    r"\d{4}\s*年(?:\d{1,2}\s*月)?(?:前|之前|底|初)?)"
)
_ZH_TIMELINE = re.compile(
    r"(?P<intent>打算|计划|准备|希望|想要|想|争取|预计|要)?\s*在?\s*"
    + _ZH_TIME
    + r"\s*(?:就|左右|前后|之前|前)?\s*(?:开始|着手|正式)?\s*"
    r"(?P<action>申请|办理|递交|提交|移民|办|去香港|来香港|赴港|过去|搬过去|搬|递表|拿身份)?"
)
_ZH_URGENT = {"尽快", "尽早", "马上", "立刻", "越快越好"}
_EN_TIME = (
    r"(?P<time>next\s+year|this\s+year|next\s+month|(?:by\s+)?(?:the\s+)?end\s+of\s+(?:this|next)\s+year|"
    r"early\s+next\s+year|later\s+this\s+year|"
    r"within\s+(?:the\s+next\s+)?(?:\d+|a|one|two|three|six|twelve|half\s+a)\s+(?:months?|years?|weeks?)|"
    r"in\s+the\s+next\s+(?:\d+|few|couple\s+of|two|three|six)\s+(?:months?|years?)|as\s+soon\s+as\s+possible|asap|"
    r"(?:in|by)\s+(?:early\s+|late\s+|mid-?)?20\d{2}|right\s+away|immediately)"
)
_EN_ACTIONS = {
    "apply": "apply", "applying": "apply", "submit": "submit", "submitting": "submit", "move": "move",
    "moving": "move", "relocate": "relocate", "relocating": "relocate", "immigrate": "immigrate",
    "immigrating": "immigrate", "do it": "apply", "get it done": "apply",
}
_EN_TIMELINE = re.compile(
    r"\b(?P<action>apply|applying|submit|submitting|move|moving|relocate|relocating|immigrate|immigrating|"
    rf"do it|get it done)\b[^.;!?]{{0,40}}?\b{_EN_TIME}\b",
    re.IGNORECASE,
)

_HK = r"(?:香港|港)(?:的|本地)?\s*"
_HK_EMPLOYER_NONE = re.compile(
    rf"(?:没有|没|还没有?|暂无|暂时没有|无)\s*(?:拿到|收到)?\s*{_HK}(?:公司的?)?\s*"
    r"(?:雇主|offer|工作offer|job offer|工作机会)"
    r"|\b(?:no|don't have an?|do not have an?|haven't got an?|without an?)\s+(?:Hong Kong|HK)(?:-based)?\s+"
    r"(?:employer|job offer|offer|job)\b",
    re.IGNORECASE,
)
_HK_EMPLOYER_SOME = re.compile(
    rf"有\s*(?:一[个份]|个)?\s*{_HK}(?:公司的?)?\s*(?:雇主|offer|工作offer|job offer)"
    rf"|(?:拿到|收到|获得)了?\s*(?:一[个份])?\s*{_HK}(?:公司的?)?\s*(?:offer|工作|职位|雇主)"
    r"|香港雇主(?:已经)?(?:愿意|同意|给)"
    r"|\b(?:have|got|received|'ve got|has)\s+(?:an?\s+)?(?:job\s+)?offer\s+(?:from|in|with)\s+"
    r"(?:an?\s+)?(?:Hong Kong|HK)\b"
    r"|\b(?:have|'ve got|got)\s+an?\s+(?:Hong Kong|HK)(?:-based)?\s+(?:employer|job offer|offer|job)\b"
    r"|\bmy\s+(?:Hong Kong|HK)\s+employer\b",
    re.IGNORECASE,
)


def _target_category(ctx: _Ctx) -> ExtractedMemory | None:
    wanted: list[tuple[str, re.Match[str]]] = []
    for m in _CATEGORY.finditer(ctx.text):
        clause = _clause_around(ctx.text, m.start(), m.end())
        if _CATEGORY_INTEREST.search(clause) and not _CATEGORY_REJECTION.search(clause):
            code = next(name for name in _CATEGORY_ALIASES if m[name])
            wanted.append((code, m))
    if not wanted:
        return None
    code, m = wanted[0]
    phrase = m.group(0).strip()
    metadata: dict[str, Any] = {}
    if m["cls"] or m["cls_en"]:
        metadata["subclass"] = (m["cls"] or m["cls_en"]).upper()
    others = sorted({other for other, _ in wanted} - {code})
    if others:
        metadata["also_interested_in"] = others
    return _intent(
        "targetCategory",
        code,
        ctx.say(f"对{phrase}感兴趣", f"Interested in {phrase}"),
        category=code,
        metadata=metadata,
    )


def _timeline(ctx: _Ctx) -> ExtractedMemory | None:
    for m in _matches(_ZH_TIMELINE, ctx, "time", future=False):
        time = re.sub(r"\s+", "", m["time"]).replace("之内", "内").replace("以内", "内")
        urgent = time in _ZH_URGENT
        at_clause_end = not ctx.text[m.end() :].strip() or ctx.text[m.end()] in ",.;!?。，；！？吧"
        if not (m["action"] or (m["intent"] and (urgent or at_clause_end)) or time == "越快越好"):
            continue
        value = "尽快" if urgent else time
        action = m["action"] or "申请"
        return _intent(
            "immigrationTimeline", value, ctx.say(f"计划{value}{action}", f"Plans to {action} {value}")
        )
    for m in _matches(_EN_TIMELINE, ctx, "action", future=False):
        time = re.sub(r"\s+", " ", m["time"].lower())
        value = "as soon as possible" if time == "asap" else time
        action = _EN_ACTIONS[re.sub(r"\s+", " ", m["action"].lower())]
        return _intent(
            "immigrationTimeline", value, ctx.say(f"计划{value}申请", f"Plans to {action} {value}")
        )
    return None


def _hk_employer(ctx: _Ctx) -> ExtractedMemory | None:
    for _ in _matches(_HK_EMPLOYER_NONE, ctx, negation=False, future=False):
        return _fact("hasHongKongEmployer", False, ctx.say("没有香港雇主", "Has no Hong Kong employer"))
    for _ in _matches(_HK_EMPLOYER_SOME, ctx):
        return _fact("hasHongKongEmployer", True, ctx.say("有香港雇主", "Has a Hong Kong employer"))
    return None


# --------------------------------------------------------------------------------------
# The extractor
# --------------------------------------------------------------------------------------

# One rule per profile field (the seed's field names), in the order memories are reported.
_FIELD_RULES: tuple[Callable[[_Ctx], ExtractedMemory | None], ...] = (
    _age,
    _education,
    _university,
    _major,
    _job_title,
    _company,
    _industry,
    _years_of_experience,
    _annual_income,
    _location,
    _marital_status,
    _has_children,
    _target_category,
    _timeline,
    _hk_employer,
    _investment_amount,
)


class OfflineExtractor:
    """Deterministic regex/dictionary extractor: the MemoryExtractor used without an LLM.

    Reads only `turn.user_message` (the assistant's reply is not the user's statement) and
    returns at most one memory per field. It does not filter `turn.existing_info`: the caller
    skips known fields and reports them as skipped.
    """

    def extract(self, turn: ConversationTurn) -> list[ExtractedMemory]:
        text = unicodedata.normalize("NFKC", turn.user_message or "").strip()
        if not text:
            return []
        ctx = _Ctx(text=text, zh=is_cjk_text(turn.user_message))
        return [memory for rule in _FIELD_RULES if (memory := rule(ctx)) is not None]
