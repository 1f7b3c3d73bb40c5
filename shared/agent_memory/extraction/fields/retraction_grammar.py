"""What the retraction rules share: a message's clauses, whether one is the user's own statement (not somebody
else's, nor a condition, nor two negations), the retraction memory, the words that end or deny a state, and when a
retraction contradicts a positive memory of the same turn."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.grammar import Utterance, stated

_CONDITION = re.compile(r"\b(?:if|unless|whether|suppose|supposing|in case|what if|I heard|heard that|apparently|"
                        r"is it true|rumou?r)\b|如果|假如|要是|假设|万一|是否|听说|据说|传言|是真的吗",
                        re.IGNORECASE)  # conditions and hearsay
# A clause: the rules below read one at a time (a withdrawal and its replacement are two: "不考虑高才通，改走优才").
_CLAUSE = re.compile(r"[;。；!！\n]|[,，](?!\d{3})|\.(?=\s|$)|\b(?:but|and then|so now|whereas)\b|但是|不过|可是",
                     re.IGNORECASE)


@dataclass(frozen=True)
class Clause:
    text: str
    start: int  # in the utterance


def clauses(ctx: Utterance) -> Iterator[Clause]:
    start = 0
    for m in _CLAUSE.finditer(ctx.text):
        if m.start() > start:
            yield Clause(ctx.text[start:m.start()], start)
        start = m.end()
    if start < len(ctx.text):
        yield Clause(ctx.text[start:], start)


# Two negations undo each other: "我也不是不想走专才", "it's not that I'm not interested".
_DOUBLE_NEGATION = re.compile(r"不是不|并不是不|不是说[^，,。]*不|没有不|\bnot that I(?:'m| am)? not\b|\bnot that I (?:don't|do not)\b|"
                              r"\bit's not that\b", re.IGNORECASE)
# Somebody else said or did it: "我同事说他老婆不想去香港", "my friend isn't allergic".
_OTHERS = re.compile(r"(?:我的?)?(?:朋友|同事|同学|老婆|老公|妻子|丈夫|太太|孩子|儿子|女儿|父母|爸|妈|哥|姐|弟|妹|邻居|客户)"
                     r"|(?<!其)他|她|\b(?:my|our)\s+(?:friend|colleague|wife|husband|partner|son|daughter|kid|"
                     r"mother|father|mum|mom|dad|brother|sister|neighbou?r|boss|cousin)s?\b|\b(?:he|she|they)\b"
                     r"|\b(?:a|one)\s+(?:friend|colleague|coworker|co-worker|relative|neighbou?r|classmate)\b|\bof mine\b",
                     re.IGNORECASE)


# A withdrawal word itself denied, doubted or nearly said: what it names is kept ("我不会放弃优才", "要不要放弃",
# "I nearly gave up on QMAS", "no way I'm dropping TTPS").
HELD_ON_TO = re.compile(r"(?:不会|不能|不想|不|没有?|别|要不要|谁说|是否|差点|差一点|险些)[^，,。]{0,3}$"
                                 r"|\b(?:not|never|won't|wouldn't|don't|am not|'m not|no way|nearly|almost|whether)\s+"
                                 r"(?:\S+\s+)?(?:\S+\s+)?$", re.IGNORECASE)


def users_own(ctx: Utterance, clause: Clause, at: int | None = None) -> bool:
    """The user's own statement (nobody else comes in before `at` in the clause, or anywhere in it without one;
    "两只猫都送给表姐了" names the cousin after what it says of the cats), not a condition, nor two negations."""
    lead = clause.text if at is None else clause.text[:at]
    return not _CONDITION.search(clause.text) and not _DOUBLE_NEGATION.search(clause.text) \
        and not _OTHERS.search(lead) and stated(ctx, clause.start + (at or 0), negation=False, future=False)


def retraction(memory_type: MemoryType, field: str, value: str | None, content: str,
                category: str | None = None) -> ExtractedMemory:
    return ExtractedMemory(memory_type=memory_type, field=field, value=value, content=content.strip(" ，,。."),
                           category=category, retraction=True)


def first_value(m: re.Match[str]) -> str:
    return next((v for v in m.groupdict().values() if v), "").strip()


_POLARITY_CUE = re.compile(
    r"不再|已经不|不想|不打算|不用|不要|不考虑|没有了|没了|走了|去世|死了|送人|送走|卖了|放弃|算了|戒了|戒掉|退休了|离职|辞职|"
    r"别再|不会|搁置|取消|结束了|"
    r"\b(?:no longer|anymore|any more|stop|stopped|quit|retired|passed away|died|put down|gave up|given up|"
    r"giving up|changed my mind|scratch|cancel(?:l?ed)?|forget|dont|don't actually)\b",
    re.IGNORECASE)


# A plain negation too, for a statement read by its likeness to positive ones ("I don't have diabetes" resembles "I
# have diabetes").
_NEGATION = re.compile(r"\b(?:not|never|no|don't|dont|doesn't|didn't|isn't|aren't|wasn't|haven't|hasn't|won't|can't)\b"
                       r"|n't\b|不|没|别|未|over\b|forget\b|dropp(?:ed|ing)\b|cleared up|finished|broke up|flew off",
                       re.IGNORECASE)


def takes_something_back(text: str) -> bool:
    return bool(_POLARITY_CUE.search(text))


_NOT_YET_OR_IF = re.compile(r"\b(?:once|when|whenever|after|before|until|if|unless)\b|等到?|以后|之后|如果|要是", re.IGNORECASE)


def lets_go(text: str) -> bool:
    """Whether a clause lets something go now: a word of ending or withdrawal, not denied, nearly said, or still to
    come ("猫我是不会送走的", "I'm not giving up on Spanish", "once I stop working")."""
    cue = _POLARITY_CUE.search(text)
    return cue is not None and not HELD_ON_TO.search(text[max(0, cue.start() - 16):cue.start()]) \
        and not _NOT_YET_OR_IF.search(text[:cue.start()])


def denies_or_ends(memory: ExtractedMemory) -> bool:
    """Whether a memory read by likeness to positive examples came from a clause that denies or ends something."""
    said = memory.value if isinstance(memory.value, str) and memory.value else memory.content
    # A dislike says "not" by its nature, and so may a diet ("no meat", "不吃辣").
    return takes_something_back(f"{memory.content} {said}") or (memory.field not in ("dislike", "diet")
                                                                  and bool(_NEGATION.search(said)))


# ---- any other slot: what a clause would state without its ending words ----------------------------------------

# Words that end or deny a state ("I don't have asthma anymore", "以后不用给我发邮件了", "今年不打算考研了"). A plain
# negation is not among them: "I don't like coffee" is a dislike, not a liking taken back.
_EN_ENDING = re.compile(r"\b(?:no longer|not\s+(?:anymore|any more))\b|\b(?:don't|do not|doesn't|does not)\b(?=.*\b(?:anymore|any more)\b)"
                        r"|\b(?:anymore|any more)\b", re.IGNORECASE)
_ZH_ENDING = re.compile(r"不再|已经不|再也不|不用再?|别再|别(?=.*了)|(?:不|没)(?:打算|想)(?=.*了)")
_EN_ENDING_WORDS = re.compile(r"\b(?:no longer|anymore|any more|don't|do not|doesn't|does not|not)\b\s*",
                              re.IGNORECASE)
_ZH_ENDING_WORDS = re.compile(r"不再|已经不|再也不|不用再?|别再?|不(?=打算|想)|没(?=打算|想)")


def without_ending_words(ctx: Utterance, clause: Clause) -> str | None:
    """The clause as it would state the slot it ends, its ending words left out ("I have asthma" of "I don't have
    asthma anymore"); None when it has none, or is not the user's own."""
    if not (_ZH_ENDING if ctx.zh else _EN_ENDING).search(clause.text) or not users_own(ctx, clause):
        return None
    return " ".join((_ZH_ENDING_WORDS if ctx.zh else _EN_ENDING_WORDS).sub("", clause.text).split())


# The slots a clause without its ending words may be read for, to be taken back (never a yes/no or a number, whose
# denial is a value of its own: "我没有孩子" is hasChildren false).
REREAD_FIELDS = frozenset({"pet", "allergy", "healthCondition", "diet", "languageSkills", "preference", "goal",
                           "communicationChannel", "responseStyle", "preferredLanguage", "targetCategory",
                           "currentLocation"})


def contradicts(retraction: ExtractedMemory, memory: ExtractedMemory) -> bool:
    """Whether a positive memory of the turn states what the retraction takes back: its field, and its item when
    the retraction names one ("dog" takes back "dog (Mochi)"; no item: any)."""
    if memory.retraction or memory.field != retraction.field:
        return False
    if retraction.value is None:
        return True
    taken, stated_value = str(retraction.value).casefold(), str(memory.value or memory.category or "").casefold()
    return bool(stated_value) and (taken in stated_value or stated_value in taken
                                   or (memory.category or "").casefold() == taken)
