"""Personal facts: age, nationality, language skills, name and the name to be called by, birthday, allergies."""

from __future__ import annotations

import re
from typing import Any

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.grammar import CJK, Utterance, alternation, clause_around, fact, matches, stated
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
_ZH_AGE_THIS_YEAR = re.compile(r"今年\s*(?P<num>[1-9]\d)\s*(?:了|啦)")
_EN_AGE_TERSE = re.compile(r"\b(?:I'?m|I am)\s+(?:\w+\s+and\s+)?(?P<num>[1-9]\d)\b(?![\s-]*(?:%|k\b|years? of|million))",
                           re.IGNORECASE)
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
_EN_AGE_LABEL = re.compile(r"\b(?:my age is|I'm aged|I am aged|aged|I (?:just |recently )?turned)\s+(?P<num>\d{1,2})\b",
                           re.IGNORECASE)
_EN_DECADES = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60}
_EN_AGE_DECADE = re.compile(
    r"\b(?:I'm|I am|I’m)\s+(?:now\s+|still\s+)?in\s+my\s+(?:early\s+|mid\s+|mid-|late\s+)?(?P<decade>twenties|thirties|forties|fifties|sixties|[2-6]0'?s)\b"
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
    for pattern in (_ZH_AGE_LABEL, _ZH_AGE_THIS_YEAR, _EN_AGE, _EN_AGE_OLD, _EN_AGE_LABEL, _EN_AGE_TERSE):
        for m in matches(pattern, ctx, "num"):
            n = _age_number(m["num"])
            if n is not None:
                return _age_memory(ctx, n)
    for m in matches(_EN_AGE_DECADE, ctx):
        word = (m["decade"] or m["decade2"]).lower()
        decade = _EN_DECADES.get(word) or EN_TENS.get(word) or int(word[:2])
        return _age_memory(ctx, f"{decade}+")
    return None


# --------------------------------------------------------------------------------------
# nationality
# --------------------------------------------------------------------------------------

# Country -> (Chinese name, English name, English demonym).
COUNTRIES = {
    "CN": ("中国", "China", "Chinese"), "HK": ("中国香港", "Hong Kong", "Hongkonger"),
    "TW": ("中国台湾", "Taiwan", "Taiwanese"), "US": ("美国", "the United States", "American"),
    "GB": ("英国", "the United Kingdom", "British"), "CA": ("加拿大", "Canada", "Canadian"),
    "AU": ("澳大利亚", "Australia", "Australian"), "NZ": ("新西兰", "New Zealand", "New Zealander"),
    "DE": ("德国", "Germany", "German"), "FR": ("法国", "France", "French"), "IT": ("意大利", "Italy", "Italian"),
    "ES": ("西班牙", "Spain", "Spanish"), "NL": ("荷兰", "the Netherlands", "Dutch"),
    "IE": ("爱尔兰", "Ireland", "Irish"), "CH": ("瑞士", "Switzerland", "Swiss"),
    "SE": ("瑞典", "Sweden", "Swedish"), "JP": ("日本", "Japan", "Japanese"), "KR": ("韩国", "South Korea", "Korean"),
    "SG": ("新加坡", "Singapore", "Singaporean"), "MY": ("马来西亚", "Malaysia", "Malaysian"),
    "IN": ("印度", "India", "Indian"), "PH": ("菲律宾", "the Philippines", "Filipino"),
    "VN": ("越南", "Vietnam", "Vietnamese"), "TH": ("泰国", "Thailand", "Thai"),
    "ID": ("印度尼西亚", "Indonesia", "Indonesian"), "RU": ("俄罗斯", "Russia", "Russian"),
    "BR": ("巴西", "Brazil", "Brazilian"), "MX": ("墨西哥", "Mexico", "Mexican"),
    "PK": ("巴基斯坦", "Pakistan", "Pakistani"), "NG": ("尼日利亚", "Nigeria", "Nigerian"),
    "ZA": ("南非", "South Africa", "South African"), "PL": ("波兰", "Poland", "Polish"),
    "UA": ("乌克兰", "Ukraine", "Ukrainian"), "TR": ("土耳其", "Turkey", "Turkish"),
}
_ZH_COUNTRY = {zh: code for code, (zh, _, _) in COUNTRIES.items()} | {"大陆": "CN", "内地": "CN", "香港": "HK"}
_EN_COUNTRY = {en.removeprefix("the "): code for code, (_, en, _) in COUNTRIES.items()} | {
    "the UK": "GB", "UK": "GB", "Britain": "GB", "England": "GB", "the US": "US", "USA": "US", "the USA": "US",
    "America": "US", "Korea": "KR", "mainland China": "CN", "Holland": "NL",
}
_EN_DEMONYM = {demonym: code for code, (_, _, demonym) in COUNTRIES.items()} | {"English": "GB"}
_ZH_NATIONALITY = re.compile(
    rf"(?:国籍(?:是|为|:)?\s*(?P<c1>{alternation(_ZH_COUNTRY)})"
    rf"|(?P<c2>{alternation(_ZH_COUNTRY)})(?:国籍|公民|护照|籍)"
    rf"|我是\s*(?P<c3>{alternation(_ZH_COUNTRY)})人"
    rf"|(?:持|拿)(?:有|的是)?\s*(?P<c4>{alternation(_ZH_COUNTRY)})护照)"
)
_EN_NATIONALITY = re.compile(
    rf"\bI(?:'m| am)\s+(?:originally\s+)?from\s+(?P<c1>{alternation(_EN_COUNTRY)})\b"
    rf"|\b(?:my\s+)?nationality\s+is\s+(?P<c2>{alternation(_EN_COUNTRY | _EN_DEMONYM)})\b"
    rf"|\bI(?:'m| am)\s+(?:an?\s+)?(?P<c3>{alternation(_EN_DEMONYM)})\s+(?:citizen|national|passport holder)\b"
    rf"|\bI(?:'m| am)\s+(?:an?\s+)?(?P<c4>{alternation(_EN_DEMONYM)})(?=\s*(?:[,.;!?]|$|\band\b|\bby\b|\bbut\b|working|living|"
    r"based|here))"
    rf"|\b(?P<c7>{alternation(_EN_DEMONYM)})\s+(?:passport\s+holder|citizen|national)\b"
    rf"|\bI\s+(?:hold|have)\s+an?\s+(?P<c5>{alternation(_EN_DEMONYM)})\s+passport\b"
    rf"|\bcitizen\s+of\s+(?P<c6>{alternation(_EN_COUNTRY)})\b"
)


def nationality(ctx: Utterance) -> ExtractedMemory | None:
    for pattern, names in ((_ZH_NATIONALITY, _ZH_COUNTRY), (_EN_NATIONALITY, _EN_COUNTRY | _EN_DEMONYM)):
        for m in pattern.finditer(ctx.text):
            group = next(name for name, value in m.groupdict().items() if value)
            if not stated(ctx, m.start(group), past=True):
                continue
            zh, en, _ = COUNTRIES[names[m[group]]]
            country = ctx.say(zh, en.removeprefix("the "))
            return fact("nationality", country, ctx.say(f"国籍：{country}", f"Nationality: {country}"))
    return None


# --------------------------------------------------------------------------------------
# languageSkills
# --------------------------------------------------------------------------------------

_LANGUAGES_ZH = "英语|英文|粤语|广东话|普通话|国语|中文|日语|日文|韩语|法语|德语|西班牙语|马来语"
_LANGUAGES_EN = "English|Cantonese|Mandarin|Chinese|Japanese|Korean|French|German|Spanish|Italian|Portuguese|Hindi"
_LEVEL_ZH = (
    "不太好|不好|不太行|不行|很差|比较差|差|很烂|烂|流利|很流利|非常流利|熟练|很好|好|不错|还行|还可以|可以|凑合|马马虎虎|"
    "过得去|够用|一般般|一般|很一般|很溜|溜|母语水平|母语|精通|日常交流没问题|可以日常交流"
)
_LEVEL_EN = (
    "fluent|good|very good|excellent|decent|basic|native|okay|ok|fine|alright|so-so|rusty|passable|limited|poor|"
    "weak|not great|not bad|strong|solid|intermediate|advanced|conversational|broken"
)
_ZH_LANGUAGE = re.compile(
    rf"(?P<skill>(?:{_LANGUAGES_ZH})(?:水平|口语)?(?:说得|讲得|说的|讲的)?(?:很|非常|还|比较|挺|蛮|算|特别)?(?:{_LEVEL_ZH})"
    rf"|不?(?:会说|能说|会讲|能讲|精通)(?:{_LANGUAGES_ZH})"
    r"|英语(?:四级|六级|专四|专八)|CET-?[46])",
    re.IGNORECASE,
)
_EN_LANGUAGE = re.compile(
    rf"(?P<skill>\b(?:fluent|native|proficient|conversational|bilingual)\s+in\s+(?:{_LANGUAGES_EN})"
    rf"(?:\s+and\s+(?:{_LANGUAGES_EN}))?"
    rf"|\bI\s+speak\s+(?:fluent\s+|native\s+|good\s+|basic\s+|some\s+)?(?:{_LANGUAGES_EN})"
    rf"(?:(?:,\s*|\s+and\s+)(?:{_LANGUAGES_EN}))*"
    rf"|\bnative\s+(?:{_LANGUAGES_EN})\s+speaker"
    rf"|\b(?:{_LANGUAGES_EN})\s+is\s+my\s+(?:native|first|mother)\s+(?:language|tongue)"
    rf"|\b(?:can|could)\s+hold\s+a\s+conversation\s+in\s+(?:{_LANGUAGES_EN}))",
    re.IGNORECASE,
)
# "My Cantonese is pretty basic" is kept as "basic Cantonese".
_EN_LANGUAGE_IS = re.compile(
    rf"\bmy\s+(?P<language>{_LANGUAGES_EN})\s+is\s+(?:pretty\s+|quite\s+|fairly\s+|really\s+|very\s+|still\s+|a\s+bit\s+|"
    rf"kind\s+of\s+)?(?P<level>{_LEVEL_EN})\b",
    re.IGNORECASE,
)
_SCORE = r"(?:\d{2,3}|\d(?:\.\d)?)(?![\d.])"
# Test scores, kept as test and score ("雅思考过7分" -> "雅思7分", "I scored 110 on the TOEFL" -> "TOEFL 110").
_ZH_TEST_SCORE = re.compile(
    rf"(?P<test>雅思|托福|IELTS|TOEFL)(?:\s*总分)?(?:\s*(?:考了|考过|考到|是|:))?\s*(?P<score>{_SCORE})(?:\s*(?P<unit>分))?"
    r"|(?P<test2>日语|日文)(?:\s*JLPT)?(?:\s*(?:考过|过了|有))?\s*(?P<score2>N[1-5])\b",
    re.IGNORECASE,
)
_EN_TEST_SCORE = re.compile(
    rf"\b(?P<test>IELTS|TOEFL)\s+(?:score\s+)?(?:of\s+|is\s+|was\s+)?(?P<score>{_SCORE})"
    rf"|\b(?:scored|got)\s+(?:an?\s+)?(?P<score2>{_SCORE})\s+(?:on|in|for)\s+(?:the\s+|my\s+)?(?P<test2>IELTS|TOEFL)\b"
    r"|\bJLPT\s+(?P<score3>N[1-5])\b",
    re.IGNORECASE,
)


def _language_mentions(ctx: Utterance) -> list[tuple[int, int, str]]:
    """Each statement of the user's language skills: (start, end, how it is kept)."""
    found: list[tuple[int, int, str]] = []
    for pattern in (_ZH_LANGUAGE, _EN_LANGUAGE):  # "英语不太好" is a level, not a negation
        found += [(m.start(), m.end(), m["skill"]) for m in matches(pattern, ctx, "skill", negation=False)]
    found += [(m.start(), m.end(), f"{m['level']} {m['language']}")
              for m in matches(_EN_LANGUAGE_IS, ctx, negation=False)]
    for m in matches(_ZH_TEST_SCORE, ctx, negation=False):
        found.append((m.start(), m.end(), f"{m['test']}{m['score']}{m['unit'] or ''}" if m["test"]
                      else f"{m['test2']}{m['score2'].upper()}"))
    for m in matches(_EN_TEST_SCORE, ctx, negation=False):
        test = (m["test"] or m["test2"] or "JLPT").upper()
        found.append((m.start(), m.end(), f"{test} {m['score'] or m['score2'] or m['score3'].upper()}"))
    return found


def language_skills(ctx: Utterance) -> ExtractedMemory | None:
    kept: list[tuple[int, int, str]] = []
    for start, end, skill in sorted(_language_mentions(ctx)):
        if not kept or start >= kept[-1][1]:  # overlapping readings of the same words count once
            kept.append((start, end, re.sub(r"\s+", " ", skill).strip()))
    if not kept:
        return None
    skills = ctx.say("，", ", ").join(skill for _, _, skill in kept)
    return fact("languageSkills", skills, ctx.say(f"语言能力：{skills}", f"Language skills: {skills}"))


# --------------------------------------------------------------------------------------
# name, birthday, allergies
# --------------------------------------------------------------------------------------

_EN_NAME = re.compile(
    r"\b(?i:my name is|my name's|I'm called|I am called)\s+"
    r"(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
)
_ZH_NAME = re.compile(rf"我(?:的名字)?(?:叫|是叫|名字是|的名字是)\s*(?P<name>[{CJK}]{{2,4}}|[A-Z][a-z]+)")
# Not names: "call me back", "我叫外卖".
_NOT_A_NAME = re.compile(
    r"^(?:Back|Later|Tomorrow|Anytime|When|If|Maybe|Now|Tonight|Today|Monday|Tuesday|Wednesday|Thursday|Friday|"
    r"Saturday|Sunday)$|外卖|车|人|醒",
    re.IGNORECASE,
)
# How the user asks to be addressed: "叫我小王就行", "大家都叫我老陈", "just call me Wang", "I go by Alex".
# A Chinese name is asked for with 就行/就好/吧 after it ("叫我起床" is a request); words that open a request
# ("叫我去开会吧") are no names.
_ZH_NAME_WORD = rf"(?![去来起吃回上下出进过帮做等别一])(?:[{CJK}]{{2,4}}?|[A-Z][A-Za-z]+)"
_ZH_PREFERRED_NAME = re.compile(
    rf"(?:叫|称呼|喊)我\s*(?P<name>{_ZH_NAME_WORD})\s*(?:就行|就好|就可以|就成|即可|好了|吧)"
    rf"|(?:大家|朋友们?|同事们?|身边的人|别人)(?:一般|平时|通常)?都?(?:叫|喊|称呼)我\s*(?P<name2>{_ZH_NAME_WORD})"
    r"(?=[,，。.!！\s]|$)"
)
_EN_PREFERRED_NAME = re.compile(
    r"\b(?i:call\s+me)\s+(?P<name>[A-Z][\w'-]*)"
    r"|\b(?i:everyone|everybody|people|most\s+people|friends|my\s+friends)\s+(?i:(?:just|usually|all|generally|mostly)\s+)?"
    r"(?i:calls?)\s+me\s+(?P<name2>[A-Z][\w'-]*)"
    r"|\bI\s+(?i:(?:usually|generally|mostly|just)\s+)?(?i:go)\s+by\s+(?P<name3>[A-Z][\w'-]*)"
)


def name(ctx: Utterance) -> ExtractedMemory | None:
    for pattern in (_ZH_NAME, _EN_NAME):
        for m in matches(pattern, ctx, future=False):
            value = m["name"].strip()
            if _NOT_A_NAME.search(value):
                continue
            return fact("name", value, ctx.say(f"姓名：{value}", f"Name: {value}"))
    return None


def preferred_name(ctx: Utterance) -> ExtractedMemory | None:
    """A nickname the user asks to be called by: how to address them, not their name."""
    for pattern in (_ZH_PREFERRED_NAME, _EN_PREFERRED_NAME):
        for m in matches(pattern, ctx, future=False, other=False):  # "你叫我阿杰就好" addresses the assistant
            value = next(v for v in m.groupdict().values() if v).strip()
            if _NOT_A_NAME.search(value):
                continue
            return ExtractedMemory(memory_type=MemoryType.PREFERENCE, field="preferredName", value=value,
                                   content=ctx.say(f"希望被称呼为{value}", f"Prefers to be called {value}"))
    return None


_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
           "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
_EN_BIRTHDAY = re.compile(
    r"\b(?:my birthday is|my birthday's|I was born on|I was born)\s+(?:on\s+)?"
    rf"(?P<date>(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})(?:,?\s+\d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}})",
    re.IGNORECASE,
)
_ZH_BIRTHDAY = re.compile(
    r"我的?生日(?:是|在)?\s*(?P<date>(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]|\d{4}-\d{2}-\d{2})"
    r"|我(?:是)?(?P<date2>(?:\d{4}年)?\d{1,2}月\d{1,2}[日号])(?:出生|生)的?"
)


def birthday(ctx: Utterance) -> ExtractedMemory | None:
    for pattern in (_ZH_BIRTHDAY, _EN_BIRTHDAY):
        for m in matches(pattern, ctx, future=False):
            value = (m.groupdict().get("date") or m.groupdict().get("date2") or "").strip()
            if value:
                return fact("birthday", value, ctx.say(f"生日：{value}", f"Birthday: {value}"))
    return None


_EN_ALLERGY = re.compile(
    r"\bI(?:'m| am)\s+(?:very\s+|severely\s+|quite\s+)?allergic to\s+(?P<what>[A-Za-z][A-Za-z -]{1,30}?)(?=\s*(?:[,.;!?]|$|\band\b))"
    r"|\bI have an?\s+(?P<what2>[A-Za-z][A-Za-z -]{1,30}?)\s+allergy\b",
    re.IGNORECASE,
)
_ZH_ALLERGY = re.compile(rf"我对\s*(?P<what>[{CJK}A-Za-z]{{1,10}}?)\s*过敏")


def allergy(ctx: Utterance) -> ExtractedMemory | None:
    """An allergy is a fact of its own: a second one does not replace the first (the field is no slot)."""
    for pattern in (_ZH_ALLERGY, _EN_ALLERGY):
        for m in matches(pattern, ctx, negation=True, future=False):
            value = (m.groupdict().get("what") or m.groupdict().get("what2") or "").strip()
            if value:
                return fact("allergy", value, ctx.say(f"对{value}过敏", f"Allergic to {value}"))
    return None
