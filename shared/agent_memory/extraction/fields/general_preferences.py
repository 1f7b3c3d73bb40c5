"""The general pack's preferences: the language to answer in (any language), how answers should read, how to
reach the user, and their likings and dislikes, each worded as the user says it."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.fields.general import LANGUAGES_EN, LANGUAGES_ZH
from agent_memory.extraction.fields.preferences import dislike
from agent_memory.extraction.grammar import REQUEST, Utterance, alternation, clause_around, stated


def _preference(field: str, value: str, content: str) -> ExtractedMemory:
    return ExtractedMemory(memory_type=MemoryType.PREFERENCE, field=field, value=value, content=content)


def _asked_of_me(ctx: Utterance, start: int) -> bool:
    """A request to the assistant, or the user's own wish: not negated, nor somebody else's ("my husband")."""
    clause = clause_around(ctx.text, start, start + 1)
    if REQUEST.search(clause) or re.search(r"\byou\b|你|您", clause, re.IGNORECASE):
        return stated(ctx, start, future=False, other=False)
    return stated(ctx, start, future=False)


# --------------------------------------------------------------------------------------
# preferredLanguage
# --------------------------------------------------------------------------------------

_EN_REPLY_IN = re.compile(
    r"\b(?:answer|reply|respond|write|talk|speak|communicate|chat|text)(?:s|ing)?\s+(?:to\s+me\s+|me\s+|back\s+)?"
    rf"(?:only\s+|always\s+)?in\s+(?P<a>{alternation(LANGUAGES_EN)})\b"
    rf"|\b(?:in\s+)?(?P<b>{alternation(LANGUAGES_EN)}),?\s+please\b"
    rf"|\b(?:speak|talk|write|reply|answer)\s+(?:to\s+me\s+)?(?P<d>{alternation(LANGUAGES_EN)})\s+(?:with|to)\s+me\b"
    rf"|\b(?:use|switch\s+to|change\s+to|stick\s+to)\s+(?P<c>{alternation(LANGUAGES_EN)})\b(?!\s+(?:class|lessons?|"
    r"words?|grammar|homework|food))",
    re.IGNORECASE,
)
_ZH_REPLY_IN = re.compile(
    rf"(?:用|说|讲)\s*(?P<a>{alternation(LANGUAGES_ZH)})\s*(?:来)?(?:回复|回答|答复|交流|沟通|跟我|和我|给我|聊|写)"
    rf"|(?P<b>{alternation(LANGUAGES_ZH)})\S{{0,2}}(?:就行|就好|回复我|回答我)"
    rf"|(?:请|以后|以后请|以后都|麻烦)(?:用|说|讲)\s*(?P<c>{alternation(LANGUAGES_ZH)})(?=\s*(?:吧|[。.!！,，]|$))"
    rf"|(?:回复|回答|答复)我?(?:的时候|时)?[，,]?\s*(?:请|都)?用\s*(?P<d>{alternation(LANGUAGES_ZH)})"
)


def preferred_language(ctx: Utterance) -> ExtractedMemory | None:
    for m in (_ZH_REPLY_IN if ctx.zh else _EN_REPLY_IN).finditer(ctx.text):
        group = next(name for name, value in m.groupdict().items() if value)
        if not _asked_of_me(ctx, m.start(group)) or re.search(r"\b(?:don't|do not|never|not)\b|不要|别|不用",
                                                             ctx.text[max(0, m.start() - 12):m.start()], re.I):
            continue
        value = m[group] if ctx.zh else m[group].capitalize()
        return _preference("preferredLanguage", value, ctx.say(f"希望用{value}回复", f"Wants replies in {value}"))
    return None


# --------------------------------------------------------------------------------------
# responseStyle
# --------------------------------------------------------------------------------------

# (value zh, value en, words)
_STYLES = (
    ("简短", "short", ("short", "shorter", "brief", "briefer", "concise", "succinct", "tl;dr", "简短", "简洁", "短一点",
                      "简单说", "简单点", "简单一点", "简单些",
                      "短一些", "精简", "言简意赅", "别太长", "不用太长", "别太啰嗦", "不要太啰嗦")),
    ("直接", "to the point", ("to the point", "straight to the point", "direct", "blunt", "no fluff", "直接", "说重点",
                              "直说", "开门见山")),
    ("详细", "detailed", ("detailed", "in detail", "more detail", "more details", "thorough", "in depth", "in-depth", "step by step", "step-by-step",
                          "详细", "具体一点", "具体些", "展开说")),
    ("要点", "bullet points", ("bullet points", "bullet-points", "bulleted lists", "bullets", "要点", "分点", "列点",
                              "条列")),
    ("表格", "tables", ("in tables", "in a table", "as a table", "use tables", "表格")),
    ("举例", "with examples", ("with examples", "examples", "举例子", "举例")),
    ("口语化", "casual", ("casual", "informal", "friendly", "口语化", "轻松一点")),
    ("正式", "formal", ("formal", "正式")),
)
_STYLE_WORDS = {word.casefold(): (zh, en) for zh, en, words in _STYLES for word in words}
_STYLE = re.compile(rf"(?<![A-Za-z])(?:{alternation(_STYLE_WORDS)})(?![A-Za-z])", re.IGNORECASE)
_STYLE_CUE = re.compile(
    r"\b(?:answers?|repl(?:y|ies)|responses?|explanations?|explain|summar\w+|write|keep|give\s+me|get|be|format|"
    r"use|please|prefer|like)\b|回答|回复|解释|说话|总结|讲|说|写|请|喜欢|希望|最好|一点|就行|就好",
    re.IGNORECASE,
)


_SHORT_LIMIT = re.compile(r"\b(?:under|below|less\s+than|at\s+most|no\s+more\s+than|within)\s+\d+\s+words\b"
                          r"|\b(?:in\s+)?(?:one|a\s+few|two|three)\s+(?:sentences|lines)\b|\bone\s+paragraph\b"
                          r"|\d+字以内|一两句话", re.IGNORECASE)


_STYLE_DOWN = re.compile(r"\b(?:not|no|don't|never)\s+(?:too\s+|so\s+)?$|不要|别太?$", re.IGNORECASE)


def response_style(ctx: Utterance) -> ExtractedMemory | None:
    for m in _SHORT_LIMIT.finditer(ctx.text):
        if _STYLE_CUE.search(ctx.text) and _asked_of_me(ctx, m.start()):
            value = ctx.say("简短", "short")
            return _preference("responseStyle", value, ctx.say(f"希望回复{value}", f"Prefers {value} answers"))
    for m in _STYLE.finditer(ctx.text):
        clause = ctx.text if len(ctx.text) <= 40 else clause_around(ctx.text, m.start(), m.end())
        if not _STYLE_CUE.search(clause) or not _asked_of_me(ctx, m.start()):
            continue
        zh, en = _STYLE_WORDS[m.group(0).casefold()]
        # "not too detailed" turns the style down; "别太长" is a wish for short answers
        if en != "short" and _STYLE_DOWN.search(ctx.text[max(0, m.start() - 10):m.start()]):
            continue
        value = ctx.say(zh, en)
        return _preference("responseStyle", value, ctx.say(f"希望回复{value}", f"Prefers {value} answers"))
    return None


# --------------------------------------------------------------------------------------
# communicationChannel
# --------------------------------------------------------------------------------------

# (value zh, value en, words, how specific: an app over a kind of message)
_CHANNELS = (
    ("微信", "WeChat", ("微信", "wechat"), 2), ("WhatsApp", "WhatsApp", ("whatsapp",), 2),
    ("Telegram", "Telegram", ("telegram",), 2), ("Signal", "Signal", ("signal",), 2),
    ("Slack", "Slack", ("slack",), 2), ("邮件", "email", ("邮件", "邮箱", "电邮", "email", "e-mail", "emails", "mail"), 1),
    ("电话", "phone", ("电话", "打电话", "phone", "phone call", "phone calls", "call me", "calling"), 1),
    ("文字", "text", ("打字", "文字", "text message", "text messages", "text me", "texting", "text"), 0),
    ("短信", "SMS", ("短信", "sms"), 0),
    ("语音", "voice message", ("语音", "voice message", "voice messages", "voice notes"), 0),
    ("视频", "video call", ("视频", "video call", "video calls", "zoom"), 1),
)
_CHANNEL_WORDS = {word: (zh, en, rank) for zh, en, words, rank in _CHANNELS for word in words}
_CHANNEL = re.compile(rf"(?<![A-Za-z])(?:{alternation(_CHANNEL_WORDS)})(?![A-Za-z])", re.IGNORECASE)
_CONTACT_CUE = re.compile(
    r"\b(?:reach|contact|get\s+in\s+touch|prefer|best|easiest|rather|instead)\b"
    r"|\b(?:message|email|text|call|ping|send|e-mail)\s+(?:it\s+|them\s+)?(?:to\s+)?me\b|\bme\s+(?:on|via|by|at|through)\b"
    r"|\b(?:on|via|by|through|over)\s+(?:the\s+)?(?:phone|email|e-mail|text|wechat|whatsapp|telegram|signal|slack|sms)\b"
    r"|\bjust\s+(?:text|email|message)|联系|找我|给我|发我|打我|通知|方便|最好|就行|就好",
    re.IGNORECASE,
)
_TURNED_DOWN = re.compile(
    r"(?:\brather\s+than|\binstead\s+of|\bnot|\bnever|\brarely|\bno|\bdon't|\bthan)\s*(?:\w+\s+)?$"
    r"|(?:比起|而不是|不要|不用|别|少|不)[\u4e00-\u9fff]{0,2}$",
    re.IGNORECASE,
)
_NAME_AFTER = re.compile(r"\s+(?!Back\b|Later\b|Tomorrow\b|Anytime\b|Now\b|When\b|If\b)[A-Z]")


def communication_channel(ctx: Utterance) -> ExtractedMemory | None:
    best: tuple[int, int, str, str] | None = None
    for m in _CHANNEL.finditer(ctx.text):
        before = ctx.text[max(0, m.start() - 16):m.start()]
        clause = ctx.text if len(ctx.text) <= 40 else clause_around(ctx.text, m.start(), m.end())
        if _TURNED_DOWN.search(before) or re.search(r"\b(?:rarely|never|barely)\s+(?:check|use|read)\b", clause, re.I):
            continue
        if not _CONTACT_CUE.search(clause) or not _asked_of_me(ctx, m.start()):
            continue
        if m.group(0).casefold() == "call me" and _NAME_AFTER.match(ctx.text, m.end()):  # "call me Sam": a name
            continue
        zh, en, rank = _CHANNEL_WORDS[m.group(0).casefold()]
        if best is None or rank > best[0]:
            best = (rank, m.start(), zh, en)
    if best is None:
        return None
    value = ctx.say(best[2], best[3])
    return _preference("communicationChannel", value, ctx.say(f"偏好通过{value}联系", f"Prefers to be reached by {value}"))


# --------------------------------------------------------------------------------------
# preference / dislike
# --------------------------------------------------------------------------------------

_FAVOURITE = re.compile(
    r"(?:^|[.!?]\s+)(?P<a>[A-Z][\w' -]{1,30}?)\s+(?:is|are)\s+my\s+(?:absolute\s+|all-time\s+)?favou?rite\b"
    r"|\bmy\s+(?:absolute\s+|all-time\s+)?favou?rite\s+(?:[a-z]+\s+){1,3}(?:is|are)\s+(?P<b>[\w' -]{2,30}?)"
    r"(?=\s*(?:[,.;!?]|$))",
    re.IGNORECASE,
)
_EN_BETTER = re.compile(r"\b(?P<what>[A-Z][\w+#-]*(?:\s+[A-Z][\w+#-]*)?)\s+(?:is|are)\s+(?:way\s+|much\s+|so\s+|far\s+)?"
                        r"(?:better|nicer)\s+than\b")
_ZH_FAVOURITE = re.compile(r"我最(?:喜欢|爱)的[\u4e00-\u9fff]{1,6}?是(?P<what>[^,.;!?。，；！？]{1,15})")
_ZH_LIKING = re.compile(
    r"(?:^|我)(?:平时|一直|向来|从小|也|还|真的)?(?:更|比较|还是|一般|通常|很|特别|超|最|非常)?(?:喜欢|爱|热爱|偏爱)"
    r"(?!你|您|人)(?P<what>[^,.;!?。，；！？]{2,20})"
)
_EN_NOT_MY_THING = re.compile(r"(?:^|[.!?]\s+)(?P<what>[A-Z][\w' -]{1,40}?)\s+(?:is|are)(?:n't|\s+not|\s+just\s+not|\s+really\s+not)"
                              r"\s+(?:really\s+)?(?:my\s+thing|for\s+me|my\s+cup\s+of\s+tea)\b")
_EN_NOT_A_FAN = re.compile(r"\bI(?:'m| am)\s+not\s+(?:a\s+|really\s+a\s+)?(?:big\s+|huge\s+)?fan\s+of\s+"
                           r"(?P<what>[A-Za-z][\w' -]{1,40}?)(?=\s*(?:[,.;!?]|$))", re.IGNORECASE)
_ZH_FOOD_VERB = re.compile(r"^(?:吃|喝|玩|看|听)(?=.{2})")
# "I'm a huge Arsenal fan": a name before "fan" (capitalised, so no IGNORECASE).
_EN_NAMED_FAN = re.compile(r"\bI(?:'m| am)\s+a\s+(?:big\s+|huge\s+|massive\s+|die-hard\s+)?"
                           r"(?P<fan>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s+fan\b")
_EN_LIKING = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:really\s+|totally\s+|also\s+)?(?P<verb2>into|a\s+(?:big\s+|huge\s+|massive\s+)?fan\s+of)\s+"
    r"(?P<what2>[A-Za-z][A-Za-z0-9 '&/+#-]{1,50}?)(?=\s*(?:[,.;!?]|$|\bbecause\b|\bsince\b|\bbut\b))"
    r"|\bI(?:'d| would)?\s+(?:really\s+|usually\s+|generally\s+|always\s+|absolutely\s+|also\s+)?"
    r"(?P<verb>prefer|rather\s+have|like|love|enjoy|adore)\s+"
    r"(?P<what>[A-Za-z][A-Za-z0-9 '&/+#-]{1,50}?)(?=\s*(?:[,.;!?]|$|\bover\b|\bto\b|\bthan\b|\bbecause\b|\bsince\b|\bbut\b))",
    re.IGNORECASE,
)
# Not a liking of something: "I'd like to...", "I love it", "I prefer that you reply...".
_EN_NOT_A_LIKING = re.compile(r"^(?:to|if|when|that|you|your|it|this|them|him|her|the idea|how|what|it when|my job|"
                              r"my work|working)\b",
                              re.IGNORECASE)


def _liking(ctx: Utterance) -> ExtractedMemory | None:
    for m in _FAVOURITE.finditer(ctx.text):
        what = (m["a"] or m["b"]).strip()
        if stated(ctx, m.start(), future=False):
            return _preference("preference", what, f"Favourite: {what}")
    return _zh_liking(ctx) if ctx.zh else _en_liking(ctx)


def _zh_liking(ctx: Utterance) -> ExtractedMemory | None:
    for m in _ZH_FAVOURITE.finditer(ctx.text):
        what = m["what"].strip()
        return _preference("preference", what, f"最喜欢{what}")
    for m in _ZH_LIKING.finditer(ctx.text):
        what = _ZH_FOOD_VERB.sub("", m["what"].strip())
        if stated(ctx, m.start("what"), future=False) and not re.match(r"^(?:你|您|用|去|做|办|这|那)", what):
            return _preference("preference", what, f"喜欢{what}")
    return None


def _en_liking(ctx: Utterance) -> ExtractedMemory | None:
    for m in _EN_NAMED_FAN.finditer(ctx.text):
        if stated(ctx, m.start(), future=False):
            return _preference("preference", m["fan"], f"A fan of {m['fan']}")
    for m in _EN_BETTER.finditer(ctx.text):
        if m["what"] not in ("I", "It", "This", "That") and stated(ctx, m.start(), future=False):
            return _preference("preference", m["what"], f"Prefers {m['what']}")
    for m in _EN_LIKING.finditer(ctx.text):
        what = (m["what"] or m["what2"]).strip()
        if _EN_NOT_A_LIKING.match(what) or not stated(ctx, m.start(), future=False):
            continue
        verb = (m["verb"] or m["verb2"]).lower()
        prefers = verb.startswith(("prefer", "rather"))
        return _preference("preference", what, f"{'Prefers' if prefers else 'Likes'} {what}")
    return None


_ZH_DISLIKE = re.compile(
    r"(?:^|我|[,，;；]\s*)(?:平时|一直|向来|从小)?(?:很|特别|真的|最|非常|有点|超级|超)?(?:不太喜欢|不怎么喜欢|不大喜欢|不喜欢|讨厌|受不了|不爱|反感)"
    r"(?!你|您)(?P<what>[^,.;!?。，；！？]{1,20})"
)


def _disliking(ctx: Utterance) -> ExtractedMemory | None:
    for m in [*_EN_NOT_A_FAN.finditer(ctx.text), *_EN_NOT_MY_THING.finditer(ctx.text)]:
        what = m["what"].strip()
        return _preference("dislike", what, f"Dislikes {what}")
    if ctx.zh:
        for m in _ZH_DISLIKE.finditer(ctx.text):
            what = _ZH_FOOD_VERB.sub("", m["what"].strip())
            if stated(ctx, m.start("what"), future=False, negation=False):
                return _preference("dislike", what, f"不喜欢{what}")
        return None
    return dislike(ctx)


# When not to be reached: "please never call me before 10am", "晚上9点以后别给我打电话".
_EN_CONTACT_HOURS = re.compile(
    r"\b(?:please\s+)?(?:never|don't|do not|no)\s+(?P<how>call|ring|phone|text|message|email)(?:s|ing)?\s+(?:me\s+)?"
    r"(?P<when>(?:before|after)\s+\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?|on\s+(?:weekends|Sundays|Saturdays)|"
    r"at\s+night|in\s+the\s+(?:morning|evening))", re.IGNORECASE)
_ZH_CONTACT_HOURS = re.compile(
    r"(?P<when>(?:早上|上午|中午|下午|晚上|夜里)?\s*\d{1,2}\s*点(?:半)?\s*(?:以前|之前|以后|之后)|周末|晚上|半夜)\s*"
    r"(?:请)?(?:不要|别|不用)(?:给我)?(?P<how>打电话|发消息|发信息|联系我)")


def contact_hours(ctx: Utterance) -> ExtractedMemory | None:
    m = (_ZH_CONTACT_HOURS if ctx.zh else _EN_CONTACT_HOURS).search(ctx.text)
    if m is None:
        return None
    when, how = " ".join(m["when"].split()), m["how"].lower()
    value = ctx.say(f"{when}{'不要' + how}", f"no {how}s {when}")
    return ExtractedMemory(memory_type=MemoryType.PREFERENCE, field="preference", value=value,
                           content=ctx.say(f"{when}不要{how}", f"Do not {how} them {when}"))


def general_preferences(ctx: Utterance, facts: list[ExtractedMemory]) -> list[ExtractedMemory]:
    """How to serve the user; a liking or dislike only when the turn says nothing of that (a liking that is the
    diet read already is the diet)."""
    found = [p for p in (preferred_language(ctx), response_style(ctx), communication_channel(ctx),
                         contact_hours(ctx)) if p is not None]
    if found:
        return found
    diets = {str(m.value).casefold() for m in facts if m.field == "diet"}
    liking = _liking(ctx)
    if liking is not None and str(liking.value).casefold() not in diets:
        found.append(liking)
    disliked = _disliking(ctx)
    if disliked is not None:
        found.append(disliked)
    return found
