"""The general pack's retractions beyond allergies, pets and jobs: a health condition denied or cured, a language not
spoken or not to be answered in, a diet, a liking or a plan ended."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.fields.everyday import CONDITIONS_EN, CONDITIONS_ZH
from agent_memory.extraction.fields.general import LANGUAGES_EN, LANGUAGES_ZH
from agent_memory.extraction.fields.restatements import as_a_plan
from agent_memory.extraction.fields.retraction_grammar import Clause, clauses, first_value, retraction, users_own
from agent_memory.extraction.grammar import CJK, Utterance, alternation

# ---- healthCondition: denied, or cured ----------------------------------------------------------------------------

_CONDITION_EN_RE = alternation(CONDITIONS_EN)
_CONDITION_ZH_RE = alternation(CONDITIONS_ZH)
_EN_CONDITION_GONE = re.compile(
    rf"\bI\s+(?:don't|do not|no longer|never)\s+(?:actually\s+|really\s+)?(?:have|had|suffer from|get)\s+"
    rf"(?P<what>{_CONDITION_EN_RE})\b"
    rf"|\b(?:my|the)\s+(?P<what2>{_CONDITION_EN_RE})\s+(?:finally\s+|now\s+|completely\s+|totally\s+)?(?:is gone|has gone|went away|cleared up|is cured|was cured|"
    r"is in remission|is under control now|got better|is better|is resolved|has resolved|has been resolved)"
    rf"|\bI(?:'m| am)\s+(?:cured of|over|free of)\s+(?:my\s+)?(?P<what3>{_CONDITION_EN_RE})\b",
    re.IGNORECASE)
_ZH_CONDITION_GONE = re.compile(
    rf"我(?:并|其实|根本)?(?:没有|没)(?:得过?)?(?P<what>{_CONDITION_ZH_RE})"
    rf"|(?P<what2>{_CONDITION_ZH_RE})(?:已经|早就|都)?(?:治好了|好了|痊愈了?|康复了|没了|不犯了)")


def condition_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in clauses(ctx):
        if not users_own(ctx, clause):
            continue
        for m in (_ZH_CONDITION_GONE if ctx.zh else _EN_CONDITION_GONE).finditer(clause.text):
            if not any(r.value == first_value(m) for r in found):
                found.append(retraction(MemoryType.FACT, "healthCondition", first_value(m), clause.text))
    return found


# ---- languages: one not spoken, one not to be answered in ---------------------------------------------------------

_LANG_EN = alternation(LANGUAGES_EN)
_LANG_ZH = alternation(LANGUAGES_ZH)
_EN_NOT_SPOKEN = re.compile(rf"\bI\s+(?:don't|do not|can't|cannot|no longer)\s+(?:actually\s+|really\s+|even\s+)?"
                            rf"(?:speak|read|write)\s+(?:any\s+)?(?P<lang>{_LANG_EN})\b")
_ZH_NOT_SPOKEN = re.compile(rf"我(?:其实|根本|完全|已经)?(?:不会|不懂|不能)(?:说|讲|听)?(?P<lang>{_LANG_ZH})")
_EN_NOT_ANSWERED_IN = re.compile(
    rf"\b(?:stop|quit)\s+(?:answering|replying|writing|responding|talking)\s+(?:to me\s+)?in\s+(?P<lang>{_LANG_EN})\b"
    rf"|\b(?:don't|do not|no need to)\s+(?:need to\s+)?(?:answer|reply|write|respond)\s+(?:to me\s+)?in\s+"
    rf"(?P<lang2>{_LANG_EN})\b", re.IGNORECASE)
_ZH_NOT_ANSWERED_IN = re.compile(rf"(?:别|不要|不用)(?:再|特意|专门|老是|总是)*(?:用|拿)(?P<lang>{_LANG_ZH})(?:回|回复|答|跟我说|和我说|写)")


def language_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in clauses(ctx):
        if not users_own(ctx, clause):
            continue
        for pattern, field, memory_type in (
                (_ZH_NOT_ANSWERED_IN if ctx.zh else _EN_NOT_ANSWERED_IN, "preferredLanguage", MemoryType.PREFERENCE),
                (_ZH_NOT_SPOKEN if ctx.zh else _EN_NOT_SPOKEN, "languageSkills", MemoryType.FACT)):
            m = pattern.search(clause.text)
            if m is not None:
                found.append(retraction(memory_type, field, first_value(m), clause.text))
                break
    return found


# ---- diet, likings, goals (the general pack) ---------------------------------------------------------------------

_DIETS_EN = r"vegetarian|vegan|pescatarian|keto|paleo|gluten-free|dairy-free|low-carb|intermittent fasting|whole30|carnivore"
_DIETS_ZH = r"素食|吃素|吃斋|生酮(?:饮食)?|轻断食|断食|低碳水?(?:饮食)?|无麸质(?:饮食)?|地中海饮食"
_EN_DIET_ENDED = re.compile(
    rf"\bI(?:'m| am)\s+(?:not|no longer)\s+(?:a\s+|on\s+|doing\s+|going\s+)?(?P<diet>{_DIETS_EN})\b(?:\s+(?:anymore|any more))?"
    rf"|\bI\s+(?:stopped|quit|gave up|have given up|'ve given up|dropped)\s+(?:being\s+|doing\s+|on\s+|the\s+|my\s+)?(?:a\s+)?"
    rf"(?P<diet2>{_DIETS_EN})"
    rf"|\b(?:forget|done with|finished|no more|not doing|over)\s+(?:the\s+|my\s+)?(?P<diet3>{_DIETS_EN})"
    rf"|\bI\s+(?:don't|do not)\s+(?:eat|do|follow)\s+(?P<diet4>{_DIETS_EN})"
    rf"|\bI(?:'m| am)\s+no longer\s+trying\s+to\s+go\s+(?P<diet5>{_DIETS_EN})",
    re.IGNORECASE)
_ZH_DIET_ENDED = re.compile(
    rf"我(?:已经|现在|并|其实)?(?:不再|不)(?P<diet>吃素|吃斋)了?|我(?:已经)?开始吃肉了|我(?:已经)?不(?:再)?是(?P<diet2>素食)(?:者|主义者)了?"
    rf"|(?P<diet3>{_DIETS_ZH})(?:饮食)?(?:这件事|这事)?(?:我)?(?:已经|早就)?(?:停了|结束了|不做了|放弃了|不搞了|不吃了|不弄了)"
    rf"|(?:停了|结束了|放弃了?)(?P<diet4>{_DIETS_ZH})")
_DIET_NAMES_ZH = {"吃素": "素食", "吃斋": "素食"}
_EN_LIKING_ENDED = re.compile(
    r"\bI(?:'m| am)\s+(?:kinda\s+|kind of\s+|so\s+|totally\s+|pretty much\s+)?over\s+(?P<what3>[a-z][a-z ]{1,20}?)"
    r"(?=\s*(?:[,.;!?]|$|\b(?:tbh|now|already)\b))"
    r"|\bI\s+(?:don't|do not)\s+(?:drink|eat|like|play|watch|do)\s+(?P<what>[a-z][a-z ]{1,20}?)\s+(?:anymore|any more)\b"
    r"|\bI\s+(?:no longer|stopped|quit)\s+(?:drink(?:ing)?|eat(?:ing)?|lik(?:e|ing)|play(?:ing)?)\s+"
    r"(?P<what2>[a-z][a-z ]{1,20}?)(?=\s*(?:[,.;!?]|$|\band\b))",
    re.IGNORECASE)
_ZH_LIKING_ENDED = re.compile(rf"我(?:现在)?没(?:那么|以前那么)喜欢(?P<what3>[{CJK}]{{1,4}}?)了"
                              rf"|我(?:已经|现在)?(?:不再|不)(?:喜欢|爱)?(?:喝|吃|玩|看)?(?P<what>[{CJK}]{{1,4}}?)了"
                              rf"(?=$|[，,。])|我(?:已经)?戒(?:了|掉了)?(?P<what2>[{CJK}]{{1,4}})")
_EN_GOAL_DROPPED = re.compile(
    r"\bI(?:'ve)?\s+(?:given up on|gave up on|dropped|abandoned|shelved)\s+(?:the idea of\s+|my plan to\s+|my goal of\s+)?"
    r"(?P<what>[a-z][a-z ]{2,40}?)(?=\s*(?:[,.;!?]|$))"
    r"|\bI(?:'m| am)\s+no longer\s+(?:trying|planning|going)\s+to\s+(?P<what2>[a-z][a-z ]{2,40}?)(?=\s*(?:[,.;!?]|$))"
    r"|\b(?:forget|scrap|scratch|drop|dropping|ditch|ditching|shelve|shelving|cancel|cancelling|canceling)\s+(?:the\s+|my\s+)?"
    r"(?:plan|idea|goal)\s+(?:to|of)\s+(?P<what3>[a-z][a-z ]{2,40}?)(?=\s*(?:[,.;!?]|$))"
    r"|\bI(?:'m| am)\s+not\s+(?:going|gonna)\s+to\s+(?P<what4>[a-z][a-z ]{2,40}?)\s+after all\b",
    re.IGNORECASE)
_ZH_GOAL_DROPPED = re.compile(
    rf"我(?:已经)?放弃(?:了)?(?P<what>[{CJK}A-Za-z]{{2,12}}?)(?:的(?:计划|目标|打算))?了?(?=$|[，,。])"
    rf"|我(?:已经)?不(?:再)?打算(?P<what2>[{CJK}A-Za-z]{{2,12}}?)了(?=$|[，,。])"
    rf"|^(?P<what3>[{CJK}A-Za-z]{{2,10}}?)(?:这事|这件事|的计划|的打算|的想法|这个计划|这个想法|计划)(?:我)?(?:先|暂时|已经|就)?"
    r"(?:搁置|取消|放弃|算了|不想了|不打算了|作罢|不搞了|不弄了)")


# A practice stopped is a plan dropped: "I stopped learning Spanish" (goal "learn Spanish"), "西班牙语我不学了".
_EN_PRACTICE = {"learning": "learn", "studying": "study", "practicing": "practice", "practising": "practise",
                "playing": "play", "running": "run", "training for": "train for", "getting": "get", "doing": "do",
                "taking": "take", "going": "go", "saving for": "save for", "trying to": "try to"}
_EN_PRACTICE_STOPPED = re.compile(
    rf"\b(?:I\s+(?:stopped|quit|gave up|have given up|'ve given up)|changed my mind about)\s+"
    rf"(?P<verb>{'|'.join(_EN_PRACTICE)})\s+(?P<what>[A-Za-z][A-Za-z ]{{1,30}}?)(?=\s*(?:[,.;!?]|$|\b(?:a few|last|months?|weeks?|years?|ago)\b))",
    re.IGNORECASE)
_ZH_PRACTICE_STOPPED = re.compile(rf"^(?P<what>[{CJK}A-Za-z]{{2,8}}?)我(?:已经|现在|就|也|还是)?不(?:再)?(?P<verb>学|练|弹|跑|考|做|玩)了")
_ZH_PLAN_CALLED_OFF = re.compile(rf"本来(?:打算|想|计划|准备)(?:[^，,。]{{0,4}}?(?:年底|明年|下个月|今年|暑假|周末))?"
                                 rf"(?P<what>[{CJK}A-Za-z]{{2,12}}?)[，,]\s*(?:现在|后来|结果)?(?:都)?(?:取消|算了|不去了|放弃|泡汤)")
# A way of being served stopped: "stop sending reminders by text", "stop using bullet points".
_EN_SERVED_STOPPED = re.compile(
    r"\b(?:stop|quit|no more)\s+(?:sending|texting|emailing|messaging|calling|contacting|pinging|pestering)\s+(?:me\s+)?"
    r"(?:\w+\s+)?(?:by|via|on|over|through)\s+(?P<channel>text|texts|SMS|email|e-mail|WhatsApp|phone|Slack|WeChat|Telegram)\b"
    r"|\bno more\s+(?P<channel2>emails|texts|calls|phone calls|WhatsApp messages|Slack messages)\b"
    r"|\b(?:stop|quit|no more|drop|lose|ditch)\s+(?:using\s+|adding\s+|putting\s+|including\s+|giving me\s+|with\s+)?"
    r"(?:the\s+|all the\s+|those\s+)?(?:super\s+|really\s+|very\s+|overly\s+)?"
    r"(?P<style>bullet points|emojis|jargon|long answers|long replies|tables|headings|formal (?:language|replies)|detailed)\b",
    re.IGNORECASE)


_CHANNEL = {"emails": "email", "texts": "text", "calls": "phone", "phone calls": "phone",
            "whatsapp messages": "WhatsApp", "slack messages": "Slack"}
_ZH_SERVED_STOPPED = re.compile(
    r"(?:别|不要|不用)(?:再|老是|总是)?(?:在|用|通过|发)(?P<channel>微信|短信|邮件|邮箱|电话|QQ|钉钉|飞书|WhatsApp)(?:上|里)?"
    r"(?:提醒|通知|联系|发|找|打|给我)"
    r"|(?:别|不要|不用)(?:再|老是|总是)?(?:给我)?(?P<style>分点|列表|表情|emoji|表格)")


def _stopped(ctx: Utterance, text: str) -> ExtractedMemory | None:
    """A practice, a plan or a way of being served the clause (or, for a plan called off, its sentence) ends."""
    if ctx.zh:
        m = _ZH_PRACTICE_STOPPED.search(text)
        if m is not None:
            return retraction(MemoryType.INTENT, "goal", f"{m['verb']}{m['what']}", text)
        m = _ZH_PLAN_CALLED_OFF.search(text)
        if m is not None:
            return retraction(MemoryType.INTENT, "goal", m["what"], text)
        m = _ZH_SERVED_STOPPED.search(text)
        if m is not None and m["channel"]:
            return retraction(MemoryType.PREFERENCE, "communicationChannel", m["channel"], text)
        return retraction(MemoryType.PREFERENCE, "responseStyle", m["style"], text) if m is not None else None
    m = _EN_PRACTICE_STOPPED.search(text)
    if m is not None:
        return retraction(MemoryType.INTENT, "goal", f"{_EN_PRACTICE[m['verb'].lower()]} {m['what'].strip()}", text)
    m = _EN_SERVED_STOPPED.search(text)
    if m is not None and (m["channel"] or m["channel2"]):
        channel = m["channel"] or m["channel2"]
        return retraction(MemoryType.PREFERENCE, "communicationChannel", _CHANNEL.get(channel.lower(), channel), text)
    if m is not None:
        return retraction(MemoryType.PREFERENCE, "responseStyle", m["style"], text)
    return None


def everyday_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    whole = Clause(ctx.text, 0)
    sentence_wide = _stopped(ctx, ctx.text) if ctx.zh and _ZH_PLAN_CALLED_OFF.search(ctx.text) \
        and users_own(ctx, whole) else None
    if sentence_wide is not None:
        found.append(sentence_wide)
    for clause in clauses(ctx):
        if not users_own(ctx, clause):
            continue
        ended = None if sentence_wide is not None else _stopped(ctx, clause.text)
        if ended is not None:
            found.append(ended)
            continue
        diet = (_ZH_DIET_ENDED if ctx.zh else _EN_DIET_ENDED).search(clause.text)
        if diet is not None:
            name = first_value(diet) or ("素食" if "肉" in diet[0] else "")
            found.append(retraction(MemoryType.PREFERENCE, "diet", _DIET_NAMES_ZH.get(name, name) or None, clause.text))
            continue
        goal = (_ZH_GOAL_DROPPED if ctx.zh else _EN_GOAL_DROPPED).search(clause.text)
        if goal is not None:
            found.append(retraction(MemoryType.INTENT, "goal", as_a_plan(first_value(goal)), clause.text))
            continue
        liking = (_ZH_LIKING_ENDED if ctx.zh else _EN_LIKING_ENDED).search(clause.text)
        if liking is not None and first_value(liking) not in ("", "了", "喜欢"):
            found.append(retraction(MemoryType.PREFERENCE, "preference", first_value(liking), clause.text))
    return found


# A denial, a withdrawal or an ending anywhere in a clause: what reads clauses by their likeness to labelled positive
# statements (the exemplar reader) must not read such a clause as the statement it resembles.
