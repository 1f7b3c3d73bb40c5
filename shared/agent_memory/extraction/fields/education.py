"""Education: highest degree, university, major."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.grammar import CJK, Utterance, alternation, clause_around, fact, matches, stated

# --------------------------------------------------------------------------------------
# education
# --------------------------------------------------------------------------------------

# Rank -> (Chinese label, English label). Higher rank = higher degree.
_EDU_LEVELS = {
    5: ("博士", "PhD"), 4: ("硕士", "Master's"), 3: ("学士", "Bachelor's"), 2: ("大专", "Associate"),
    1: ("高中", "High school"),
}
_ZH_EDU_TERMS = {
    "博士后": 5, "博士": 5, "读博": 5, "硕士": 4, "研究生": 4, "读研": 4, "本科": 3, "学士": 3, "大专": 2,
    "专科": 2, "高中": 1, "中专": 1,
}
_ZH_EDU = re.compile(rf"(?P<term>{alternation(_ZH_EDU_TERMS)})")
_ZH_HIGH_SCHOOL_CONTEXT = re.compile(r"^(?:高中|中专)(?:毕业|学历|文凭)|(?:学历|文凭)(?:是|:)?\s*$")
_EN_EDU = re.compile(
    r"(?P<r5>(?<![A-Za-z])(?:Ph\.?\s?D|DPhil)(?![A-Za-z])\.?|\bdoctorate\b|\bdoctoral degree\b)"
    r"|(?P<r4>\bmaster'?s\b|\bmasters\b|\bmaster degree\b|\bmaster of (?:science|arts|engineering|business)\b"
    r"|(?<![A-Za-z])(?:M\.?Sc|E?MBA|MEng|MPhil|MPA|LLM)(?![A-Za-z])|\bM\.S\.|\bgraduate degree\b)"
    r"|(?P<r3>\bbachelor'?s\b|\bbachelors\b|\bbachelor degree\b"
    r"|(?<![A-Za-z])(?:B\.?Sc|BEng)(?![A-Za-z])|\bB\.S\."
    r"|\bundergraduate degree\b|\bcollege degree\b)"
    r"|(?P<r2>\bassociate'?s? degree\b)"
    r"|(?P<r1>\bhigh school (?:diploma|graduate|education)\b|\bfinished high school\b"
    r"|(?<![A-Za-z])GED(?![A-Za-z]))",
    re.IGNORECASE,
)


def education(ctx: Utterance) -> ExtractedMemory | None:
    best = 0
    for m in matches(_ZH_EDU, ctx, "term"):
        rank = _ZH_EDU_TERMS[m["term"]]
        if rank == 1 and not (
            _ZH_HIGH_SCHOOL_CONTEXT.search(ctx.text[m.start() : m.end() + 2])
            or _ZH_HIGH_SCHOOL_CONTEXT.search(ctx.text[max(0, m.start() - 4) : m.start()])
        ):
            continue  # "高中同学" is not a degree
        best = max(best, rank)
    for m in matches(_EN_EDU, ctx):
        best = max(best, next(int(name[1]) for name, value in m.groupdict().items() if value))
    if not best:
        return None
    zh_label, en_label = _EDU_LEVELS[best]
    value = ctx.say(zh_label, en_label)
    return fact("education", value, ctx.say(f"最高学历：{value}", f"Highest education: {value}"))


# --------------------------------------------------------------------------------------
# university
# --------------------------------------------------------------------------------------

_ZH_UNI_ALIASES = {
    "浙大": "浙江大学", "清华": "清华大学", "北大": "北京大学", "复旦": "复旦大学", "上交": "上海交通大学",
    "上海交大": "上海交通大学", "南大": "南京大学", "武大": "武汉大学", "中大": "中山大学",
    "哈工大": "哈尔滨工业大学", "华科": "华中科技大学", "华中大": "华中科技大学",
    "中科大": "中国科学技术大学", "港大": "香港大学", "港科大": "香港科技大学", "港科技": "香港科技大学",
    "港中文": "香港中文大学", "港中大": "香港中文大学", "港城大": "香港城市大学", "港理工": "香港理工大学",
    "西交": "西安交通大学", "西安交大": "西安交通大学", "同济": "同济大学", "人大": "中国人民大学",
    "北航": "北京航空航天大学", "北理工": "北京理工大学", "北师大": "北京师范大学", "华师大": "华东师范大学",
    "华东师大": "华东师范大学", "厦大": "厦门大学", "川大": "四川大学", "南开": "南开大学",
    "北邮": "北京邮电大学", "电子科大": "电子科技大学", "西电": "西安电子科技大学",
    "华南理工": "华南理工大学", "上财": "上海财经大学", "央财": "中央财经大学", "哈佛": "哈佛大学",
    "斯坦福": "斯坦福大学", "麻省理工": "麻省理工学院", "牛津": "牛津大学", "剑桥": "剑桥大学",
}
# Aliases that are also ordinary words in some contexts ("中大型企业", "人大代表", "北大荒").
_ZH_UNI_ALIAS = re.compile(
    rf"(?<!全国)(?P<alias>{alternation(_ZH_UNI_ALIASES)})(?!型|规模|小|企业|代表|常委|会议|荒|街|郎)"
)
# A full name: 2-10 CJK characters ending in 大学/学院, not crossing function words like 我/是/在/于.
ZH_NAME_STOP = "我你他她是在于从读自念考去到和与及的了也都就还已想要"
_ZH_UNI_FULL = re.compile(rf"(?P<name>(?:(?![{ZH_NAME_STOP}])[{CJK}]){{2,10}}?(?:大学|学院))")
_ZH_NAME_JUNK = re.compile(
    r"^(?:本科|硕士|研究生|博士|本硕|硕博|毕业|母校|就读|目前|现在|当时|之前|以前|曾经|已经|一所|一个|一家|"
    r"国内|海外|名牌|本地|所以|然后|但是|而且|不过|因为|其实|大概|老家)+"
)
_ZH_GENERIC_UNIS = {
    "名牌大学", "重点大学", "普通大学", "国外大学", "海外大学", "国内大学", "美国大学", "英国大学",
    "一流大学", "野鸡大学", "一般大学", "本地大学", "外国大学", "澳洲大学", "老年大学", "开放大学",
}
_EN_UNI_KNOWN = {
    "MIT": "MIT", "Stanford": "Stanford University", "Harvard": "Harvard University",
    "Oxford": "University of Oxford", "Cambridge": "University of Cambridge", "Caltech": "Caltech",
    "UC Berkeley": "UC Berkeley", "Berkeley": "UC Berkeley", "UCLA": "UCLA",
    "CMU": "Carnegie Mellon University", "Carnegie Mellon": "Carnegie Mellon University",
    "Princeton": "Princeton University", "Yale": "Yale University", "Columbia": "Columbia University",
    "HKU": "The University of Hong Kong", "HKUST": "HKUST", "CUHK": "CUHK",
    "NUS": "National University of Singapore", "LSE": "LSE", "Imperial": "Imperial College London",
    "Tsinghua": "Tsinghua University", "Peking": "Peking University", "Fudan": "Fudan University",
    "ZJU": "Zhejiang University", "SJTU": "Shanghai Jiao Tong University",
}
_EN_UNI_SHORT = re.compile(rf"(?<![A-Za-z])(?P<name>{alternation(_EN_UNI_KNOWN)})(?![A-Za-z])")
# A bare short name counts only next to a word about studying ("Cambridge" may be the city).
_STUDY_CUE = re.compile(
    r"graduat|studied|study|studying|degree|alum|attended|went to|master|bachelor|ph\.?d|mba|\bgrad\b|"
    r"毕业|读|学位|硕士|博士|本科|留学",
    re.IGNORECASE,
)
_EN_UNI_FULL = re.compile(
    r"(?P<name>(?:[A-Z](?:[\w&'-]|\.(?=\w))*\s+)*(?:University|College|Institute|Polytechnic|School)"
    r"(?:\s+(?:of|and|for|at|&|[A-Z](?:[\w&'-]|\.(?=\w))*))*)"
)
_EN_NAME_EDGE = {
    "I", "At", "In", "From", "My", "And", "Then", "After", "Before", "Both", "Also", "So", "But", "Yes", "of",
    "and", "for", "at", "&",
}


def clean_en_name(name: str) -> str:
    words = name.split()
    while words and words[0] in _EN_NAME_EDGE:
        words.pop(0)
    while words and words[-1] in _EN_NAME_EDGE:
        words.pop()
    return " ".join(words)


def _university_candidates(ctx: Utterance) -> list[tuple[int, int, str]]:
    """(start, end, name) of every university mentioned, before any negation check."""
    found: list[tuple[int, int, str]] = []
    for m in _ZH_UNI_FULL.finditer(ctx.text):
        name = _ZH_NAME_JUNK.sub("", m["name"])
        start = m.end() - len(name)
        alias = _ZH_UNI_ALIAS.match(name)
        if alias and name.endswith("学院"):  # "浙大计算机学院" -> 浙江大学
            name = _ZH_UNI_ALIASES[alias["alias"]]
        if len(name) > 3 and name not in _ZH_GENERIC_UNIS:
            found.append((start, m.end(), name))
    for m in _ZH_UNI_ALIAS.finditer(ctx.text):
        if not any(start <= m.start() < end for start, end, _ in found):
            found.append((m.start(), m.end(), _ZH_UNI_ALIASES[m["alias"]]))
    for m in _EN_UNI_FULL.finditer(ctx.text):
        name = clean_en_name(m["name"])
        if " " in name and "High School" not in name:
            start = ctx.text.index(name, m.start())
            found.append((start, start + len(name), name))
    for m in _EN_UNI_SHORT.finditer(ctx.text):
        if any(start <= m.start() < end for start, end, _ in found):
            continue
        if _STUDY_CUE.search(clause_around(ctx.text, m.start(), m.end())):
            found.append((m.start(), m.end(), _EN_UNI_KNOWN[m["name"]]))
    return sorted(found)


def university(ctx: Utterance) -> ExtractedMemory | None:
    names = list(dict.fromkeys(name for start, _, name in _university_candidates(ctx) if stated(ctx, start)))
    if not names:
        return None
    name, others = names[0], names[1:]
    metadata = {"also_mentioned": others} if others else {}
    return fact("university", name, ctx.say(f"毕业于{name}", f"Graduated from {name}"), metadata=metadata)


# --------------------------------------------------------------------------------------
# major
# --------------------------------------------------------------------------------------

_ZH_MAJOR_RUN = rf"(?P<major>(?:(?![{ZH_NAME_STOP}])[{CJK}A-Za-z]){{2,14}}?)"
_ZH_MAJOR_PATTERNS = (
    re.compile(
        rf"(?:专业(?:是|为|:)|主修)\s*(?P<major>[{CJK}A-Za-z]{{2,10}}?)(?=[,.;!?。，；！？\s]|$|的|专业|方向)"
    ),
    re.compile(rf"(?:学的是|读的是|学|念的是){_ZH_MAJOR_RUN}专业"),
    re.compile(rf"{_ZH_MAJOR_RUN}专业"),
    re.compile(rf"{_ZH_MAJOR_RUN}(?:专业)?(?:博士后|博士|硕士|研究生|本科|学士)"),
    re.compile(rf"(?:学的是|读的是){_ZH_MAJOR_RUN}(?=[,.;!?。，；！？\s]|$|的)"),
)
_ZH_MAJOR_JUNK = re.compile(r"^(?:学的是|读的是|学|读|念|修|主修|本科|硕士|博士|研究生|毕业|大学|学院|的)+")
_ZH_MAJOR_INVALID = re.compile(
    r"博士|硕士|本科|学士|研究生|大学|学院|^(?:理学|工学|文学|农学|全日制|非全日制|在职|海外|国外|名校|目前|现在|"
    r"已经|正在|刚刚|去年|今年|什么|哪个|这个|一个|E?MBA|MPA|EMBA)$",
    re.IGNORECASE,
)
_EN_MAJOR_TAIL = (
    r"(?P<major>[A-Za-z][A-Za-z&/ -]{1,40}?)"
    r"(?=\s+(?:from|at|with|in|and\s+(?:I|my|now|then|have|am|work|currently)\b)|\s*[,.;!?()]|$)"
)
_EN_MAJOR_PATTERNS = (
    re.compile(
        rf"\b(?:degree|major|majored|majoring|specialization|specialized|concentration)\s+in\s+{_EN_MAJOR_TAIL}",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:master'?s|masters|bachelor'?s|bachelors|Ph\.?D\.?|doctorate|MSc|BSc|M\.S\.|B\.S\.|BA|BEng|MEng|MPhil)"
        rf"\s+(?:degree\s+)?in\s+{_EN_MAJOR_TAIL}",
        re.IGNORECASE,
    ),
    re.compile(rf"\bmy\s+major\s+(?:is|was)\s+{_EN_MAJOR_TAIL}", re.IGNORECASE),
    re.compile(rf"\bstudied\s+(?!(?:at|in|abroad|hard|there|here|for)\b){_EN_MAJOR_TAIL}", re.IGNORECASE),
)


def _strip_university(name: str) -> str:
    """Drop a leading university name: 浙大计算机 -> 计算机, 浙江大学计算机 -> 计算机."""
    name = re.sub(r"^.*(?:大学|学院)", "", name)
    return re.sub(rf"^(?:{alternation(_ZH_UNI_ALIASES)})", "", name)


def major(ctx: Utterance) -> ExtractedMemory | None:
    for pattern in _ZH_MAJOR_PATTERNS:
        for m in matches(pattern, ctx, "major"):
            major = _ZH_MAJOR_JUNK.sub("", _strip_university(_ZH_MAJOR_JUNK.sub("", m["major"])))
            if len(major) >= 2 and not _ZH_MAJOR_INVALID.search(major):
                return fact("major", major, ctx.say(f"专业：{major}", f"Major: {major}"))
    for pattern in _EN_MAJOR_PATTERNS:
        for m in matches(pattern, ctx, "major"):
            major = re.sub(r"^(?:a|an|the)\s+", "", m["major"].strip(), flags=re.IGNORECASE)
            if major and len(major.split()) <= 5 and not _EN_UNI_SHORT.fullmatch(major):
                return fact("major", major, ctx.say(f"专业：{major}", f"Major: {major}"))
    return None
