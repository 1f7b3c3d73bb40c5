"""What the user takes back: a denial ("I'm not allergic to peanuts", "我对花生不过敏"), a withdrawal ("我不考虑高才通了",
"no longer interested in TTPS") or an ending ("my dog passed away", "我离职了"). Each is a retraction of a slot
(`ExtractedMemory.retraction`): of one item of a list field (allergy "peanuts", pet "dog", targetCategory "TTPS"),
or, with no value, of the whole field ("I don't have any pets"). The positive rules' memories a retraction of
the same turn contradicts are dropped (extractor.py). Somebody else's statements, conditions and questions take
nothing back."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.fields.denials import place_denials
from agent_memory.extraction.fields.everyday import ANIMALS_EN, ANIMALS_ZH
from agent_memory.extraction.fields.general_retractions import (
    condition_retractions,
    everyday_retractions,
    language_retractions,
)
from agent_memory.extraction.fields.immigration import CATEGORY, category_code
from agent_memory.extraction.fields.retraction_grammar import (
    HELD_ON_TO,
    Clause,
    clauses,
    first_value,
    retraction,
    users_own,
)
from agent_memory.extraction.grammar import CJK, Utterance, alternation

# ---- targetCategory: a scheme withdrawn, or the move itself ------------------------------------------------------

_WITHDRAW_ZH = re.compile(r"不考虑|不打算|放弃|不申请|不走|不办|不弄|不搞|不折腾|不报|不申了|不感兴趣|没兴趣|没有兴趣|算了|作罢|"
                          r"不想(?:申请|走|办|弄|搞|报)|不再(?:考虑|申请|走|办)|先不(?:考虑|申请|走|办|弄)?|暂时?不(?:考虑|申请|走|办)|"
                          r"搁置|打消|撤回|撤销|取消了?|改主意|不适合我|没戏|pass掉|不选|排除|划掉|不碰|不用再(?:帮我)?看|不搞了|"
                          r"不走了|放一放|先放|作废|撤了|放掉|撤掉|放下|搁下|退出|不想再等|不等了|不去了|不现实|够不上|没必要|"
                          r"不值得|不申|别再(?:给我)?(?:发|看|推|查)")
_WITHDRAW_EN = re.compile(
    r"\b(?:no longer|not)\s+(?:really\s+|even\s+)?(?:interested|considering|going for|going with|applying|pursuing|"
    r"planning|doing|bothering with)"
    r"|\b(?:changed my mind|change of mind|decided against|decided not to|dropp(?:ed|ing)|giv(?:e|ing) up(?: on)?|"
    r"gave up(?: on)?|rul(?:e|ed|ing) out|scrap(?:ped|ping)?|forget about|abandon(?:ed|ing)?|not for me|"
    r"out of the (?:picture|question)|off the table|won't be applying|not doing|(?:put|putting) (?:it |that )?on hold|"
    r"on hold|shelv(?:e|ed|ing)|withdr(?:ew|awn|awing|aw)|cancel(?:l?ed|l?ing)?|pull(?:ed|ing)? out|"
    r"(?:I'll|I will|gonna|going to) pass on|skip(?:ping)?|isn't for me|is not for me|not worth it|no go|"
    r"count me out|off the list|off my list|lost interest|scratch|isn't happening|not happening|forget the|"
    r"out the window|scrapped|void|let(?:ting)?\s+(?:it|that|this|\w+)(?:\s+one)?\s+go|(?:won't|will not|not) be going ahead|"
    r"not going ahead|(?:take|taking|took) \w+ out of|is out|are out|isn't realistic|is not realistic|"
    r"not realistic|no longer realistic|don't bother|do not bother|no point|not worth|call(?:ing|ed)? off|"
    r"(?:isn't|is not|won't|will not) (?:going to )?work(?: out)?|doesn't work for me|don't add up|doesn't add up|"
    r"not (?:going|gonna) (?:to )?(?:apply|go for|do|pursue)|won't (?:apply|go for|pursue|do))\b",
    re.IGNORECASE)
# "从高才通改走优才", "switching from TTPS to QMAS": the first scheme is withdrawn.
_SWITCH_FROM = re.compile(r"从|由|\bfrom\b", re.IGNORECASE)
_SWITCH_FROM_TO = re.compile(r"\b(?:switch\w*|chang\w*|mov\w*|go\w*)\s+from\b", re.IGNORECASE)
_SWITCH_TO = re.compile(r"改(?:走|成|为|申请|办)|换成|换到|转(?:走|向|成|为|到)|\b(?:will|'ll)\s+(?:try|go for|apply for)\b|\b(?:switch\w*|mov\w+|chang\w+|go\w*)\s+"
                        r"(?:over\s+)?to\b|\binstead\b|\b(?:let's|let us|I'll|I will|we'll)\s+(?:focus on|do|go with|try)\b"
                        r"|\bfocus(?:ing)? on\b", re.IGNORECASE)
_MOVE_WITHDRAWN = re.compile(
    r"(?:不想|不打算|不准备|不考虑|放弃|不)(?:再)?(?:去|移民|来)?(?:香港|港)(?:了|发展)?|(?:不|放弃)移民了?|"
    r"移民(?:香港)?的事(?:情)?(?:就)?(?:不搞了|算了|不弄了|放弃了|不考虑了)|"
    r"\b(?:Hong Kong|HK)\s+(?:isn't|is not)\s+happening\b|"
    r"\b(?:don't|do not|no longer)\s+want\s+to\s+(?:move|go|relocate|emigrate)\s+to\s+(?:Hong Kong|HK)\b|"
    r"\b(?:not|no longer|won't be|decided not to|aren't|am not)\s+(?:going to\s+|planning to\s+|want(?:ing)? to\s+)?"
    r"(?:mov(?:e|ing)|relocat(?:e|ing)|emigrat(?:e|ing)|immigrat(?:e|ing))\s+to\s+(?:Hong Kong|HK)"
    r"|\b(?:gave up|giving up|given up|dropped|drop)\s+(?:on\s+)?(?:the\s+)?(?:idea of\s+)?"
    r"(?:moving|relocating|emigrating|immigrating)\s+to\s+(?:Hong Kong|HK)"
    r"|\bHong Kong is (?:off|no longer)\b|\bcall(?:ing|ed)? off\s+(?:the\s+|our\s+|my\s+)?(?:Hong Kong|HK)\b"
    r"|\b(?:Hong Kong|HK)\s+(?:has\s+)?lost\s+(?:its|all)\s+(?:appeal|charm)"
    r"|(?:香港|港)(?:这事儿?|的事(?:情)?|这边)?(?:我们|我)?(?:决定|还是|就)?不(?:去|过去|搬)了|对(?:去|移民|搬去)?(?:香港|港)"
    r"(?:已经|现在|早就)?(?:没什么|没有?|不再?)(?:太)?(?:兴趣|感兴趣)",
    re.IGNORECASE)




def _withdrawn_schemes(text: str, schemes: list[re.Match[str]]) -> list[re.Match[str]]:
    """The schemes a clause takes back: those a withdrawal word reaches (before a switch word: "not TTPS, switching
    to QMAS"), else the one a switch leaves ("从高才通改走优才", "switching from GEP to QMAS", "QMAS instead of TTPS")."""
    switch = _SWITCH_TO.search(text)
    withdrawal = _WITHDRAW_EN.search(text) or _WITHDRAW_ZH.search(text)
    if withdrawal is not None:
        if HELD_ON_TO.search(text[max(0, withdrawal.start() - 12):withdrawal.start()]):
            return []  # "我不会放弃优才", "I'm not giving up on TTPS": held on to, not withdrawn
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


# What a clause does with a scheme it names: wants it, applies, switches to it ("直接帮我看高才通", "focus on IANG").
_KEEPS = re.compile(r"申请|走|想|打算|准备|看|办|继续|改|转|换|\b(?:apply|applying|go for|going for|want|focus|try|switch|"
                    r"move|stick|instead|keep|still)\b", re.IGNORECASE)


def _withdrawal_word(text: str) -> bool:
    withdrawal = _WITHDRAW_EN.search(text) or _WITHDRAW_ZH.search(text)
    return withdrawal is not None and not HELD_ON_TO.search(text[max(0, withdrawal.start() - 12):
                                                                           withdrawal.start()])


def _withdrawn_by_a_neighbour(before: str, text: str, after: str, schemes: list[re.Match[str]]
                              ) -> list[re.Match[str]]:
    """The schemes of a clause that only names them, withdrawn by the clause after it ("优才排队太久了，我不想再等") or
    before it ("还是算了吧，高才通门槛太高"), when that clause names no scheme of its own."""
    if _KEEPS.search(text):
        return []
    for neighbour in (after, before):
        if neighbour and not CATEGORY.search(neighbour) and not _MOVE_WITHDRAWN.search(neighbour) \
                and _withdrawal_word(neighbour) and not _SWITCH_TO.search(neighbour):
            return schemes[-1:] if neighbour is after else schemes[:1]
    return []


def target_category_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []

    def named(code: str) -> bool:
        return any(r.value == code for r in found)

    said = [c for c in clauses(ctx) if users_own(ctx, c)]
    for i, clause in enumerate(said):
        schemes = list(CATEGORY.finditer(clause.text))
        if not schemes:
            if _MOVE_WITHDRAWN.search(clause.text):
                found.append(retraction(MemoryType.INTENT, "targetCategory", None, clause.text))
            continue
        withdrawn = _withdrawn_schemes(clause.text, schemes) \
            or _withdrawn_by_a_neighbour(said[i - 1].text if i else "", clause.text, said[i + 1].text
                                         if i + 1 < len(said) else "", schemes)
        for m in withdrawn:
            if not named(code := category_code(m)):
                found.append(retraction(MemoryType.INTENT, "targetCategory", code, clause.text, category=code))
        # The scheme switched to is the new interest ("switching from GEP to QMAS"), in this clause or the next
        # ("优才我不等了，干脆转投资移民").
        switch = _SWITCH_TO.search(clause.text) if found and not withdrawn else None
        for m in schemes if withdrawn or switch else []:
            phrase = m.group(0).strip()
            after = withdrawn[-1].end() if withdrawn else switch.end() if switch else 0
            if m not in withdrawn and m.start() >= after and not named(code := category_code(m)):
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
    rf"|\bmy\s+{_ALLERGEN_EN.replace('what', 'what5')}\s+allergy\s+(?:is\s+gone|went away|has gone|is over)"
    rf"|\b(?:scratch|forget|remove|delete|drop)\s+(?:the|my|that)\s+{_ALLERGEN_EN.replace('what', 'what6')}\s+allergy\b",
    re.IGNORECASE)
_EN_NO_ALLERGIES = re.compile(r"\bI\s+(?:don't|do not)\s+have\s+(?:any\s+)?(?:food\s+)?allergies\b"
                              r"|\bI(?:'m| am)\s+not\s+allergic\s+to\s+anything\b|\bno\s+allergies\b", re.IGNORECASE)
_ZH_NOT_ALLERGIC = re.compile(
    rf"(?:^|我)(?:其实|现在|真的|根本)?对\s*(?P<what>[{CJK}A-Za-z]{{1,8}}?)\s*(?:已经|早就|现在)?(?:不|不再|没有?)(?:会)?过敏"
    rf"|我(?:已经|现在)?(?:不|不再|没有?)对\s*(?P<what2>[{CJK}A-Za-z]{{1,8}}?)\s*过敏"
    rf"|我(?:以前|之前|小时候)对\s*(?P<what3>[{CJK}A-Za-z]{{1,8}}?)\s*过敏[,，]?\s*(?:但是?|不过|可是)?(?:现在|已经)"
    r"(?:不|好了|没事)"
    rf"|我的?\s*(?P<what4>[{CJK}]{{1,6}}?)过敏(?:已经)?(?:好了|治好了|没了)")
_ZH_NO_ALLERGIES = re.compile(r"我(?:没有|没|无)(?:什么|任何)?(?:食物)?过敏|我(?:什么|啥)都不过敏")


def allergy_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in _sentences(ctx):
        if not users_own(ctx, clause):
            continue
        whole = (_ZH_NO_ALLERGIES if ctx.zh else _EN_NO_ALLERGIES).search(clause.text)
        if whole:
            found.append(retraction(MemoryType.FACT, "allergy", None, clause.text))
            continue
        for m in (_ZH_NOT_ALLERGIC if ctx.zh else _EN_NOT_ALLERGIC).finditer(clause.text):
            value = first_value(m)
            if value and value.lower() not in ("anything", "any", "it"):
                found.append(retraction(MemoryType.FACT, "allergy", value, clause.text))
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
    r"went missing|is no longer with us|crossed the rainbow bridge|flew off|flew away|ran off|escaped|got out)"
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
        if (_ZH_NO_PETS if ctx.zh else _EN_NO_PETS).search(clause.text) and users_own(ctx, clause):
            found.append(retraction(MemoryType.FACT, "pet", None, clause.text))
            continue
        for m in (_ZH_PET_GONE if ctx.zh else _EN_PET_GONE).finditer(clause.text):
            if not users_own(ctx, clause, m.start()):
                continue
            said = first_value(m)
            value = animals.get(said.lower() if not ctx.zh else said, said)
            if not any(r.value == value for r in found):
                found.append(retraction(MemoryType.FACT, "pet", value, clause.text))
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
    rf"|\b(?i:my contract)(?:\s+(?i:with|at)\s+(?P<company8>{_COMPANY}))?\s+(?i:ended|ran out|wasn't renewed|was not renewed)"
    rf"|\bI\s+(?i:handed in my notice|gave (?:my )?notice|resigned)\s+(?i:at|to|from)\s+(?P<company9>{_COMPANY})"
    rf"|\bI\s+(?i:no longer)\s+(?i:work)\s+(?i:at|for)\s+(?P<company4>{_COMPANY})"
    rf"|\bI(?i:'m| am)\s+(?i:no longer)\s+(?i:at|with)\s+(?P<company6>{_COMPANY})"
    rf"|\bI\s+(?i:don't|do not)\s+(?i:work)\s+(?i:at|for)\s+(?P<company5>{_COMPANY})\s+(?i:anymore|any more)"
    r"|\b(?i:my\s+company\s+(?:closed|shut down|went bust|folded))"
    rf"|^\s*(?i:just\s+|recently\s+)?(?i:quit|left)\s+(?P<company10>{_COMPANY})"
    r"|^\s*(?i:got|been)\s+(?i:laid off|fired|let go|made redundant)(?:\s+(?i:from)\s+(?i:my\s+)?(?P<title>[a-z]+(?:\s+[a-z]+)?)"
    rf"\s+(?i:job|position|role))?(?:\s+(?i:at|from|by)\s+(?P<company11>{_COMPANY}))?")
_ZH_JOB_ENDED = re.compile(
    rf"(?:^|我)(?:[{CJK}]{{0,6}}?)(?:从(?P<company>[{CJK}A-Za-z]{{2,12}}?))?"
    r"(?:被公司)?(?:离职|辞职|裸辞|被裁员|被裁|被辞退|被优化|被开|下岗|失业|退休|不干|裁员|裁)(?:了|(?=$|[，,。！!]))"
    rf"|(?:^|我)(?:[{CJK}]{{0,6}}?)被(?P<company3>[{CJK}A-Za-z]{{2,12}}?)(?:裁员|裁|辞退|开除|优化)了"
    rf"|跟(?P<company4>[{CJK}A-Za-z]{{2,12}}?)的合同(?:到期|结束)了"
    rf"|我(?:已经)?(?:辞掉|丢了)了?(?:工作|那份工作)"
    rf"|我(?:已经)?不在(?P<company2>[{CJK}A-Za-z]{{2,12}}?)(?:上班|工作|干)了"
    r"|公司[^，,。]{0,6}?(?:倒闭|关门|解散|破产|没了)了?|(?:工作|合同)(?:到期|没了)|(?:已经)?退休了")


# An ending still to come ends nothing yet: "下个月就要离职了", "I'm going to quit next month".
_NOT_YET = re.compile(r"就要|将要|快要|马上要|要(?=离职|辞职|退休)|准备|打算|计划|下个月|下周|明年|不考虑|不会|不想|没想过|"
                      r"\b(?:will|going to|gonna|about to|plan(?:ning)? to|thinking (?:of|about)|next (?:month|week|year))\b",
                      re.IGNORECASE)


def job_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in clauses(ctx):
        if not users_own(ctx, clause) or _NOT_YET.search(clause.text):
            continue
        m = (_ZH_JOB_ENDED if ctx.zh else _EN_JOB_ENDED).search(clause.text)
        if m is None:
            continue
        company = next((v for k, v in m.groupdict().items() if k.startswith("company") and v), None)
        title = m.groupdict().get("title")
        found.append(retraction(MemoryType.FACT, "currentJobTitle", title.strip() if title else None, clause.text))
        # Its own words: a second memory of the same text would be the first one's duplicate.
        name = company.strip() if company else None
        found.append(retraction(MemoryType.FACT, "currentCompany", name, ctx.say(
            f"不再在{name}工作" if name else "不再在原公司工作",
            f"No longer works at {name}" if name else "No longer works at their company")))
        break
    return found


# ---- immigrationTimeline: a planned time called off ---------------------------------------------------------------

_ZH_WHEN = (r"(?P<time>(?:明年|今年|后年)?(?:[一二三四五六七八九十\d]{1,2}月(?:份|底|初)?|春节|国庆|暑假|寒假|元旦|中秋|圣诞(?:节)?|年底|"
            r"年初|年中|上半年|下半年|春天|夏天|秋天|冬天)(?:前|后|之前|之后|以前)?|(?:明年|今年|后年))")
_ZH_TIMELINE_OFF = re.compile(rf"{_ZH_WHEN}[^，,。]{{0,8}}?(?:取消|不太?现实|来不及|推迟|作废|延后|往后推|赶不上|不行了|泡汤|黄了)"
                              rf"|(?:原本|本来|之前说的?|原定|原来)(?:打算|想|计划|准备|定的?)?{_ZH_WHEN.replace('time', 'time2')}")
_ZH_CALLED_OFF = re.compile(r"取消|不太?现实|来不及|推迟|作废|延后|往后推|赶不上|不行了|泡汤|黄了|改(?:成|到|为)|以后再说")
_EN_WHEN = (r"(?P<time>(?:(?:before|by|after|around|in)\s+)?(?:the\s+)?(?:end of\s+|early\s+|late\s+)?(?:next\s+|this\s+)?"
            r"(?:Christmas|Easter|Chinese New Year|summer|spring|autumn|fall|winter|year|January|February|March|April|May|"
            r"June|July|August|September|October|November|December|Q[1-4](?:\s+next year)?|20\d\d))")
_EN_TIMELINE_OFF = re.compile(
    rf"{_EN_WHEN}\b[^.;!?]{{0,40}}?\b(?:isn't going to work|won't work|is not going to work|was (?:way |far )?too ambitious|"
    r"is off|is out|isn't happening|won't happen|not realistic|isn't realistic|is unrealistic)"
    rf"|\b(?:aiming|planning|meant|supposed|hoping)\s+to\s+(?:move|apply|go|relocate|submit)\s+"
    rf"{_EN_WHEN.replace('time', 'time2')}\b",
    re.IGNORECASE)
_EN_CALLED_OFF = re.compile(r"\b(?:off|postpone\w*|push\w* (?:it )?back|delay\w*|not realistic|too ambitious|won't work|"
                            r"isn't going to work|out the window|scrap\w*|cancel\w*|instead)\b", re.IGNORECASE)


def timeline_retractions(ctx: Utterance) -> list[ExtractedMemory]:
    """A planned time called off ("暑假前搬过去不太现实了", "we were aiming to apply before summer, but that's off"): the
    time is taken back, whether or not a new one is given."""
    whole = Clause(ctx.text, 0)
    if not users_own(ctx, whole) or not (_ZH_CALLED_OFF if ctx.zh else _EN_CALLED_OFF).search(ctx.text):
        return []
    m = (_ZH_TIMELINE_OFF if ctx.zh else _EN_TIMELINE_OFF).search(ctx.text)
    if m is None:
        return []
    return [retraction(MemoryType.INTENT, "immigrationTimeline", first_value(m), ctx.text)]


Retractions = Callable[[Utterance], list[ExtractedMemory]]

# Each pack's retractions, by the pack's stage name (ExtractionRules.preferences).
RETRACTION_STAGES: dict[str, tuple[Retractions, ...]] = {
    "immigration": (target_category_retractions, allergy_retractions, job_retractions, timeline_retractions,
                    place_denials),
    "general": (allergy_retractions, pet_retractions, job_retractions, condition_retractions, language_retractions,
                everyday_retractions, place_denials),
}
