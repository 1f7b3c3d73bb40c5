"""Near-duplicate memories: when a new memory restates a current one, and which one it restates. Pure rules.

Two memories are near-duplicates when they say the same thing in nearly the same words, not merely about the same
topic: of the same type, the overlap (Jaccard) of their compared terms at least `min_overlap`, their embeddings'
cosine at least `min_cosine` (when that is above 0), and nothing the guards tell apart. The compared terms are the
search analyser's (`text.tokenize`: stemmed Latin words, CJK bigrams) of the text without what does not change a
statement: its subject ("用户", "我", "I'm", "his"), a sentence's closing particle ("呢", "了", "吧"), contractions
("doesn't" = "does not"), dotted acronyms ("U.S." = "US") and spelled-out numbers ("two" = "2"). The guards: the
same numbers, months and weekdays ("用户35岁" / "用户36岁", "in March" / "in April", "周五" / "周一"), the same
negations ("喜欢喝咖啡" / "不喜欢喝咖啡"), the same people by their relation ("his wife" / "his son", 父亲 / 母亲)
and the same names, in the same order ("Tencent" / "Alibaba", "from Beijing to Shanghai" / "from Shanghai to
Beijing", 王先生 / 李先生).

The defaults were chosen by cross-validation on labelled pairs (tests/data/near_duplicates.jsonl;
`make bench-duplicates`). With the bundled embedder the cosine separates nothing the words do not: restatements
and distinct pairs overlap in cosine (hard non-duplicates such as "international school" / "local school" or
"产品经理" / "技术经理" sit at 0.98-0.99, as high as the median restatement, 0.987), so every floor costs
recall and none buys precision: its default is 0, and the words decide.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from agent_memory.domain.models import MemoryType
from agent_memory.domain.text.text import CJK_IDEOGRAPHS, tokenize

# The source of memories extraction found in a conversation turn (services/save.py writes it), and the default
# of a memory a caller saves with a conversation id.
EXTRACTED_SOURCE = "conversation"
# The source a caller states for a verbatim turn of a conversation transcript: a record of what was said, not a
# memory distilled from it.
TRANSCRIPT_SOURCE = "transcript"

# Defaults of MEMORY_DEDUP_MIN_COSINE and MEMORY_DEDUP_MIN_OVERLAP, chosen by `make bench-duplicates`.
DEFAULT_MIN_COSINE = 0.0
DEFAULT_MIN_OVERLAP = 0.8


@dataclass(frozen=True)
class DuplicateRule:
    """The thresholds. A cosine of 0 leaves the embeddings out (the words decide); both 0: nothing is a
    near-duplicate (only identical content is recognised, by the store)."""

    min_cosine: float = DEFAULT_MIN_COSINE
    min_overlap: float = DEFAULT_MIN_OVERLAP

    @property
    def enabled(self) -> bool:
        return self.min_cosine > 0 or self.min_overlap > 0


class Stated(Protocol):
    """What two memories are compared by: what kind of thing each says, and its words."""

    @property
    def memory_type(self) -> MemoryType: ...

    @property
    def content(self) -> str: ...


class Statement(Stated, Protocol):
    """What a save's rules read of a memory, stored (`Memory`) or proposed (`NewMemory`)."""

    @property
    def field(self) -> str | None: ...

    @property
    def conversation_id(self) -> str | None: ...

    @property
    def source(self) -> str: ...


def restates(rule: DuplicateRule, first: str, second: str, cosine: float | None) -> bool:
    """Whether two texts say the same thing in nearly the same words. `cosine`: of their embeddings (None when
    they have no comparable ones: then, unless the rule leaves the cosine out, they are not near-duplicates)."""
    if not rule.enabled:
        return False
    if rule.min_cosine > 0 and (cosine is None or cosine < rule.min_cosine):
        return False
    return (overlap(first, second) >= rule.min_overlap and _numbers(first) == _numbers(second)
            and _negations(first) == _negations(second) and _people(first) == _people(second)
            and _named(first, second))


def near_duplicates(rule: DuplicateRule, first: Stated, second: Stated, cosine: float | None) -> bool:
    return first.memory_type is second.memory_type and restates(rule, first.content, second.content, cosine)


def is_transcript_turn(memory: Statement) -> bool:
    """A turn of a conversation transcript, as its caller said (`source: transcript`); a conversation id alone
    says only where a memory came from."""
    return memory.source == TRANSCRIPT_SOURCE


def merge_choice(rule: DuplicateRule, new: Statement, candidates: Sequence[tuple[Statement, float | None]]
                 ) -> int | None:
    """The index of the candidate (a current memory, with its embeddings' cosine to `new`) that a save of `new`
    restates, the nearest if several; None when `new` is to be stored.

    - Transcript turns are records of what was said in one conversation. A turn merges only into a turn of the same
      conversation (a client logging the chat again): "Thanks!" said in two sessions is two records, and a turn
      merged into a memory outside its conversation would leave a gap in that conversation's transcript (its
      search neighbours, its context). For the same reason no other memory merges into a turn.
    - A save that names a field is that field's newest value. It merges into the field's current memory, or into a
      memory without a field; never into another field's, and not at all when a candidate holds its field with
      something it does not restate: the save then supersedes that value, which must not stay current.
    The kept memory stays as it is (its field, importance, keywords, time): the save added nothing it did not say.
    """
    restated = [near_duplicates(rule, new, old, cosine) and _same_record(new, old) for old, cosine in candidates]
    if new.field and any(old.field == new.field and not ok for (old, _), ok in zip(candidates, restated, strict=True)):
        return None
    allowed = [i for i, ((old, _), ok) in enumerate(zip(candidates, restated, strict=True))
               if ok and (not new.field or old.field in (None, new.field))]
    if not allowed:
        return None
    return max(allowed, key=lambda i: (candidates[i][1] or 0.0, -i))


def _same_record(new: Statement, old: Statement) -> bool:
    new_turn, old_turn = is_transcript_turn(new), is_transcript_turn(old)
    if new_turn or old_turn:
        return new_turn and old_turn and new.conversation_id == old.conversation_id
    return True


def overlap(first: str, second: str) -> float:
    """Jaccard of the two texts' compared terms (0 when neither has any)."""
    a, b = compared_terms(first), compared_terms(second)
    union = a | b
    return len(a & b) / len(union) if union else 0.0


# ---- what a statement's words are compared by ------------------------------------------------------------------

_CONTRACTIONS = ((re.compile(r"\bwon't\b"), "will not"), (re.compile(r"\bcan't\b|\bcannot\b"), "can not"),
                 (re.compile(r"\bshan't\b"), "shall not"), (re.compile(r"n't\b"), " not"),
                 (re.compile(r"\bi'm\b"), "i am"), (re.compile(r"'ve\b"), " have"), (re.compile(r"'ll\b"), " will"),
                 (re.compile(r"'re\b"), " are"), (re.compile(r"\bi'd\b"), "i would"))
_CJK_SUBJECT = re.compile(r"(?:用户|本人|我)(?:的)?")
# A particle closing a sentence (before its punctuation or at the end) changes its tone, not what it says.
_CLOSING_PARTICLES = re.compile(r"[了呢啊吧呀哦啦嘛哈的]+(?=[\s。！？!?；;，,.…~～]*(?:[。！？!?；;，,.\n]|$))")
_OWNER_WORDS = frozenset({"his", "her", "their", "mine", "myself"})
_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
          "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
          "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
          "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12, "first": "1st", "second": "2nd",
          "third": "3rd", "fourth": "4th", "fifth": "5th"}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_UNITS) + r")\b")
_DOTTED_ACRONYM = re.compile(r"\b(?:[a-z]\.){2,}")


def _folded(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    folded = _DOTTED_ACRONYM.sub(lambda m: m.group(0).replace(".", ""), folded)  # U.S. = US
    for pattern, replacement in _CONTRACTIONS:
        folded = pattern.sub(replacement, folded)
    return folded


@lru_cache(maxsize=4096)
def compared_terms(text: str) -> frozenset[str]:
    """The analysed terms of a text without its subject, closing particles and spelled-out numbers' spelling."""
    folded = _CLOSING_PARTICLES.sub("", _CJK_SUBJECT.sub("", _folded(text)))
    folded = _NUMBER_WORD.sub(lambda m: str(_UNITS[m.group(1)]), folded)
    folded = _CJK_NUMBER.sub(lambda m: m.group(0) if m.group(1) else f" {_canonical(_cjk_value(m.group(0)))} ", folded)
    return frozenset(t for t in tokenize(folded) if t not in _OWNER_WORDS)


# ---- the guards: numbers (and dates), negations, people and names --------------------

_DIGITS = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_CJK_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")
# Words that hold a numeral character without stating a number ("一直" = always, "十分" = very, "万一" = in case).
_CJK_NUMERAL_WORDS = re.compile("|".join((
    "一直", "一起", "一样", "一定", "一些", "一般", "一切", "一向", "一旦", "一再", "一下", "唯一", "统一", "万一",
    "十分", "千万", "一点儿")))
# A numeral as a number (三十五 = 35), or as part of such a word (group 1).
_CJK_NUMBER = re.compile(f"({_CJK_NUMERAL_WORDS.pattern})|{_CJK_NUMERAL.pattern}")
_CJK_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
               "九": 9}
_CJK_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_CJK_LARGE_UNITS = {"万": 10_000, "亿": 100_000_000}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DATE_WORD = re.compile(r"\b(" + "|".join(_MONTHS + _WEEKDAYS) + r")\b", re.IGNORECASE)
_NEGATION_WORDS = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without)\b")
_CJK_NEGATION = re.compile(r"[不没未无非别勿莫]")
# Words that hold a negation character without negating ("非常" = very, "未来" = future, "特别" = especially).
_CJK_NEGATION_WORDS = re.compile("|".join((
    "非常", "未来", "特别", "别人", "区别", "分别", "性别", "类别", "级别", "无论", "不过", "不错", "不同", "不断",
    "不少", "无锡", "非洲")))


@lru_cache(maxsize=4096)
def _numbers(text: str) -> tuple[str, ...]:
    """The numbers a text states, in any spelling ("8" = "eight", "三十五" = "35", "800,000"), and its months and
    weekdays ("May" only capitalised: "may" is mostly the verb), as a sorted multiset."""
    found = [word.casefold() for word in _DATE_WORD.findall(text) if word.casefold() != "may" or word == "May"]
    folded = _NUMBER_WORD.sub(lambda m: f" {_UNITS[m.group(1)]} ", _folded(text))
    for match in _DIGITS.finditer(folded):
        found.append(_canonical(float(match.group(0).replace(",", ""))))
    found.extend(_canonical(_cjk_value(m.group(0))) for m in _CJK_NUMBER.finditer(folded) if not m.group(1))
    return tuple(sorted(found))


def _canonical(value: float) -> str:
    return format(value, "g") if value != int(value) else str(int(value))


def _cjk_value(numeral: str) -> float:
    """三十五 = 35, 八百万 = 8,000,000, 两 = 2, 二〇二六 = 2026 (digit by digit when there is no unit)."""
    if not any(ch in _CJK_SMALL_UNITS or ch in _CJK_LARGE_UNITS for ch in numeral):
        return float("".join(str(_CJK_DIGITS[ch]) for ch in numeral))
    total, section, digit = 0, 0, 0
    for ch in numeral:
        if ch in _CJK_DIGITS:
            digit = _CJK_DIGITS[ch]
        elif ch in _CJK_SMALL_UNITS:
            section += (digit or 1) * _CJK_SMALL_UNITS[ch]
            digit = 0
        else:
            total = (total + section + digit) * _CJK_LARGE_UNITS[ch]
            section = digit = 0
    return float(total + section + digit)


@lru_cache(maxsize=4096)
def _negations(text: str) -> tuple[str, ...]:
    """The negations a text holds ("not", "never", 不, 没), as a sorted multiset."""
    folded = _folded(text)
    found = _NEGATION_WORDS.findall(folded) + _CJK_NEGATION.findall(_CJK_NEGATION_WORDS.sub(" ", folded))
    return tuple(sorted(found))


_PEOPLE = {"wife": "wife", "wives": "wife", "husband": "husband", "spouse": "spouse", "partner": "partner",
           "son": "son", "sons": "son", "daughter": "daughter", "daughters": "daughter", "child": "child",
           "children": "child", "kid": "kid", "kids": "kid", "baby": "baby", "father": "father", "dad": "father",
           "mother": "mother", "mom": "mother", "mum": "mother", "parent": "parent", "parents": "parent",
           "brother": "brother", "brothers": "brother", "sister": "sister", "sisters": "sister",
           "grandfather": "grandfather", "grandmother": "grandmother", "grandparents": "grandparent",
           "grandson": "grandson", "granddaughter": "granddaughter", "uncle": "uncle", "aunt": "aunt",
           "cousin": "cousin", "nephew": "nephew", "niece": "niece", "boyfriend": "boyfriend",
           "girlfriend": "girlfriend", "fiance": "fiance", "fiancee": "fiancee", "colleague": "colleague",
           "boss": "boss", "friend": "friend", "friends": "friend", "in-laws": "in-laws"}
_PEOPLE_WORD = re.compile(r"\b(" + "|".join(sorted(_PEOPLE, key=len, reverse=True)) + r")\b")
# Longest first: 岳父母 is not 父母, 女朋友 is not 朋友.
_CJK_PEOPLE = re.compile("|".join(sorted((
    "太太", "妻子", "老婆", "爱人", "丈夫", "老公", "儿子", "女儿", "孩子", "小孩", "宝宝", "父亲", "爸爸", "母亲",
    "妈妈", "父母", "岳父母", "岳父", "岳母", "公婆", "公公", "婆婆", "哥哥", "姐姐", "弟弟", "妹妹", "兄弟", "姐妹",
    "爷爷", "奶奶", "外公", "外婆", "孙子", "孙女", "男朋友", "女朋友", "未婚夫", "未婚妻", "同事", "老板", "朋友"),
    key=len, reverse=True)))


@lru_cache(maxsize=4096)
def _people(text: str) -> frozenset[str]:
    """Who a text names by their relation to the user (wife, 儿子, parents): "his wife" is not "his son"."""
    folded = _folded(text)
    return frozenset([_PEOPLE[word] for word in _PEOPLE_WORD.findall(folded)] + _CJK_PEOPLE.findall(folded))


_OPENING = re.compile(r"(?:^|[.!?。！？:：]\s*)[\"'(“]*([A-Za-z][A-Za-z'’]*)")
_CAPITALISED = re.compile(r"(?<![A-Za-z'’])[A-Z][A-Za-z'’]*")
_CJK_TITLED_NAME = re.compile(f"[{CJK_IDEOGRAPHS}](?:先生|女士|小姐)")


def _named(first: str, second: str) -> bool:
    """Whether two texts name the same people, places and things, in the same order: their capitalised words
    (compared case-blind, so "tencent" is "Tencent"; "Moved from Beijing to Shanghai" is not "from Shanghai to
    Beijing") and Chinese names with a title (王先生). A sentence's first word is capitalised anyway: two texts
    that open with different words neither holds elsewhere ("Caroline is moving" / "Melanie is moving",
    "Caroline: ..." / "Melanie: ...") name different subjects."""
    open_first, open_second = _opening(first), _opening(second)
    if (open_first and open_second and open_first != open_second and open_first not in _stems(second)
            and open_second not in _stems(first)):
        return False
    proper = _proper(first) | _proper(second)
    return ([t for t in _stems(first) if t in proper] == [t for t in _stems(second) if t in proper]
            and _CJK_TITLED_NAME.findall(first) == _CJK_TITLED_NAME.findall(second))


@lru_cache(maxsize=4096)
def _stems(text: str) -> tuple[str, ...]:
    return tuple(t for t in tokenize(_folded(text)) if t not in _OWNER_WORDS)


def _opening(text: str) -> str | None:
    """The analysed form of a text's first word when it is capitalised (None for a stop word: "The", "I")."""
    match = _OPENING.match(text.strip())
    terms = _stems(match.group(1)) if match and match.group(1)[0].isupper() else ()
    return terms[0] if terms else None


@lru_cache(maxsize=4096)
def _proper(text: str) -> frozenset[str]:
    """The analysed forms of the capitalised words that do not open a sentence."""
    openings = {match.start(1) for match in _OPENING.finditer(text)}
    words = [m.group(0) for m in _CAPITALISED.finditer(text) if m.start() not in openings]
    return frozenset(_stems(" ".join(words)))
