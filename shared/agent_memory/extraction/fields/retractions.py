"""What the user takes back: a denial ("I'm not allergic to peanuts", "我对花生不过敏"), a withdrawal ("我不考虑高才通了",
"no longer interested in TTPS") or an ending ("my dog passed away", "我离职了"). Each is a retraction of a slot
(`ExtractedMemory.retraction`): of one item of a list field (allergy "peanuts", pet "dog", targetCategory "TTPS"),
or, with no value, of the whole field ("I don't have any pets"). The positive rules' memories a retraction of
the same turn contradicts are dropped (extractor.py). Somebody else's statements, conditions and questions take
nothing back."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.fields.everyday import ANIMALS_EN, ANIMALS_ZH, CONDITIONS_EN, CONDITIONS_ZH
from agent_memory.extraction.fields.general import LANGUAGES_EN, LANGUAGES_ZH
from agent_memory.extraction.fields.immigration import CATEGORY, category_code
from agent_memory.extraction.grammar import CJK, Utterance, alternation, stated

# Conditions and suppositions state nothing: "if I ever quit", "如果我不走优才".
_CONDITION = re.compile(r"\b(?:if|unless|whether|suppose|supposing|in case|what if)\b|如果|假如|要是|假设|万一|是否",
                        re.IGNORECASE)
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
_DOUBLE_NEGATION = re.compile(r"不是不|并不是不|没有不|\bnot that I(?:'m| am)? not\b|\bnot that I (?:don't|do not)\b|"
                              r"\bit's not that\b", re.IGNORECASE)
# Somebody else said or did it: "我同事说他老婆不想去香港", "my friend isn't allergic".
_OTHERS = re.compile(r"(?:我的?)?(?:朋友|同事|同学|老婆|老公|妻子|丈夫|太太|孩子|儿子|女儿|父母|爸|妈|哥|姐|弟|妹|邻居|客户)"
                     r"|(?<!其)他|她|\b(?:my|our)\s+(?:friend|colleague|wife|husband|partner|son|daughter|kid|"
                     r"mother|father|mum|mom|dad|brother|sister|neighbou?r|boss|cousin)s?\b|\b(?:he|she|they)\b",
                     re.IGNORECASE)


def _users_own(ctx: Utterance, clause: Clause, at: int = 0) -> bool:
    """The user's own statement (up to `at` in the clause nobody else comes in), not a condition, nor two
    negations."""
    lead = clause.text[:at] if at else clause.text
    return not _CONDITION.search(clause.text) and not _DOUBLE_NEGATION.search(clause.text) \
        and not _OTHERS.search(lead) and stated(ctx, clause.start + at, negation=False, future=False)


def _retraction(memory_type: MemoryType, field: str, value: str | None, content: str,
                category: str | None = None) -> ExtractedMemory:
    return ExtractedMemory(memory_type=memory_type, field=field, value=value, content=content.strip(" ，,。."),
                           category=category, retraction=True)


# ---- targetCategory: a scheme withdrawn, or the move itself ------------------------------------------------------

_WITHDRAW_ZH = re.compile(r"不考虑|不打算|放弃|不申请|不走|不办|不弄|不搞|不折腾|不报|不申了|不感兴趣|没兴趣|没有兴趣|算了|作罢|"
                          r"不想(?:申请|走|办|弄|搞|报)|不再(?:考虑|申请|走|办)|先不(?:考虑|申请|走|办|弄)?|暂时?不(?:考虑|申请|走|办)|"
                          r"搁置|打消|撤回|撤销|取消了?|改主意|不适合我|没戏|pass掉|不选|排除")
_WITHDRAW_EN = re.compile(
    r"\b(?:no longer|not)\s+(?:really\s+|even\s+)?(?:interested|considering|going for|going with|applying|pursuing|"
    r"planning|doing|bothering with)"
    r"|\b(?:changed my mind|change of mind|decided against|decided not to|dropp(?:ed|ing)|giv(?:e|ing) up(?: on)?|"
    r"gave up(?: on)?|rul(?:e|ed|ing) out|scrap(?:ped|ping)?|forget about|abandon(?:ed|ing)?|not for me|"
    r"out of the (?:picture|question)|off the table|won't be applying|not doing|(?:put|putting) (?:it |that )?on hold|"
    r"on hold|shelv(?:e|ed|ing)|withdr(?:ew|awn|awing|aw)|cancel(?:l?ed|l?ing)?|pull(?:ed|ing)? out|"
    r"(?:I'll|I will|gonna|going to) pass on|skip(?:ping)?|isn't for me|is not for me|not worth it|no go)\b",
    re.IGNORECASE)
# "从高才通改走优才", "switching from TTPS to QMAS": the first scheme is withdrawn.
_SWITCH_FROM = re.compile(r"从|由|\bfrom\b", re.IGNORECASE)
_SWITCH_FROM_TO = re.compile(r"\b(?:switch\w*|chang\w*|mov\w*|go\w*)\s+from\b", re.IGNORECASE)
_SWITCH_TO = re.compile(r"改(?:走|成|为|申请|办)|换成|转(?:走|向|成|为)|\b(?:switch\w*|mov\w+|chang\w+|go\w*)\s+"
                        r"(?:over\s+)?to\b|\binstead\b", re.IGNORECASE)
_MOVE_WITHDRAWN = re.compile(
    r"(?:不想|不打算|不准备|不考虑|放弃|不)(?:再)?(?:去|移民|来)?(?:香港|港)(?:了|发展)?|(?:不|放弃)移民了?|"
    r"\b(?:not|no longer|won't be|decided not to|aren't|am not)\s+(?:going to\s+|planning to\s+|want(?:ing)? to\s+)?"
    r"(?:mov(?:e|ing)|relocat(?:e|ing)|emigrat(?:e|ing)|immigrat(?:e|ing))\s+to\s+(?:Hong Kong|HK)"
    r"|\b(?:gave up|giving up|given up|dropped|drop)\s+(?:on\s+)?(?:the\s+)?(?:idea of\s+)?"
    r"(?:moving|relocating|emigrating|immigrating)\s+to\s+(?:Hong Kong|HK)"
    r"|\bHong Kong is (?:off|no longer)\b",
    re.IGNORECASE)


def _withdrawn_schemes(text: str, schemes: list[re.Match[str]]) -> list[re.Match[str]]:
    """The schemes a clause takes back: those a withdrawal word reaches (before a switch word: "not TTPS, switching
    to QMAS"), else the one a switch leaves ("从高才通改走优才", "switching from GEP to QMAS", "QMAS instead of TTPS")."""
    switch = _SWITCH_TO.search(text)
    if _WITHDRAW_EN.search(text) or _WITHDRAW_ZH.search(text):
        return [m for m in schemes if switch is None or m.end() <= switch.start()] or schemes
    if len(schemes) < 2:
        return []
    if _SWITCH_FROM_TO.search(text):
        return schemes[:1]
    if switch is not None and re.search(r"\binstead\s+of\b", text, re.IGNORECASE):
        return [m for m in schemes if m.start() > switch.end()]
    if switch is not None:
        source = _SWITCH_FROM.search(text)
        return [m for m in schemes if m.end() <= switch.start() and (source is None or m.start() >= source.end())]
    return []


def target_category_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []

    def named(code: str) -> bool:
        return any(r.value == code for r in found)

    for clause in clauses(ctx):
        if not _users_own(ctx, clause):
            continue
        schemes = list(CATEGORY.finditer(clause.text))
        if not schemes:
            if _MOVE_WITHDRAWN.search(clause.text):
                found.append(_retraction(MemoryType.INTENT, "targetCategory", None, clause.text))
            continue
        withdrawn = _withdrawn_schemes(clause.text, schemes)
        for m in withdrawn:
            if not named(code := category_code(m)):
                found.append(_retraction(MemoryType.INTENT, "targetCategory", code, clause.text, category=code))
        # The scheme switched to is the new interest ("switching from GEP to QMAS").
        for m in schemes if withdrawn else []:
            phrase = m.group(0).strip()
            if m not in withdrawn and m.start() > withdrawn[-1].end() and not named(code := category_code(m)):
                found.append(ExtractedMemory(memory_type=MemoryType.INTENT, field="targetCategory", value=code,
                                             category=code, content=ctx.say(f"对{phrase}感兴趣", f"Interested in {phrase}")))
    return found


# ---- allergy -----------------------------------------------------------------------------------------------------

_ALLERGEN_EN = r"(?P<what>[A-Za-z][A-Za-z -]{1,30}?)"
_EN_NOT_ALLERGIC = re.compile(
    rf"\bI(?:'m| am)\s+(?:not|no longer)\s+(?:really\s+|actually\s+)?allergic\s+to\s+{_ALLERGEN_EN}"
    rf"(?=\s*(?:[,.;!?]|$|\b(?:and|anymore|any more|after all|at all)\b))"
    rf"|\bI(?:'m| am)n't\s+allergic\s+to\s+{_ALLERGEN_EN.replace('what', 'what2')}(?=\s*(?:[,.;!?]|$|\b(?:and|anymore)\b))"
    rf"|\bI\s+(?:used to be|was)\s+allergic\s+to\s+{_ALLERGEN_EN.replace('what', 'what3')}\s*,?\s*(?:but|and)\s+"
    r"(?:I'm\s+|I am\s+)?(?:not\s+(?:anymore|any more)|no longer|I'm not now|not now|I grew out of it|I outgrew it)"
    rf"|\bI(?:'ve)?\s+(?:outgrew|outgrown|grew out of)\s+my\s+{_ALLERGEN_EN.replace('what', 'what4')}\s+allergy\b"
    rf"|\bmy\s+{_ALLERGEN_EN.replace('what', 'what5')}\s+allergy\s+(?:is\s+gone|went away|has gone|is over)",
    re.IGNORECASE)
_EN_NO_ALLERGIES = re.compile(r"\bI\s+(?:don't|do not)\s+have\s+(?:any\s+)?(?:food\s+)?allergies\b"
                              r"|\bI(?:'m| am)\s+not\s+allergic\s+to\s+anything\b|\bno\s+allergies\b", re.IGNORECASE)
_ZH_NOT_ALLERGIC = re.compile(
    rf"(?:^|我)(?:现在)?对\s*(?P<what>[{CJK}A-Za-z]{{1,8}}?)\s*(?:已经|早就|现在)?(?:不|不再|没有?)(?:会)?过敏"
    rf"|我(?:已经|现在)?(?:不|不再|没有?)对\s*(?P<what2>[{CJK}A-Za-z]{{1,8}}?)\s*过敏"
    rf"|我(?:以前|之前|小时候)对\s*(?P<what3>[{CJK}A-Za-z]{{1,8}}?)\s*过敏[,，]?\s*(?:但是?|不过|可是)?(?:现在|已经)"
    r"(?:不|好了|没事)"
    rf"|我的?\s*(?P<what4>[{CJK}]{{1,6}}?)过敏(?:已经)?(?:好了|治好了|没了)")
_ZH_NO_ALLERGIES = re.compile(r"我(?:没有|没|无)(?:什么|任何)?(?:食物)?过敏|我(?:什么|啥)都不过敏")


def allergy_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in _sentences(ctx):
        if not _users_own(ctx, clause):
            continue
        whole = (_ZH_NO_ALLERGIES if ctx.zh else _EN_NO_ALLERGIES).search(clause.text)
        if whole:
            found.append(_retraction(MemoryType.FACT, "allergy", None, clause.text))
            continue
        for m in (_ZH_NOT_ALLERGIC if ctx.zh else _EN_NOT_ALLERGIC).finditer(clause.text):
            value = next((v for v in m.groupdict().values() if v), "").strip()
            if value and value.lower() not in ("anything", "any", "it"):
                found.append(_retraction(MemoryType.FACT, "allergy", value, clause.text))
    return found


def _sentences(ctx: Utterance) -> Iterator[Clause]:
    """Sentences, for statements whose turn comes after a comma ("I used to be allergic to X, but not anymore")."""
    start = 0
    for m in re.finditer(r"[;。；!！\n]|\.(?=\s|$)", ctx.text):
        if m.start() > start:
            yield Clause(ctx.text[start:m.start()], start)
        start = m.end()
    if start < len(ctx.text):
        yield Clause(ctx.text[start:], start)


# ---- pet -----------------------------------------------------------------------------------------------------------

_ANIMAL_EN = alternation(ANIMALS_EN)
_ANIMAL_ZH = alternation(ANIMALS_ZH)
_EN_PET_GONE = re.compile(
    rf"\b(?:my|our)\s+(?:(?:old|sweet|little|beloved|dear|last)\s+)?(?P<animal>{_ANIMAL_EN})\b[^,.;!?]{{0,30}}?"
    r"\b(?:passed away|passed|died|is gone|was put down|was put to sleep|had to be put down|ran away|"
    r"went missing|is no longer with us|crossed the rainbow bridge)"
    rf"|\b(?:I|we)\s+(?:had to\s+)?(?:put|gave|give|sold|rehomed|re-homed|lost)\s+(?:away\s+|up\s+|down\s+)?"
    rf"(?:my|our)\s+(?:[a-z]+\s+)?(?P<animal2>{_ANIMAL_EN})\b"
    rf"|\bI\s+(?:don't|do not|no longer)\s+(?:have|own)\s+(?:a|an|my|the|any)\s+(?P<animal3>{_ANIMAL_EN})\b"
    rf"\s*(?:anymore|any more|now)?",
    re.IGNORECASE)
_EN_NO_PETS = re.compile(r"\bI\s+(?:don't|do not|no longer)\s+(?:have|own|keep)\s+(?:any\s+)?pets\b"
                         r"|\bno\s+pets\b|\bI(?:'m| am)\s+not\s+a\s+pet\s+owner\b", re.IGNORECASE)
_ZH_PET_GONE = re.compile(
    rf"(?P<animal>{_ANIMAL_ZH})(?:都|也|全|全都)?[^，,。]{{0,8}}?(?:去世|死|走了|没了|不在了|丢了|跑丢|病逝|离开|老死)"
    rf"|(?P<animal2>{_ANIMAL_ZH})(?:都|也|已经)?(?:送人|送走|卖了|送给)"
    rf"|我(?:已经|现在)?(?:不|不再|没有?)(?:再)?养(?P<animal3>{_ANIMAL_ZH})了?")
_ZH_NO_PETS = re.compile(r"我(?:家)?(?:没有|没|不|不再)(?:养)?(?:任何)?宠物|我(?:们)?家(?:里)?(?:没有|没)(?:养)?宠物")


def pet_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    animals = ANIMALS_ZH if ctx.zh else ANIMALS_EN
    for clause in clauses(ctx):
        if not _users_own(ctx, clause):
            continue
        if (_ZH_NO_PETS if ctx.zh else _EN_NO_PETS).search(clause.text):
            found.append(_retraction(MemoryType.FACT, "pet", None, clause.text))
            continue
        for m in (_ZH_PET_GONE if ctx.zh else _EN_PET_GONE).finditer(clause.text):
            said = next(v for v in m.groupdict().values() if v)
            value = animals.get(said.lower() if not ctx.zh else said, said)
            if not any(r.value == value for r in found):
                found.append(_retraction(MemoryType.FACT, "pet", value, clause.text))
    return found


# ---- job ----------------------------------------------------------------------------------------------------------

_COMPANY = r"[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,2}"  # a name, capitalised: no case folding for it
_EN_JOB_ENDED = re.compile(
    rf"\bI\s+(?i:just\s+|recently\s+|finally\s+)?(?i:quit|left|resigned from|walked away from|lost)\s+(?i:my\s+)?"
    rf"(?i:job|position|role|work)(?:\s+(?i:at|with)\s+(?P<company>{_COMPANY}))?"
    rf"|\bI\s+(?i:just\s+|recently\s+)?(?i:quit|left)\s+(?P<company2>{_COMPANY})"
    rf"|\bI\s+(?i:got|was|have been|'ve been)\s+(?i:laid off|fired|let go|made redundant)"
    rf"(?:\s+(?i:from|at|by)\s+(?P<company3>{_COMPANY}))?"
    r"|\bI(?i:'m| am)\s+(?i:now\s+)?(?i:unemployed|between jobs|out of work|no longer working|retired|jobless)"
    r"|\bI\s+(?i:just\s+|recently\s+|finally\s+)?(?i:retired|handed in my notice|stepped down|got the sack)"
    rf"|\bI(?i:'m| am)\s+(?i:no longer)\s+(?i:employed|working)\s+(?i:at|for|with)\s+(?P<company7>{_COMPANY})"
    rf"|\b(?i:my contract)\s+(?i:ended|ran out|wasn't renewed|was not renewed)"
    rf"|\bI\s+(?i:no longer)\s+(?i:work)\s+(?i:at|for)\s+(?P<company4>{_COMPANY})"
    rf"|\bI(?i:'m| am)\s+(?i:no longer)\s+(?i:at|with)\s+(?P<company6>{_COMPANY})"
    rf"|\bI\s+(?i:don't|do not)\s+(?i:work)\s+(?i:at|for)\s+(?P<company5>{_COMPANY})\s+(?i:anymore|any more)"
    r"|\b(?i:my\s+company\s+(?:closed|shut down|went bust|folded))")
_ZH_JOB_ENDED = re.compile(
    rf"(?:^|我)(?:已经|刚|上个月|去年|最近|前段时间|上周|年初|今年)?(?:从(?P<company>[{CJK}A-Za-z]{{2,12}}?))?"
    r"(?:被公司)?(?:离职|辞职|裸辞|被裁|被辞退|被优化|被开|下岗|失业|退休|不干|裁)(?:了|(?=$|[，,。！!]))"
    rf"|我(?:已经)?(?:辞掉|丢了)了?(?:工作|那份工作)"
    rf"|我(?:已经)?不在(?P<company2>[{CJK}A-Za-z]{{2,12}}?)(?:上班|工作|干)了"
    r"|(?:我们)?公司(?:倒闭|关门|解散|破产|没了)了?|(?:工作|合同)(?:到期|没了)|(?:已经)?退休了")


def job_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in clauses(ctx):
        if not _users_own(ctx, clause):
            continue
        m = (_ZH_JOB_ENDED if ctx.zh else _EN_JOB_ENDED).search(clause.text)
        if m is None:
            continue
        company = next((v for k, v in m.groupdict().items() if k.startswith("company") and v), None)
        found.append(_retraction(MemoryType.FACT, "currentJobTitle", None, clause.text))
        # Its own words: a second memory of the same text would be the first one's duplicate.
        name = company.strip() if company else None
        found.append(_retraction(MemoryType.FACT, "currentCompany", name, ctx.say(
            f"不再在{name}工作" if name else "不再在原公司工作",
            f"No longer works at {name}" if name else "No longer works at their company")))
        break
    return found


# ---- healthCondition: denied, or cured ----------------------------------------------------------------------------

_CONDITION_EN_RE = alternation(CONDITIONS_EN)
_CONDITION_ZH_RE = alternation(CONDITIONS_ZH)
_EN_CONDITION_GONE = re.compile(
    rf"\bI\s+(?:don't|do not|no longer|never)\s+(?:actually\s+|really\s+)?(?:have|had|suffer from|get)\s+"
    rf"(?P<what>{_CONDITION_EN_RE})\b"
    rf"|\bmy\s+(?P<what2>{_CONDITION_EN_RE})\s+(?:finally\s+|now\s+|completely\s+|totally\s+)?(?:is gone|has gone|went away|cleared up|is cured|was cured|"
    r"is in remission|is under control now|got better|is better)"
    rf"|\bI(?:'m| am)\s+(?:cured of|over|free of)\s+(?:my\s+)?(?P<what3>{_CONDITION_EN_RE})\b",
    re.IGNORECASE)
_ZH_CONDITION_GONE = re.compile(
    rf"我(?:并|其实|根本)?(?:没有|没)(?:得过?)?(?P<what>{_CONDITION_ZH_RE})"
    rf"|(?P<what2>{_CONDITION_ZH_RE})(?:已经|早就|都)?(?:治好了|好了|痊愈了?|康复了|没了|不犯了)")


def condition_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in clauses(ctx):
        if not _users_own(ctx, clause):
            continue
        for m in (_ZH_CONDITION_GONE if ctx.zh else _EN_CONDITION_GONE).finditer(clause.text):
            if not any(r.value == _first_value(m) for r in found):
                found.append(_retraction(MemoryType.FACT, "healthCondition", _first_value(m), clause.text))
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
_ZH_NOT_ANSWERED_IN = re.compile(rf"(?:别|不要|不用)(?:再)?(?:用|拿)(?P<lang>{_LANG_ZH})(?:回|回复|答|跟我说|和我说|写)")


def language_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in clauses(ctx):
        if not _users_own(ctx, clause):
            continue
        for pattern, field, memory_type in (
                (_ZH_NOT_ANSWERED_IN if ctx.zh else _EN_NOT_ANSWERED_IN, "preferredLanguage", MemoryType.PREFERENCE),
                (_ZH_NOT_SPOKEN if ctx.zh else _EN_NOT_SPOKEN, "languageSkills", MemoryType.FACT)):
            m = pattern.search(clause.text)
            if m is not None:
                found.append(_retraction(memory_type, field, _first_value(m), clause.text))
                break
    return found


# ---- diet, likings, goals (the general pack) ---------------------------------------------------------------------

_EN_DIET_ENDED = re.compile(r"\bI(?:'m| am)\s+(?:not|no longer)\s+(?:a\s+)?(?P<diet>vegetarian|vegan|pescatarian|"
                            r"keto|on keto|gluten-free)\b(?:\s+(?:anymore|any more))?"
                            r"|\bI\s+(?:stopped|quit|gave up)\s+being\s+(?:a\s+)?(?P<diet2>vegetarian|vegan)",
                            re.IGNORECASE)
_ZH_DIET_ENDED = re.compile(r"我(?:已经|现在|并|其实)?(?:不再|不)(?:吃素|吃斋)了?|我(?:已经)?开始吃肉了|我(?:已经)?不(?:再)?是素食(?:者|主义者)了?")
_EN_LIKING_ENDED = re.compile(
    r"\bI\s+(?:don't|do not)\s+(?:drink|eat|like|play|watch|do)\s+(?P<what>[a-z][a-z ]{1,20}?)\s+(?:anymore|any more)\b"
    r"|\bI\s+(?:no longer|stopped|quit)\s+(?:drink(?:ing)?|eat(?:ing)?|lik(?:e|ing)|play(?:ing)?)\s+"
    r"(?P<what2>[a-z][a-z ]{1,20}?)(?=\s*(?:[,.;!?]|$|\band\b))",
    re.IGNORECASE)
_ZH_LIKING_ENDED = re.compile(rf"我(?:已经|现在)?(?:不再|不)(?:喜欢|爱)?(?:喝|吃|玩|看)?(?P<what>[{CJK}]{{1,4}}?)了"
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


def _first_value(m: re.Match[str]) -> str:
    return next((v for v in m.groupdict().values() if v), "").strip()


def everyday_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in clauses(ctx):
        if not _users_own(ctx, clause):
            continue
        if (_ZH_DIET_ENDED if ctx.zh else _EN_DIET_ENDED).search(clause.text):
            found.append(_retraction(MemoryType.PREFERENCE, "diet", None, clause.text))
            continue
        goal = (_ZH_GOAL_DROPPED if ctx.zh else _EN_GOAL_DROPPED).search(clause.text)
        if goal is not None:
            found.append(_retraction(MemoryType.INTENT, "goal", _first_value(goal), clause.text))
            continue
        liking = (_ZH_LIKING_ENDED if ctx.zh else _EN_LIKING_ENDED).search(clause.text)
        if liking is not None and _first_value(liking) not in ("", "了", "喜欢"):
            found.append(_retraction(MemoryType.PREFERENCE, "preference", _first_value(liking), clause.text))
    return found


# A denial, a withdrawal or an ending anywhere in a clause: what reads clauses by their likeness to labelled positive
# statements (the exemplar reader) must not read such a clause as the statement it resembles.
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
    if not (_ZH_ENDING if ctx.zh else _EN_ENDING).search(clause.text) or not _users_own(ctx, clause):
        return None
    return " ".join((_ZH_ENDING_WORDS if ctx.zh else _EN_ENDING_WORDS).sub("", clause.text).split())


# The slots a clause without its ending words may be read for, to be taken back (never a yes/no or a number, whose
# denial is a value of its own: "我没有孩子" is hasChildren false).
REREAD_FIELDS = frozenset({"pet", "allergy", "healthCondition", "diet", "languageSkills", "preference", "goal",
                           "communicationChannel", "responseStyle", "preferredLanguage", "targetCategory",
                           "currentLocation"})


Retractions = Callable[[Utterance], list[ExtractedMemory]]

# Each pack's retractions, by the pack's stage name (ExtractionRules.preferences).
RETRACTION_STAGES: dict[str, tuple[Retractions, ...]] = {
    "immigration": (target_category_retractions, allergy_retractions, job_retractions),
    "general": (allergy_retractions, pet_retractions, job_retractions, condition_retractions, language_retractions,
                everyday_retractions),
}


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
