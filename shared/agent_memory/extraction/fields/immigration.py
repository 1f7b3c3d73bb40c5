"""Immigration plans: target schemes, a Hong Kong employer (the timeline is in timeline.py)."""

from __future__ import annotations

import re
from typing import Any

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.grammar import CJK, Utterance, clause_around, fact, intent, matches

# --------------------------------------------------------------------------------------
# targetCategory / hasHKEmployer
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
    r"|investment\s+(?:migration|immigration|route|scheme|visa)|" + _acronym("CIES"),
    "TECHTAS": r"科技人才(?:入境计划)?|Technology\s+Talent\s+Admission\s+Scheme(?:\s*\(TechTAS\))?|"
    + _acronym("TechTAS"),
}
_CATEGORY = re.compile(
    "(?:" + "|".join(f"(?P<{code}>{alias})" for code, alias in _CATEGORY_ALIASES.items()) + ")"
    r"(?:\s*(?P<cls>[A-C])\s*类|\s+(?:Category|Class|Type)\s+(?P<cls_en>[A-C])\b)?",
    re.IGNORECASE,
)
CATEGORY = _CATEGORY


def category_code(m: re.Match[str]) -> str:
    """The scheme a match of CATEGORY names."""
    return next(name for name in _CATEGORY_ALIASES if m[name])


_CATEGORY_INTEREST = re.compile(
    r"感兴趣|兴趣|想|打算|考虑|倾向|准备|计划|申请|走|办|选|目标|意向|关注|了解|适合|符合|换成|改成|转向|"
    r"\b(?:interest|interested|consider|considering|plan|planning|apply|applying|want|switch|switching|"
    r"switched|moving to|going with|"
    r"looking at|looking into|under|sponsor\w*|lean|leaning|"
    r"prefer|go for|going for|target|targeting|eligible|qualify|thinking about|aim|aiming)\b",
    re.IGNORECASE,
)
_CATEGORY_PREFERENCE = re.compile(
    r"更倾向|倾向于|比较倾向|更喜欢|更想走|更想申请|比起|相比|宁愿|宁可|"
    r"\b(?:prefer|prefers|preferred|rather|lean(?:ing)? towards?|go with|better fit)\b",
    re.IGNORECASE,
)
_CATEGORY_REJECTION = re.compile(
    r"不感兴趣|没兴趣|没有兴趣|不考虑|不想|不打算|不适合|不申请|不走|放弃|"
    r"\b(?:not interested|no interest|don't want|do not want|not considering|not planning|not going to|"
    r"rule out|ruled out|won't|no longer|changed my mind|decided against|dropped|dropping|giving up|gave up|"
    r"not for me)\b",
    re.IGNORECASE,
)

# A scheme's application, its parts and its progress ("高才通申请材料已准备好", "the TTPS fee is paid") are facts
# that mention the scheme, not a statement of interest in it: such a clause never fills the scheme's slot, so it
# never retires the interest stated before it.
_APPLICATION_PART = re.compile(
    r"申请(?:材料|资料|文件|费用?|表格?|书|进度|结果|状态|编号|条件|要求|流程|截止日?期?|人|者)|"
    r"\b(?:application|visa)\s+(?:fees?|forms?|documents?|materials?|status|results?|numbers?|progress|deadlines?)\b",
    re.IGNORECASE,
)
_APPLICATION_PROGRESS = re.compile(
    r"准备好|准备齐|备齐|缴纳|缴费|交了|付了|交上去|递交了|提交了|获批|批准了|批下来|通过了|拿到了|收到了|"
    r"\b(?:paid|submitted|approved|lodged|granted|(?:is|are)\s+ready)\b",
    re.IGNORECASE,
)

_HK = r"(?:香港|港)(?:的|本地)?\s*"
_HK_EMPLOYER_NONE = re.compile(
    r"在香港没有(?:工作|雇主)|"
    rf"(?:没有|没|还没有?|暂无|暂时没有|无)\s*(?:拿到|收到)?\s*{_HK}(?:公司的?)?\s*"
    r"(?:雇主|offer|工作offer|job offer|工作机会)"
    r"|\b(?:no|don't have an?|do not have an?|haven't got an?|without an?)\s+(?:Hong Kong|HK)(?:-based)?\s+"
    r"(?:employer|job offer|offer|job)\b",
    re.IGNORECASE,
)
_HK_EMPLOYER_SOME = re.compile(
    r"在(?:一家|家)?香港(?:本地)?的?(?:公司|企业|银行|机构)(?:上班|工作|任职)|"
    r"在香港(?:已经|已)?有(?:了)?\s*(?:一[个份]|个|份)?\s*(?:雇主|工作|offer|工作offer|job offer)|"
    r"香港(?:这边|那边|本地)?的?(?:公司|雇主|老板)[^,，。]{0,6}(?:担保|同意|愿意|给了?我)|"
    rf"在香港(?:的)?[{CJK}A-Za-z]{{2,8}}?(?:做|上班|工作|任职)(?!过)|"
    r"\bemployed\s+by\s+an?\s+(?:Hong Kong|HK)(?:-based)?\s+(?:firm|company|employer|bank)\b|"
    r"\bmy\s+employer\s+in\s+(?:Hong Kong|HK)\b|"
    rf"有\s*(?:一[个份]|个)?\s*{_HK}(?:公司的?)?\s*(?:雇主|offer|工作offer|job offer)"
    rf"|(?:拿到|收到|获得)了?\s*(?:一[个份])?\s*{_HK}(?:公司的?)?\s*(?:offer|工作|职位|雇主)"
    r"|香港雇主(?:已经)?(?:愿意|同意|给)"
    r"|\b(?:have|got|received|'ve got|has)\s+(?:an?\s+)?(?:job\s+)?offer\s+(?:from|in|with)\s+"
    r"(?:an?\s+)?(?:Hong Kong|HK)\b"
    r"|\b(?:have|'ve got|got)\s+an?\s+(?:Hong Kong|HK)(?:-based)?\s+(?:employer|job offer|offer|job)\b"
    r"|\bmy\s+(?:Hong Kong|HK)\s+employer\b",
    re.IGNORECASE,
)


def _preferred(ctx: Utterance, wanted: list[tuple[str, re.Match[str]]]) -> tuple[str, re.Match[str]]:
    """The scheme the user picks: the first one named after the last preference word ("比起优才我更倾向高才通",
    "I lean towards TTPS"), else the first one named."""
    cues = [c for c in _CATEGORY_PREFERENCE.finditer(ctx.text) if c.group(0) not in ("比起", "相比")]
    if cues:
        after = [(code, m) for code, m in wanted if m.start() >= cues[-1].end()]
        if after:
            return after[0]
    return wanted[0]


def _states_interest(clause: str) -> bool:
    if _CATEGORY_REJECTION.search(clause) or _APPLICATION_PROGRESS.search(clause):
        return False
    return bool(_CATEGORY_INTEREST.search(_APPLICATION_PART.sub(" ", clause)))


def target_category(ctx: Utterance) -> ExtractedMemory | None:
    wanted: list[tuple[str, re.Match[str]]] = []
    for m in _CATEGORY.finditer(ctx.text):
        clause = clause_around(ctx.text, m.start(), m.end())
        if _states_interest(clause):
            code = next(name for name in _CATEGORY_ALIASES if m[name])
            wanted.append((code, m))
    if not wanted:
        return None
    code, m = _preferred(ctx, wanted)
    phrase = m.group(0).strip()
    metadata: dict[str, Any] = {}
    if m["cls"] or m["cls_en"]:
        metadata["subclass"] = (m["cls"] or m["cls_en"]).upper()
    others = sorted({other for other, _ in wanted} - {code})
    if others:
        metadata["also_interested_in"] = others
    if _CATEGORY_PREFERENCE.search(clause_around(ctx.text, m.start(), m.end())):
        # Choosing one route over another is a preference; being interested in one is an intent.
        return ExtractedMemory(memory_type=MemoryType.PREFERENCE, field="targetCategory", value=code,
                               content=ctx.say(f"更倾向{phrase}", f"Prefers {phrase}"), category=code,
                               metadata=metadata)
    return intent(
        "targetCategory",
        code,
        ctx.say(f"对{phrase}感兴趣", f"Interested in {phrase}"),
        category=code,
        metadata=metadata,
    )


def hk_employer(ctx: Utterance) -> ExtractedMemory | None:
    for _ in matches(_HK_EMPLOYER_NONE, ctx, negation=False, future=False):
        return fact("hasHKEmployer", False, ctx.say("没有香港雇主", "Has no Hong Kong employer"))
    for _ in matches(_HK_EMPLOYER_SOME, ctx):
        return fact("hasHKEmployer", True, ctx.say("有香港雇主", "Has a Hong Kong employer"))
    return None
