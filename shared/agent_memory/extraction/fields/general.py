"""The general pack's readings of who the user is: the immigration rules where they fit a personal assistant,
with values worded as the user says them ("Canadian", "本科", "单身"), a place of any name after "I live in",
and the list fields (languages, allergies) one memory per value. `GENERAL_RULES` names every rule of the pack."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.fields.career import EN_JOB_WORDS, ZH_JOB_WORDS, company, job_title
from agent_memory.extraction.fields.education import education
from agent_memory.extraction.fields.everyday import EVERYDAY_RULES, GOAL_CUE
from agent_memory.extraction.fields.family import has_children, marital_status
from agent_memory.extraction.fields.location import CITY_ZH_RE, location
from agent_memory.extraction.fields.personal import COUNTRIES, age, name, nationality, preferred_name
from agent_memory.extraction.grammar import CJK, Utterance, alternation, clause_around, fact, matches
from agent_memory.extraction.numbers import parse_number
from agent_memory.extraction.rule import FieldRule, single

_ZH_CALL_ME = re.compile(
    rf"(?:可以|就|直接|请|^)(?:叫|称呼|喊)我\s*(?P<name>(?![去来起吃回上下出进过帮做等别一])(?:[{CJK}]{{2,3}}|[A-Z][a-z]+))"
    r"(?=\s*(?:就行|就好|吧|[。.!！,，]|$))"
)
_EN_I_AM = re.compile(r"(?:^|\b(?:Hi|Hello|Hey)(?:\s+there)?[,!.]?\s+)(?:I'm|I am|Name's|Name is)\s+(?P<name>[A-Z][a-z]+)"
                     r"(?=\s*(?:[,.!]|$))")
_NOT_A_NAME = frozenset({*(d for _, _, d in COUNTRIES.values()), "English", "Fine", "Good", "Great", "Okay", "Sorry",
                         "Here", "Back", "Ready", "Done", "Sure", "Single", "Married", "Divorced", "Vegan",
                         "Vegetarian", "Retired", "Tired", "Busy", "Free", "New", "Home"})


def preferred_name_fact(ctx: Utterance) -> ExtractedMemory | None:
    """The name to call the user: the one they ask for, else the name they give ("Hi, I'm Tom")."""
    found = preferred_name(ctx) or name(ctx)
    value = str(found.value) if found is not None else ""
    for m in matches(_ZH_CALL_ME if ctx.zh else _EN_I_AM, ctx, future=False, other=False) if not value else ():
        if m["name"] not in _NOT_A_NAME:
            value = m["name"]
            break
    if not value:
        return None
    return fact("preferredName", value, ctx.say(f"希望被称呼为{value}", f"Goes by {value}"))


_DEMONYMS = {en.removeprefix("the "): demonym for _, en, demonym in COUNTRIES.values()}
# Countries the immigration pack's table leaves out: country -> (Chinese name, demonym).
_MORE_COUNTRIES = {
    "Portugal": ("葡萄牙", "Portuguese"), "Greece": ("希腊", "Greek"), "Norway": ("挪威", "Norwegian"),
    "Denmark": ("丹麦", "Danish"), "Finland": ("芬兰", "Finnish"), "Austria": ("奥地利", "Austrian"),
    "Belgium": ("比利时", "Belgian"), "Argentina": ("阿根廷", "Argentinian"), "Chile": ("智利", "Chilean"),
    "Colombia": ("哥伦比亚", "Colombian"), "Peru": ("秘鲁", "Peruvian"), "Egypt": ("埃及", "Egyptian"),
    "Morocco": ("摩洛哥", "Moroccan"), "Israel": ("以色列", "Israeli"), "Iran": ("伊朗", "Iranian"),
    "Kenya": ("肯尼亚", "Kenyan"), "Ghana": ("加纳", "Ghanaian"), "Ethiopia": ("埃塞俄比亚", "Ethiopian"),
    "Bangladesh": ("孟加拉", "Bangladeshi"), "Sri Lanka": ("斯里兰卡", "Sri Lankan"), "Nepal": ("尼泊尔", "Nepalese"),
    "Czechia": ("捷克", "Czech"), "Hungary": ("匈牙利", "Hungarian"), "Romania": ("罗马尼亚", "Romanian"),
    "Scotland": ("苏格兰", "Scottish"), "Wales": ("威尔士", "Welsh"), "Jamaica": ("牙买加", "Jamaican"),
    "Mongolia": ("蒙古", "Mongolian"), "Cambodia": ("柬埔寨", "Cambodian"), "Saudi Arabia": ("沙特", "Saudi"),
    "Iceland": ("冰岛", "Icelandic"), "Cuba": ("古巴", "Cuban"), "Venezuela": ("委内瑞拉", "Venezuelan"),
    "Lebanon": ("黎巴嫩", "Lebanese"), "Iraq": ("伊拉克", "Iraqi"), "Croatia": ("克罗地亚", "Croatian"),
    "Serbia": ("塞尔维亚", "Serbian"), "Bulgaria": ("保加利亚", "Bulgarian"), "Estonia": ("爱沙尼亚", "Estonian"),
    "Lithuania": ("立陶宛", "Lithuanian"), "Latvia": ("拉脱维亚", "Latvian"), "Slovakia": ("斯洛伐克", "Slovak"),
}
_MORE_DEMONYMS = {demonym: country for country, (_, demonym) in _MORE_COUNTRIES.items()}
_EN_MORE_NATIONALITY = re.compile(
    rf"\bI(?:'m| am)\s+(?:an?\s+)?(?P<d>{alternation(_MORE_DEMONYMS)})(?=\s*(?:[,.;!?]|$|\band\b|\bbut\b|\bby\b))"
    rf"|\b(?P<d2>{alternation(_MORE_DEMONYMS)})\s+(?:citizen|passport|national)\b"
    rf"|(?<!originally )\bfrom\s+(?P<c>{alternation(_MORE_COUNTRIES)})\b(?=\s*(?:[,.;!?]|$|\band\b|\bbut\b))"
)
_ZH_MORE_NATIONALITY = re.compile(
    rf"我是\s*(?P<c>{alternation([zh for zh, _ in _MORE_COUNTRIES.values()])})人"
    rf"|(?P<c2>{alternation([zh for zh, _ in _MORE_COUNTRIES.values()])})(?:国籍|公民|护照|籍)"
)
_EN_NICKNAME_NATIONALITY = re.compile(r"\bI(?:'m| am)\s+an?\s+(?P<nick>Brit|Aussie|Kiwi|Yank)\b")
_NICKNAMES = {"Brit": "British", "Aussie": "Australian", "Kiwi": "New Zealander", "Yank": "American"}


_ZH_AGE_WORDS = re.compile(r"(?:^|我)(?:今年|刚)\s*(?:刚)?满?\s*(?P<num>[二三四五六七八九]十[一二三四五六七八九]?|[1-9]\d)"
                           r"(?=岁|周岁|了|啦|[。.!！,，]|$)")


def age_in_words(ctx: Utterance) -> ExtractedMemory | None:
    """The age rules, and "我今年二十八" in Chinese numerals without 岁."""
    found = age(ctx)
    if found is not None or not ctx.zh:
        return found
    for m in matches(_ZH_AGE_WORDS, ctx, "num"):
        value = parse_number(m["num"])
        if value is not None:
            return fact("age", int(value), f"用户{int(value)}岁")
    return None


def nationality_as_said(ctx: Utterance) -> ExtractedMemory | None:
    """An English speaker's nationality as a demonym ("Canadian"), a Chinese speaker's as the country (新加坡)."""
    found = nationality(ctx)
    if found is None:
        return _more_nationality(ctx)
    if ctx.zh:
        return found
    value = _DEMONYMS.get(str(found.value), str(found.value))
    return fact("nationality", value, f"Nationality: {value}")


# A place of any name after a verb of living there: "I live in a small village near York", "living in Cork".
_EN_PLACE = re.compile(
    r"\b(?:live|living|lives|based|reside|residing|settled|moved|relocated|from\s+home|I've\s+lived|we've\s+lived|"
    r"(?:I|we)\s+(?:rent|own|bought|have)\s+(?:a|an|my|our)\s+(?:flat|apartment|house|place|home|condo))\s+"
    r"(?:(?:just|right|currently|now|here)\s+)?(?:in|to|near|outside(?:\s+of)?)\s+"
    r"(?:(?:a|an|the)\s+(?:[a-z]+\s+){0,3}(?:near|outside|close\s+to|in)\s+)?"
    r"(?P<city>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})"
)
_NOT_A_PLACE = re.compile(
    r"^(?:I|The|A|An|My|Our|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|"
    r"May|June|July|August|September|October|November|December|English|Chinese|German|French|Spanish|Marketing|"
    r"Sales|Finance|IT|HR|Engineering)$"
)


_EN_NOW_IN = re.compile(r"\bnow\s+(?:living\s+|based\s+)?in\s+(?P<city>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)")
_ZH_LIVE = re.compile(rf"(?:^|我|我们|我家)(?:现在|目前|一直|常)?(?:住|在)\s*(?P<city>{CITY_ZH_RE.pattern})(?=[。.!！,，]|$)")


# A place the user goes to, looks for or plans is not where they live.
_NOT_LIVING = re.compile(
    r"\b(?:looking|look|find|finding|search|searching|recommend|flying|fly|flight|trip|travel\w*|visit\w*|heading|"
    r"going|holiday|vacation|weekend|conference|meeting|weather|hotel|restaurant|tickets?|next\s+week)\b"
    r"|去|旅游|旅行|出差|玩|机票|酒店|天气",
    re.IGNORECASE,
)


def _not_home(ctx: Utterance, start: int, end: int) -> bool:
    clause = clause_around(ctx.text, start, end)
    return bool(GOAL_CUE.search(clause) or _NOT_LIVING.search(clause))


def _more_nationality(ctx: Utterance) -> ExtractedMemory | None:
    """A nationality the immigration pack's table does not name ("I'm from Portugal", "I'm a Brit")."""
    if ctx.zh:
        for m in matches(_ZH_MORE_NATIONALITY, ctx, past=True):
            value = m["c"] or m["c2"]
            return fact("nationality", value, f"国籍：{value}")
        return None
    for m in matches(_EN_MORE_NATIONALITY, ctx, past=True):
        value = m["d"] or m["d2"] or _MORE_COUNTRIES[m["c"]][1]
        return fact("nationality", value, f"Nationality: {value}")
    for m in matches(_EN_NICKNAME_NATIONALITY, ctx, future=False):
        value = _NICKNAMES[m["nick"]]
        return fact("nationality", value, f"Nationality: {value}")
    return None


def current_location(ctx: Utterance) -> ExtractedMemory | None:
    """Where the user lives now; not a place they plan, visit or save up for ("saving up to buy a flat in
    Berlin", "flying to Tokyo")."""
    found = location(ctx)
    for m in matches(_ZH_LIVE, ctx, "city", past=True) if found is None and ctx.zh else ():
        return fact("currentLocation", m["city"], f"目前在{m['city']}")
    if found is not None:
        at = ctx.text.find(str(found.value))
        if at >= 0 and _not_home(ctx, at, at + len(str(found.value))):
            return None
        return found
    for m in matches(_EN_PLACE, ctx, "city", past=True):
        city = m["city"]
        if _NOT_A_PLACE.match(city) or _not_home(ctx, m.start(), m.end()):
            continue
        return fact("currentLocation", city, f"Lives in {city}")
    for m in [*matches(_EN_JOB_IN, ctx, "city", past=True), *matches(_EN_NOW_IN, ctx, "city")] if not ctx.zh else ():
        if not _NOT_A_PLACE.match(m["city"]) and not _not_home(ctx, m.start(), m.end()):
            return fact("currentLocation", m["city"], f"Lives in {m['city']}")
    return None


_EN_TITLE_LEAD = re.compile(r"^(?:retired|freelance|self-employed|part-time|full-time|semi-retired)\s+", re.I)
_EN_TITLE_TAIL = re.compile(r"\s+(?:living|from|who|working)\b.*$", re.I)
_ZH_TITLE_LEAD = re.compile(r"^(?:退休|自由职业|兼职|全职)(?:的)?")
_ZH_STUDIED = re.compile(r"(?:学的是|专业是|学|读的是|读)\s*$")


# Jobs the immigration rules' vocabulary lacks, and titles a user names after "I work as".
_EN_MORE_JOBS = (
    "barista|cashier|waiter|waitress|bartender|driver|plumber|electrician|carpenter|mechanic|farmer|cleaner|nanny|"
    "artist|musician|photographer|therapist|psychologist|social worker|vet|veterinarian|firefighter|soldier|"
    "librarian|tutor|coach|trainer|translator|cook|baker|hairdresser|paramedic|midwife|caregiver|carer|"
    "receptionist|secretary|clerk|pilot|student|PhD student|postdoc|housewife|stay-at-home (?:mom|mum|dad|parent)|"
    "graphic designer|illustrator|programmer|data scientist|chef|butcher|florist|realtor|real estate agent|"
    "pharmacist|optician|physiotherapist|physical therapist|dentist|surgeon|teacher|professor"
)
_EN_JOB_MORE = re.compile(
    r"\bI\s+work\s+as\s+(?:an?\s+|the\s+)?(?P<title>[A-Za-z][A-Za-z -]{1,40}?)(?=\s*(?:[,.;!?]|$)|\s+(?:at|in|for|and|"
    r"from|with|since)\b)"
    r"|(?:\bI(?:'m| am)|\bas|^|,)\s*an?\s+(?:(?:freelance|retired|part-time|full-time|senior|junior|trainee)\s+)?"
    r"(?P<known>[a-z][a-z -]{1,40}?)(?=\s*(?:[,.;!?]|$)|\s+(?:at|in|for|and|from|with|since|who|living|based|of)\b)"
    r"|\bI\s+teach\s+(?P<teach>[a-z ]{2,30}?)(?=\s*(?:[,.;!?]|$|\b(?:at|in|to)\b))",
    re.IGNORECASE,
)
_EN_MORE_JOB_WORDS = re.compile(rf"\b(?:{_EN_MORE_JOBS})\b", re.IGNORECASE)
_EN_JOB_IN = re.compile(rf"\b(?:{_EN_MORE_JOBS}|engineer|developer|manager|designer|analyst|consultant|nurse|doctor|"
                        rf"lawyer|accountant|researcher|officer)s?\s+(?:based\s+)?in\s+(?P<city>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)")
_ZH_AS_A = re.compile(r"作为(?:一名|一个|一位|个|名)?(?P<title>[\u4e00-\u9fff]{2,6}?)[,，]")
_ZH_MORE_JOBS = re.compile(r"我是(?:一名|一个|一位|个|名)?(?P<title>全职妈妈|全职爸爸|全职太太|家庭主妇|自由职业者|个体户|大学生|"
                           r"外卖员|快递员|保安|保姆|农民|工人|学生|退休工人)")


def _title_in_more_jobs(ctx: Utterance) -> str:
    if ctx.zh:
        as_a = next((m["title"] for m in matches(_ZH_AS_A, ctx, "title") if ZH_JOB_WORDS.search(m["title"])), "")
        return as_a or next((m["title"] for m in matches(_ZH_MORE_JOBS, ctx, "title", past=True)), "")
    for m in matches(_EN_JOB_MORE, ctx, past=True):
        if m["teach"]:
            return "teacher"
        title = (m["title"] or m["known"] or "").strip()
        if m["title"] or (len(title.split()) <= 4 and (_EN_MORE_JOB_WORDS.search(title)
                                                      or EN_JOB_WORDS.search(title))):
            return _EN_TITLE_LEAD.sub("", title)
    return ""


def job_title_as_said(ctx: Utterance) -> ExtractedMemory | None:
    """The job without what only qualifies it ("retired police officer" -> "police officer"); a subject studied
    ("学的是会计") is not a job."""
    found = job_title(ctx)
    if found is None:
        title = _title_in_more_jobs(ctx)
        return fact("currentJobTitle", title, ctx.say(f"职业：{title}", f"Works as {title}")) if title else None
    raw = str(found.value)
    at = ctx.text.find(raw)
    if ctx.zh and at >= 0 and _ZH_STUDIED.search(ctx.text[max(0, at - 4):at]):
        return None
    value = _ZH_TITLE_LEAD.sub("", raw) if ctx.zh else _EN_TITLE_TAIL.sub("", _EN_TITLE_LEAD.sub("", raw))
    value = value or raw
    return fact("currentJobTitle", value, ctx.say(f"职业：{value}", f"Works as {value}"))


_ZH_WORKPLACE = re.compile(
    rf"(?:是|在)\s*(?P<company>[{CJK}A-Za-z]{{2,12}}?(?:医院|公司|银行|大学|学校|集团|研究所|研究院|事务所|诊所|中学|小学))"
    r"(?:的|工作|上班|当|做)"
)
_ZH_GENERIC_PLACE = re.compile(r"^在?(?:一家|一个|一所|某|这家|那家|家|本地|附近)|三甲")


_EN_JOINED = re.compile(r"\b(?:I(?:'ve)?\s+(?:just\s+|recently\s+)?joined|I'm\s+at|I\s+am\s+at)\s+"
                        r"(?P<company>[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,2})")


def workplace(ctx: Utterance) -> ExtractedMemory | None:
    """The employer, and a Chinese speaker's named workplace ("华西医院的一名护士")."""
    found = company(ctx)
    if found is None and not ctx.zh:
        for m in matches(_EN_JOINED, ctx, "company", past=True):
            if not _NOT_A_PLACE.match(m["company"]):
                return fact("currentCompany", m["company"], f"Works at {m['company']}")
    if found is not None or not ctx.zh:
        return found
    for m in matches(_ZH_WORKPLACE, ctx, "company", past=True):
        value = m["company"]
        if not _ZH_GENERIC_PLACE.search(value):
            return fact("currentCompany", value, f"就职于{value}")
    return None


def education_as_said(ctx: Utterance) -> ExtractedMemory | None:
    found = education(ctx)
    if found is None or not ctx.zh or found.value != "学士":
        return found
    return fact("education", "本科", "最高学历：本科")


# A Chinese speaker's own word for the status ("单身" is not "未婚" to them), by the status it names.
_EN_STATUS_IN_A_LIST = re.compile(r"^I(?:'m| am)\s+\d{2}\s*,\s*(?P<status>married|single|divorced|widowed|engaged)\b")
_SINGLE_PARENT = re.compile(r"\bsingle\s+(?:dad|mom|mum|father|mother|parent)\b|单亲(?:妈妈|爸爸|母亲|父亲)", re.IGNORECASE)
_ZH_MARITAL_WORDS = {"单身": "未婚", "离婚": "离异", "离异": "离异", "丧偶": "丧偶", "已婚": "已婚"}


_ENGAGED = re.compile(r"\bI(?:'m| am|'ve\s+just\s+got|\s+just\s+got|\s+got)\s+(?:just\s+|recently\s+)?engaged\b|我订婚了"
                      r"|\bmy\s+fianc[eé]e?\b|我(?:的)?未婚[夫妻]", re.IGNORECASE)


def marital_status_as_said(ctx: Utterance) -> ExtractedMemory | None:
    for _ in matches(_SINGLE_PARENT, ctx, future=False):
        value = ctx.say("单身", "single")
        return fact("maritalStatus", value, ctx.say("单身", "Marital status: single"))
    for m in matches(_EN_STATUS_IN_A_LIST, ctx, future=False):  # "I'm 38, married, two kids"
        return fact("maritalStatus", m["status"], f"Marital status: {m['status']}")
    for _ in matches(_ENGAGED, ctx, future=False, other=False):
        value = ctx.say("订婚", "engaged")
        return fact("maritalStatus", value, ctx.say("已订婚", "Engaged"))
    found = marital_status(ctx)
    if found is None or not ctx.zh:
        return found
    said = next((word for word, status in _ZH_MARITAL_WORDS.items() if word in ctx.text and status == found.value),
                str(found.value))
    return fact("maritalStatus", said, found.content if "spouse" in found.metadata else said,
                metadata=found.metadata)


_GRANDPARENT = re.compile(
    r"当上?了?(?:外婆|外公|奶奶|爷爷|姥姥|姥爷)|我(?:的)?(?:孙子|孙女|外孙|外孙女)"
    r"|\bI(?:'m| am)\s+(?:a\s+)?(?:new\s+)?grand(?:mother|father|ma|pa|parent)\b|\bmy\s+grand(?:kids|children|son|daughter)\b"
    r"|\b(?:just\s+)?had\s+(?:our|my|a)\s+(?:first\s+|second\s+|third\s+)?(?:baby|child|son|daughter)\b"
    r"|\b(?:I|we)(?:'ve\s+got|\s+have)\s+(?:a|an|one|two|three|\d)\s+(?:toddler|newborn|baby|infant|teenager|teen)s?\b"
    r"|\b(?:I|we)(?:'ve\s+got|\s+have)\s+an?\s+\d{1,2}[- ]year[- ]old\s*(?:[,.;!?]|$|\b(?:son|daughter|boy|girl|kid)\b)"
    r"|有(?:一|两|三|\d)个[^，。,.]{0,6}的(?:孩子|女儿|儿子|宝宝)"
    r"|\bsingle\s+(?:dad|mom|mum|father|mother|parent)\b|单亲(?:妈妈|爸爸|母亲|父亲)",
    re.IGNORECASE,
)


def children(ctx: Utterance) -> ExtractedMemory | None:
    """Children, also when the user is a grandparent or has just had a baby."""
    found = has_children(ctx)
    if found is not None:
        return found
    for _ in matches(_GRANDPARENT, ctx, future=False):
        return fact("hasChildren", True, ctx.say("有孩子", "Has children"))
    return None


# --------------------------------------------------------------------------------------
# languageSkills: one memory per language
# --------------------------------------------------------------------------------------

LANGUAGES_EN = (
    "English", "Cantonese", "Mandarin", "Chinese", "Japanese", "Korean", "French", "German", "Spanish", "Italian",
    "Portuguese", "Hindi", "Dutch", "Russian", "Arabic", "Polish", "Swedish", "Norwegian", "Danish", "Finnish",
    "Greek", "Turkish", "Vietnamese", "Thai", "Hebrew", "Swahili", "Urdu", "Bengali", "Punjabi", "Tamil",
    "Indonesian", "Malay", "Tagalog", "Czech", "Hungarian", "Romanian", "Ukrainian", "Persian", "Farsi", "Catalan",
    "Irish", "Welsh", "Afrikaans", "Serbian", "Croatian", "Bulgarian", "Slovak",
)
LANGUAGES_ZH = (
    "英语", "英文", "粤语", "广东话", "普通话", "国语", "中文", "汉语", "日语", "日文", "韩语", "法语", "德语", "西班牙语",
    "意大利语", "葡萄牙语", "俄语", "阿拉伯语", "荷兰语", "泰语", "越南语", "马来语", "印尼语", "四川话", "上海话",
    "闽南语", "闽南话", "客家话", "潮汕话", "东北话", "湖南话", "手语", "瑞典语", "希腊语", "土耳其语", "波兰语",
    "繁体中文", "繁体字", "繁体", "简体中文", "简体字", "简体",
)
_LANG_EN = alternation(LANGUAGES_EN)
_LANG_ZH = alternation(LANGUAGES_ZH)
_EN_LIST = rf"(?:{_LANG_EN})(?:(?:\s*,\s*|\s+and\s+|\s*,\s*and\s+)(?:(?:some|a\s+little|basic|fluent)\s+)?(?:{_LANG_EN}))*"
_EN_SKILL = re.compile(
    rf"\bI\s+(?:can\s+)?(?:speak|understand|read|know)\s+(?:(?:two|three|four|five|several|\d)\s+languages\s*[:,(-]?\s*)?"
    rf"(?:(?:fluent|native|good|basic|some|decent|a\s+little|a\s+bit\s+of)\s+)?{_EN_LIST}"
    rf"|\bmy\s+(?:first|native|mother)\s+(?:language|tongue)\s+is\s+{_EN_LIST}"
    rf"|\bI\s+grew\s+up\s+speaking\s+{_EN_LIST}"
    rf"|\b(?:fluent|native|proficient|conversational|bilingual|trilingual)\s+in\s+{_EN_LIST}"
    rf"|\bnative\s+(?:{_LANG_EN})\s+speaker|\b(?:{_LANG_EN})\s+is\s+my\s+(?:native|first|mother)\s+(?:language|tongue)"
    rf"|\bmy\s+(?:{_LANG_EN})\s+is\s+(?:pretty\s+|quite\s+|fairly\s+|very\s+|still\s+)?(?:fluent|good|basic|decent|"
    r"okay|ok|rusty|limited|native|excellent|passable|not bad|conversational)"
    rf"|\bI\s+can\s+(?:get\s+by|hold\s+a\s+conversation)\s+in\s+{_EN_LIST}",
    re.IGNORECASE,
)
_ZH_LIST = rf"(?:{_LANG_ZH})(?:\s*(?:、|和|跟|以及|,|，)\s*(?:一点点?|一些|点|还有)?\s*(?:{_LANG_ZH}))*"
_ZH_SKILL = re.compile(
    rf"(?:会说|会讲|能说|能讲|会|懂|精通|说得了)(?:一点点?|一些|点|流利的|一口流利的|一口|地道的|标准的)?\s*{_ZH_LIST}"
    rf"(?!老师|课|班|专业|系|考试|歌|电影|翻译)"
    rf"|(?:{_LANG_ZH})(?:水平|口语)?(?:说得|讲得)?(?:很|非常|还|比较|挺|蛮|算|特别|只|也)?"
    r"(?:流利|熟练|不错|还行|可以|行|一般|凑合|好|会一点点?|会一些|懂一点|母语)"
    rf"|母语是\s*{_ZH_LIST}"
)


def languages(ctx: Utterance) -> list[ExtractedMemory]:
    pattern, words = (_ZH_SKILL, LANGUAGES_ZH) if ctx.zh else (_EN_SKILL, LANGUAGES_EN)
    named = re.compile(alternation(words), re.IGNORECASE)
    found: dict[str, ExtractedMemory] = {}
    for m in matches(pattern, ctx, future=False, negation=not ctx.zh):
        for said in named.findall(m.group(0)):
            language = said if ctx.zh else said.capitalize()
            found.setdefault(language, fact("languageSkills", language,
                                            ctx.say(f"会说{language}", f"Speaks {language}")))
    return list(found.values())


# --------------------------------------------------------------------------------------
# allergy: one memory per allergen
# --------------------------------------------------------------------------------------

_EN_ALLERGY = re.compile(
    r"\ballergic\s+to\s+(?P<list>[A-Za-z][A-Za-z ,'-]{1,60}?)(?=\s*(?:[.;!?]|$|\bso\b|\bbut\b|\bwhich\b|\bbecause\b|"
    r",?\s*and\s+(?:I|I'm|I've|my|we|it|they|he|she|please|also)\b))"
    r"|\b(?:I\s+have|I've\s+got|I\s+suffer\s+from)\s+(?:an?\s+|a\s+(?:mild|severe|bad)\s+)?"
    r"(?P<one>[A-Za-z][A-Za-z -]{1,25}?)\s+allerg(?:y|ies)\b"
    r"|\bmy\s+(?P<own>[A-Za-z][A-Za-z -]{1,25}?)\s+allerg(?:y|ies)\b",
    re.IGNORECASE,
)
_ZH_ALLERGY = re.compile(
    rf"对\s*(?P<list>[{CJK}A-Za-z、和跟]{{1,16}}?)\s*(?:都|也)?过敏"
    rf"|(?:^|[,，。]|还|也|我)(?:有点|有些|有|还有点?|也有点?)?\s*(?P<one>(?:(?![对有我点还也])[{CJK}A-Za-z]){{1,6}}?)过敏"
)
_SPLIT_EN = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+|\s*&\s*", re.IGNORECASE)
_SPLIT_ZH = re.compile(r"[、和跟及]")
_VAGUE = re.compile(r"^(?:it|them|that|this|things|anything|everything|stuff|很多|好多|各种|一些|什么|东西)"
                    r"|\b(?:I|I'm|is|are|have|has|my|was)\b", re.I)
_QUALIFIER_EN = re.compile(r"^(?:all|most|some|certain|any|mild(?:ly)?|severe(?:ly)?|very|a bit|slightly)\s+", re.I)


def allergies(ctx: Utterance) -> list[ExtractedMemory]:
    found: dict[str, ExtractedMemory] = {}
    pattern, split = (_ZH_ALLERGY, _SPLIT_ZH) if ctx.zh else (_EN_ALLERGY, _SPLIT_EN)
    for m in matches(pattern, ctx, future=False):
        raw = next(value for value in m.groupdict().values() if value)
        for item in split.split(raw):
            value = _QUALIFIER_EN.sub("", item.strip()) if not ctx.zh else item.strip()
            if value and len(value.split()) <= 4 and not _VAGUE.match(value):
                found.setdefault(value.casefold(), fact("allergy", value, ctx.say(f"对{value}过敏",
                                                                                   f"Allergic to {value}")))
    return list(found.values())


GENERAL_RULES: dict[str, FieldRule] = {
    "general.preferredName": single("preferredName", preferred_name_fact),
    "general.age": single("age", age_in_words),
    "general.nationality": single("nationality", nationality_as_said),
    "general.currentLocation": single("currentLocation", current_location),
    "general.currentJobTitle": single("currentJobTitle", job_title_as_said),
    "general.currentCompany": single("currentCompany", workplace),
    "general.education": single("education", education_as_said),
    "general.maritalStatus": single("maritalStatus", marital_status_as_said),
    "general.hasChildren": single("hasChildren", children),
    "general.languageSkills": FieldRule("languageSkills", languages),
    "general.allergy": FieldRule("allergy", allergies),
    **EVERYDAY_RULES,
}
