"""How a statement is read: clause boundaries, and the cues (per language) that make a mention
not the user's own current fact: negation, wishes, the past, somebody else as the subject."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.domain.text.text import CJK_IDEOGRAPHS

# --------------------------------------------------------------------------------------

CJK = CJK_IDEOGRAPHS

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
# Conditions ("如果我有硕士学位", "if I had") are not facts either.
_FUTURE_ZH = re.compile(r"想|打算|准备|计划|希望|申请|考虑|将来|以后|未来|要去|争取|梦想|考|如果|假如|要是|假设|万一")
_FUTURE_EN = re.compile(
    r"\b(?:want|wants|wanted|wanna|plan|plans|planning|hope|hoping|would like|going to|gonna|intend|"
    r"intending|apply|applying|considering|consider|dream|dreaming|aim|aiming|thinking about|might|may|"
    r"if|suppose|supposing|assuming|someday|one day|would love|would be|ideally)\b"
    r"|'d like|'d love|'d be\b",
    re.IGNORECASE,
)
# Past statements: "以前在腾讯工作", "I used to work at IBM" are not current.
_PAST_ZH = re.compile(r"以前|之前|曾经|过去|当年|原来|上一份")
_PAST_EN = re.compile(r"\b(?:used to|previously|formerly|former|before)\b", re.IGNORECASE)
# Somebody else is the subject: "我老婆是博士", "my son is 5 years old".
_OTHER_ZH = re.compile(
    r"老婆|老公|妻子|丈夫|太太|爱人|儿子|女儿|孩子|小孩|父亲|母亲|爸|妈|父母|哥哥|姐姐|弟弟|妹妹|"
    r"朋友|同学|室友|亲戚|家人|同事|老板|领导|(?<!其)他|她|对象|男友|女友|客户|你|"
    r"表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹|叔叔|阿姨|舅舅|姑姑|邻居|闺蜜|兄弟|姐妹"
)
_OTHER_EN = re.compile(
    r"\b(?:my|our|his|her|their)\s+(?:wife|husband|spouse|partner|sons?|daughters?|kids?|child(?:ren)?|"
    r"father|mother|dad|mom|mum|parents?|brothers?|sisters?|friends?|colleagues?|boss|girlfriend|boyfriend|"
    r"cousins?|uncle|aunt|neighbou?rs?|roommate|flatmate)\b"
    r"|\b(?:he|she|they|he's|she's|they're|you|you're)\b",
    re.IGNORECASE,
)

@dataclass(frozen=True)
class Utterance:
    """The user's message, NFKC-normalised (full-width digits/punctuation folded), and its language."""

    text: str
    zh: bool

    def say(self, zh: str, en: str) -> str:
        return zh if self.zh else en



def _clause_prefix(text: str, pos: int) -> str:
    start = 0
    for m in _CLAUSE_BREAK.finditer(text, 0, pos):
        start = m.end()
    return text[start:pos]


def clause_around(text: str, start: int, end: int) -> str:
    after = _CLAUSE_BREAK.search(text, end)
    return _clause_prefix(text, start) + text[start : after.start() if after else len(text)]


_SENTENCE_BREAK = re.compile(r"[!?。！？\n]|\.(?=\s|$)")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|me|my)\b|我", re.IGNORECASE)


def _sentence_subject_is_other(text: str, pos: int) -> bool:
    """The sentence opens with somebody else and the user never comes in before `pos`."""
    start = 0
    for m in _SENTENCE_BREAK.finditer(text, 0, pos):
        start = m.end()
    sentence = text[start:pos].lstrip()
    en = _OTHER_EN.match(sentence)
    if en:
        return not _FIRST_PERSON.search(sentence[en.end():])
    rest = sentence.removeprefix("我的").removeprefix("我")
    zh = _OTHER_ZH.match(rest)
    return bool(zh) and not _FIRST_PERSON.search(rest[zh.end():]) if zh else False


def stated(
    ctx: Utterance, pos: int, *, negation: bool = True, future: bool = True, other: bool = True, past: bool = False
) -> bool:
    """True when the mention at `pos` is the user's own, current, affirmative statement."""
    prefix = _clause_prefix(ctx.text, pos)
    if negation and (_NEG_ZH.search(prefix[-_NEG_ZH_WINDOW:]) or _NEG_EN.search(prefix[-_NEG_EN_WINDOW:])):
        return False
    if future and (_FUTURE_ZH.search(prefix) or _FUTURE_EN.search(prefix)):
        return False
    if other and (_OTHER_ZH.search(prefix) or _OTHER_EN.search(prefix) or _sentence_subject_is_other(ctx.text, pos)):
        return False
    return not (past and (_PAST_ZH.search(prefix) or _PAST_EN.search(prefix)))


def matches(
    pattern: re.Pattern[str], ctx: Utterance, group: str | int = 0, **checks: bool
) -> Iterator[re.Match[str]]:
    """Matches of `pattern` whose `group` passes `stated`."""
    for m in pattern.finditer(ctx.text):
        if stated(ctx, m.start(group), **checks):
            yield m


def fact(field: str, value: Any, content: str, **extra: Any) -> ExtractedMemory:
    return ExtractedMemory(memory_type=MemoryType.FACT, field=field, value=value, content=content, **extra)


def intent(field: str, value: Any, content: str, **extra: Any) -> ExtractedMemory:
    return ExtractedMemory(memory_type=MemoryType.INTENT, field=field, value=value, content=content, **extra)


def alternation(words: list[str] | tuple[str, ...] | dict[str, Any]) -> str:
    """A regex alternation, longest first so that "上海交大" wins over "上交"."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


# A polite request is a preference, not a question: "Could you reply in Mandarin?", "可以用繁体中文跟我沟通吗？"
REQUEST = re.compile(
    r"\b(?:could|can|would) you (?:please )?(?:reply|respond|write|answer|keep|send|call|email|text|use|talk|speak)\b"
    r"|(?:可以|能不能|能否|麻烦|请)(?:用|说|发|打)",
    re.IGNORECASE,
)
# A decimal point ("IELTS 6.5 enough?") does not end the clause. A clause is tried only from its first
# character (at the start, or after a delimiter that is no decimal point), and its characters are read as runs
# between decimal points: tried from every character, text without punctuation took quadratic time (2.5 s for
# 8,000 characters). A clause that asks nothing from its start asks nothing from a later character either, so
# the matches are those of trying every character.
_QUESTION_CLAUSE = re.compile(
    r"(?<![^,，;；。.!！?？\n])(?!(?<=\d\.)\d)"  # a clause's first character
    r"[^,，;；。.!！?？\n]*(?:(?<=\d)\.(?=\d)[^,，;；。.!！?？\n]*)*"  # its text
    r"(?:[?？]|吗\s*$|吗(?=[,，。.!！]))")  # a question mark, or 吗 at its end


def without_questions(text: str) -> str:
    """The text without the clauses that ask something: "能申请高才通吗？" states nothing about the user."""
    return _QUESTION_CLAUSE.sub(lambda m: m.group(0) if REQUEST.search(m.group(0)) else " ", text).strip()
