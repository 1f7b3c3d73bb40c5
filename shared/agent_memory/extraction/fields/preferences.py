"""Preferences: how the user likes to be served (channel, reply style, language), the pace they
want, and any other stated liking ("I prefer window seats").

Each topic is data: its field, and per value the words that name it in each language with the
label stored in each language. A topic is reported when one of its words appears in a clause that
also carries a preference cue of that topic ("更喜欢", "I'd rather", "回复...一点").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.grammar import REQUEST, Utterance, alternation, clause_around, stated


@dataclass(frozen=True)
class Choice:
    zh: str  # label stored for a Chinese speaker
    en: str  # label stored for an English speaker
    words: tuple[str, ...]  # how either language names it


@dataclass(frozen=True)
class Topic:
    field: str
    choices: tuple[Choice, ...]
    cue: re.Pattern[str]  # what makes a mention in the clause a preference
    zh_template: str  # "{value}" is the label
    en_template: str

    def pattern(self) -> re.Pattern[str]:
        words = {word: index for index, choice in enumerate(self.choices) for word in choice.words}
        return re.compile(rf"(?<![A-Za-z])(?:{alternation(words)})(?![A-Za-z])", re.IGNORECASE)


# Words that make a statement a preference in either language.
_LIKING = (
    r"更喜欢|比较喜欢|喜欢|偏好|偏爱|倾向于?|更倾向|习惯|宁愿|宁可|最好|希望|麻烦|请|尽量|"
    r"\bprefer(?:s|red)?\b|\bpreferably\b|\bI'?d rather\b|\bI would rather\b|\brather\b|\bI like\b|\bI love\b|"
    r"\bI'd like\b|\bplease\b|\bbest\b|\bworks better\b|\bfavou?rite\b|\beasier\b|\bbetter for me\b|"
    r"就行|就好|就可以|吧|点$|一点|一些"
)
_CONTACT = r"交流|联系|沟通|聊|回复|通知|发给我|给我|发|\bcommunicat\w*|\bcontact\b|\breach\b|\bcall\b|\bmessage\b|\bupdates?\b"
_REPLY = r"回复|回答|答复|解释|说明|讲|说|写|\brepl(?:y|ies)\b|\banswers?\b|\bexplanations?\b|\bresponses?\b|\bkeep it\b|\bgive me\b"

TOPICS: tuple[Topic, ...] = (
    Topic(
        field="communicationChannel",
        choices=(
            Choice("邮件", "email", ("邮件", "邮箱", "电邮", "email", "e-mail", "emails")),
            Choice("电话", "phone", ("电话", "打电话", "phone", "phone call", "phone calls", "calls", "call me")),
            Choice("微信", "WeChat", ("微信", "WeChat")),
            Choice("WhatsApp", "WhatsApp", ("WhatsApp",)),
            Choice("文字", "text", ("文字", "打字", "短信", "书面", "text", "texting", "text messages", "chat",
                                    "in writing", "written")),
            Choice("语音", "voice", ("语音", "语音消息", "voice", "voice messages", "voice notes")),
            Choice("视频", "video call", ("视频", "video call", "video calls", "Zoom")),
        ),
        cue=re.compile(rf"(?:{_LIKING})|(?:{_CONTACT})", re.IGNORECASE),
        zh_template="偏好通过{value}沟通",
        en_template="Prefers to communicate by {value}",
    ),
    Topic(
        field="responseStyle",
        choices=(
            Choice("简短", "brief", ("简短", "简洁", "简单点", "简单一点", "短一点", "短一些", "精简", "言简意赅",
                                     "少说废话", "说重点", "不用太长", "别太长", "brief", "tl;dr", "tldr", "short version", "the gist", "short", "shorter", "concise", "to the point", "succinct")),
            Choice("详细", "detailed", ("详细", "详细一点", "具体一点", "具体些", "展开", "detailed", "in detail",
                                        "thorough", "in depth", "in-depth", "step by step")),
        ),
        cue=re.compile(rf"(?:{_LIKING})|(?:{_REPLY})", re.IGNORECASE),
        zh_template="希望回复{value}",
        en_template="Prefers {value} replies",
    ),
    Topic(
        field="preferredLanguage",
        choices=(
            Choice("繁体中文", "Traditional Chinese", ("繁体中文", "繁体", "Traditional Chinese")),
            Choice("简体中文", "Simplified Chinese", ("简体中文", "Simplified Chinese")),
            Choice("中文", "Chinese", ("中文", "汉语", "普通话", "国语", "Chinese", "Mandarin")),
            Choice("粤语", "Cantonese", ("粤语", "广东话", "Cantonese")),
            Choice("英文", "English", ("英文", "英语", "English")),
        ),
        cue=re.compile(
            rf"(?:用|说|讲)\s*(?:{alternation(('中文', '汉语', '普通话', '国语', '粤语', '广东话', '英文', '英语'))})"
            r"(?:回复|回答|交流|沟通|跟我|和我|聊|说|讲)"
            r"|(?:中文|粤语|英文|英语|普通话|繁体|简体)\S{0,2}(?:就行|就好|吧|跟我|和我)"
            r"|\b(?:reply|respond|answer|write|wrote|talk|speak|communicate)\w*\s+(?:to me\s+)?in\b"
            r"|\b(?:Chinese|Mandarin|Cantonese|English)\s+please\b"
            r"|\bin\s+(?:Chinese|Mandarin|Cantonese|English)\s+please\b|\bprefer\b",
            re.IGNORECASE,
        ),
        zh_template="希望用{value}交流",
        en_template="Prefers to communicate in {value}",
    ),
)

# The pace the user wants: "越快越好", "the sooner the better" (a plan with a date is an INTENT).
_PACE_FAST = re.compile(
    r"越快越好|越早越好|时间越短越好|能快就快|(?<!不)着急|急着|赶时间|尽快办理|尽快办|尽快搞定|尽快处理|希望尽快|最好尽快|尽早办|"
    r"\bthe sooner the better\b|\bas (?:fast|quickly|soon) as possible\b|\basap\b|\bquickly as I can\b|"
    r"\bin a hurry\b|\burgent(?:ly)?\b",
    re.IGNORECASE,
)
_PACE_SLOW = re.compile(
    r"不着急|不急|慢慢来|不赶时间|时间不是问题|\bno rush\b|\bnot in a hurry\b|\bno hurry\b|\btake (?:my|our) time\b",
    re.IGNORECASE,
)

# Any other liking: "我更喜欢安静的住处", "I prefer window seats".
# A Chinese speaker often leaves out the 我 ("喜欢打篮球"): at the start of the message it is theirs.
_GENERAL_ZH = re.compile(
    r"(?:^|我)(?:更|比较|还是|一般|通常|很|特别|超|最)?(?P<verb>喜欢|偏好|偏爱|倾向于?|爱(?!人|好))"
    r"(?P<what>[^,.;!?。，；！？]{2,20})")
_WHAT_EN = r"(?P<what>[A-Za-z][A-Za-z0-9 '&/-]{1,50}?)(?=\s*(?:[,.;!?]|$|\bover\b|\bto\b|\bthan\b|\bbecause\b|\bsince\b))"
_GENERAL_EN = re.compile(
    r"\bI(?:'d| would)?\s+(?:really\s+|usually\s+|generally\s+|always\s+|absolutely\s+)?"
    r"(?P<verb>prefer|rather have|like|love|enjoy)\s+" + _WHAT_EN
    + r"|\bI(?:'m| am)\s+(?:really\s+|totally\s+)?(?P<verb2>into|a (?:big |huge )?fan of)\s+" + _WHAT_EN.replace("what", "what2"),
    re.IGNORECASE,
)
_DISLIKE_ZH = re.compile(r"(?:^|我)(?:很|特别|真的|最)?(?:不喜欢|讨厌|受不了|不爱)(?P<what>[^,.;!?。，；！？]{1,20})")
_DISLIKE_EN = re.compile(
    r"\bI\s+(?:really\s+|absolutely\s+)?(?:hate|dislike|detest|can't stand|cannot stand|don't like|do not like|"
    r"don't enjoy|do not enjoy)\s+" + _WHAT_EN,
    re.IGNORECASE,
)
# What a general liking is not about: people, and plans the other rules read ("我喜欢香港" is fine).
_GENERAL_SKIP = re.compile(r"^(?:to|if|when|you|your|it|this|that|them|him|her|the idea|你|您|他|她|这个|那个|去|做|办)", re.I)
_DIET = re.compile(
    r"我(?P<zh>吃素|是素食者|不吃(?:辣|肉|海鲜|猪肉|牛肉))|\bI(?:'m| am)\s+(?:a\s+)?(?P<en>vegetarian|vegan|pescatarian)\b"
    r"|\bI\s+(?:don't|do not)\s+eat\s+(?P<en2>meat|pork|beef|seafood|spicy food)\b",
    re.IGNORECASE,
)
# The option a comparison turns down ("in writing rather than calls", "比起电话我更喜欢邮件"): what follows
# one of these is not the liking.
_TURNED_DOWN = re.compile(
    r"(?:\brather than|\binstead of|\bover|\bnot|\bno more|\bthan|比起|而不是|而非|不要|不用|别|不想)\s*(?:the\s+|a\s+)?$",
    re.IGNORECASE,
)
_CALL_ME_BY_NAME = re.compile(r"(?i:call me)\s+(?!Back\b|Later\b|Tomorrow\b|Anytime\b|Now\b|When\b|If\b)[A-Z][a-z]")
_PLAN = re.compile(r"打算|计划|准备|\b(?:plan|plans|planning|going to|intend|intending|scheduled)\b", re.IGNORECASE)
_QUESTION = re.compile(r"[?？]|吗|呢\s*$|\b(?:do you|would you|can you|should I|which|what)\b", re.IGNORECASE)


def _preference(field: str, value: str, content: str) -> ExtractedMemory:
    return ExtractedMemory(memory_type=MemoryType.PREFERENCE, field=field, value=value, content=content)


def _own_statement(ctx: Utterance, start: int, end: int) -> bool:
    """Not a question, and not negated or somebody else's liking (a wish is fine: it is a preference)."""
    clause = clause_around(ctx.text, start, end)
    if REQUEST.search(clause):  # "could you reply in ...": "you" is who is asked, not whose liking it is
        return stated(ctx, start, future=False, other=False)
    return not _QUESTION.search(clause) and stated(ctx, start, future=False)


# Each topic's words compiled once, with the choice each word names.
_TOPIC_MATCHERS = tuple(
    (topic, topic.pattern(), {word.casefold(): choice for choice in topic.choices for word in choice.words})
    for topic in TOPICS
)


def topic_preferences(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for topic, pattern, index in _TOPIC_MATCHERS:
        for m in pattern.finditer(ctx.text):
            if _CALL_ME_BY_NAME.match(ctx.text, m.start()):  # "call me Bob" says a name, not a channel
                continue
            if _TURNED_DOWN.search(ctx.text[max(0, m.start() - 20):m.start()]):
                continue
            # A short message is one thought: "detailed, please" has its cue across the comma.
            clause = ctx.text if len(ctx.text) <= 40 else clause_around(ctx.text, m.start(), m.end())
            if not topic.cue.search(clause) or not _own_statement(ctx, m.start(), m.end()):
                continue
            choice = index[m.group(0).casefold()]
            value = ctx.say(choice.zh, choice.en)
            found.append(_preference(topic.field, value, ctx.say(topic.zh_template, topic.en_template).format(
                value=value)))
            break
    return found


def pace_preference(ctx: Utterance) -> ExtractedMemory | None:
    for pattern, zh, en in ((_PACE_FAST, "尽快", "as soon as possible"), (_PACE_SLOW, "不着急", "no rush")):
        for m in pattern.finditer(ctx.text):
            if pattern is _PACE_FAST and not stated(ctx, m.start(), future=False):
                continue
            if _PLAN.search(clause_around(ctx.text, m.start(), m.end())):  # "we plan to move asap": an intent
                continue
            if _QUESTION.search(clause_around(ctx.text, m.start(), m.end())):
                continue
            value = ctx.say(zh, en)
            content = ctx.say("希望尽快办理" if zh == "尽快" else "时间上不着急",
                              "Wants it done as soon as possible" if zh == "尽快" else "Is in no rush")
            return _preference("immigrationTimeline", value, content)
    return None


def general_preference(ctx: Utterance, covered: set[str]) -> ExtractedMemory | None:
    """A liking no topic names; `covered` are the fields already reported for this turn."""
    if covered & {topic.field for topic in TOPICS}:
        return None
    for m in _DIET.finditer(ctx.text):
        what = m["zh"] or m["en"] or f"no {m['en2']}"
        return _preference("preference", what, ctx.say(f"饮食偏好：{what}", f"Diet: {what}"))
    for pattern in (_GENERAL_ZH, _GENERAL_EN):
        for m in pattern.finditer(ctx.text):
            what = (m["what"] or m.groupdict().get("what2") or "").strip()
            if not what or _GENERAL_SKIP.match(what) or not _own_statement(ctx, m.start(), m.end()):
                continue
            verb = (m["verb"] or m.groupdict().get("verb2") or "").lower()
            liking = not verb.startswith(("prefer", "rather", "偏", "倾向"))
            return _preference("preference", what, ctx.say(f"{'喜欢' if liking else '偏好：'}{what}",
                                                           f"{'Likes' if liking else 'Prefers'} {what}"))
    return None


def dislike(ctx: Utterance) -> ExtractedMemory | None:
    """Something the user does not like ("I hate spicy food", "讨厌早起"): a preference of its own."""
    for pattern in (_DISLIKE_ZH, _DISLIKE_EN):
        for m in pattern.finditer(ctx.text):
            what = m["what"].strip()
            if _GENERAL_SKIP.match(what) or not _own_statement(ctx, m.start(), m.end()):
                continue
            return _preference("dislike", what, ctx.say(f"不喜欢{what}", f"Dislikes {what}"))
    return None
