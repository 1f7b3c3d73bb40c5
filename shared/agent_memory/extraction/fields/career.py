"""Career: job title, company, industry, years of experience, technical background."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.fields.education import ZH_NAME_STOP, clean_en_name
from agent_memory.extraction.fields.location import CITY_PREFIX_RE, CITY_ZH_RE, is_city
from agent_memory.extraction.grammar import CJK, Utterance, alternation, fact, matches
from agent_memory.extraction.numbers import EN_NUM, SMALL_NUM, parse_number

# --------------------------------------------------------------------------------------
# currentJobTitle / currentCompany / currentIndustry
# --------------------------------------------------------------------------------------

ZH_JOB_WORDS = re.compile(
    r"开发|工程师|程序员|码农|经理|总监|主管|总裁|总经理|设计师|设计|产品|运营|销售|市场|测试|算法|架构|分析师|"
    r"研究员|顾问|会计|审计|律师|医生|护士|教师|老师|教授|讲师|咨询|人力资源|招聘|行政|编辑|记者|财务|交易员|风控|"
    r"前端|后端|全栈|运维|科学家|创始人|合伙人|公务员|研发|技术|策划|翻译|主播|厨师|司机|店长|主任|专员|助理|秘书|"
    r"精算师|董事|高管|负责人|CEO|CTO|CFO|COO|VP|HR|PM|BD"
)
_ZH_JOB_PATTERNS = (
    re.compile(r"(?:职位|岗位|职务|头衔)(?:是|为|:)\s*(?P<title>[^\s,.;!?。，；！？、]{2,20})"),
    re.compile(r"(?:担任|任职为|当上了?|当了?|做了?|干|从事)\s*(?P<title>[^\s\d,.;!?。，；！？、]{2,20})"),
    re.compile(r"是(?:一名|一个|一位|名|个|位)?\s*(?P<title>[^\s\d,.;!?。，；！？、]{2,20})"),
)
# Words that end a title: "前端开发工作8年" -> "前端开发".
_ZH_TITLE_END = re.compile(
    r"的?工作|相关|方面|岗位|职位|已经|了|有|快|差不多|大概|在|和|而且|但|也|还|这|那|年"
)
_ZH_TITLE_LEAD = re.compile(r"^(?:一名|一个|一位|名|个|位|做|当)+")
_ZH_COMPANIES = (
    "阿里巴巴", "阿里", "蚂蚁集团", "蚂蚁金服", "腾讯", "字节跳动", "字节", "百度", "华为", "美团", "京东",
    "网易", "小米", "拼多多", "滴滴", "快手", "微软", "谷歌", "苹果", "亚马逊", "英伟达", "英特尔", "汇丰",
    "渣打", "中金", "中信", "招商银行", "平安", "携程", "大疆", "比亚迪", "宁德时代", "蔚来", "小红书",
    "哔哩哔哩", "B站", "商汤", "海康威视", "中兴", "联想", "高盛", "摩根士丹利", "摩根大通", "德勤",
    "普华永道", "安永", "毕马威", "麦肯锡",
)
_ZH_COMPANY_SUFFIX = re.compile(
    r"(?:公司|集团|银行|科技|证券|基金|保险|资本|医院|律所|事务所|研究院|研究所|控股|有限)$"
)
_ZH_COMPANY_PATTERNS = (
    # (pattern, needs a known name or a company suffix)
    (
        re.compile(
            r"(?:就职于|任职于|供职于|受雇于|入职了?)\s*(?P<company>[^\s,.;!?。，；！？、]{2,20}?)"
            r"(?=[,.;!?。，；！？\s]|$|工作|上班|任职|做|当|担任|的|了)"
        ),
        False,
    ),
    (
        re.compile(
            r"(?:公司|单位|东家)(?:是|为|:)\s*(?P<company>[^\s,.;!?。，；！？、]{2,20}?)(?=[,.;!?。，；！？\s]|$)"
        ),
        False,
    ),
    (
        re.compile(
            r"在\s*(?!在)(?P<company>[^\s\d,.;!?。，；！？、]{2,20}?)(?:工作|上班|任职|就职|做|当|担任|干|实习)"
        ),
        True,
    ),
    (
        re.compile(
            rf"(?:是|在|加入了?)\s*(?:{CITY_ZH_RE.pattern})?\s*(?P<company>{alternation(_ZH_COMPANIES)})(?=\s*(?:的|,|，|$|做|当|工作|上班))"
        ),
        True,
    ),
)
_ZH_COMPANY_GENERIC = re.compile(
    r"^(?:一家|一个|某|这家|那家|家|本地|外企|国企|私企|大厂|小公司|公司|创业公司)"
)

EN_JOB_WORDS = re.compile(
    r"engineer|developer|programmer|manager|director|designer|analyst|consultant|architect|scientist|researcher|"
    r"accountant|auditor|lawyer|attorney|solicitor|doctor|physician|surgeon|nurse|teacher|professor|lecturer|"
    r"officer|specialist|executive|administrator|coordinator|president|founder|partner|\bCEO\b|\bCTO\b|\bCFO\b|"
    r"\bCOO\b|\bVP\b|head of|\blead\b|trader|banker|editor|writer|journalist|recruiter|\bsales\b|marketing|"
    r"product owner|entrepreneur|pharmacist|dentist|technician|strategist|economist|actuary|pilot|chef|"
    r"\bPM\b",
    re.IGNORECASE,
)
_EN_TITLE = r"(?:\d{1,2}[\s-]*years?[\s-]*old\s+)?(?P<title>[A-Za-z][A-Za-z/&+ -]{1,60})"
_EN_JOB_PATTERNS = (
    re.compile(rf"\bI\s+work\s+as\s+(?:an?\s+|the\s+)?{_EN_TITLE}", re.IGNORECASE),
    re.compile(rf"\bwork(?:s|ed)?\s+(?:[a-z]+\s+){{0,4}}?as\s+(?:an?\s+|the\s+)?{_EN_TITLE}", re.IGNORECASE),
    re.compile(rf"\b(?:year|annum|annually)\s+as\s+(?:an?\s+|the\s+)?{_EN_TITLE}", re.IGNORECASE),
    re.compile(rf"\bworking\s+as\s+(?:an?\s+|the\s+)?{_EN_TITLE}", re.IGNORECASE),
    re.compile(
        rf"\bmy\s+(?:job\s+title|title|position|role|job)\s+is\s+(?:an?\s+|the\s+)?{_EN_TITLE}", re.IGNORECASE
    ),
    re.compile(rf"\bI(?:'m| am)\s+(?:currently\s+|now\s+)?(?:an?|the)\s+{_EN_TITLE}", re.IGNORECASE),
)
_EN_TITLE_END = re.compile(
    r"\s+(?:at|in|for|with|and|from|based|who|since|working|here|there|by|currently|now)\b", re.IGNORECASE
)
# A capitalised word; a dot only inside it ("A.I."-style), never the sentence's full stop.
_EN_CAP_WORD = r"[A-Z](?:[\w&'-]|\.(?=\w))*"
_EN_CAP_NAME = rf"(?P<name>{_EN_CAP_WORD}(?:\s+(?:{_EN_CAP_WORD}|&|of))*)"
_EN_COMPANY = re.compile(
    rf"\b(?:work(?:ing|s)?|employed|joined)\b[^.;!?]{{0,60}}?\b(?:at|for|by|joined)\s+{_EN_CAP_NAME}"
)
# "I'm a product manager at Tencent": the company follows a job title.
_EN_COMPANY_AFTER_TITLE = re.compile(rf"\s+(?:at|for|with)\s+{_EN_CAP_NAME}")

_ZH_INDUSTRY_PATTERNS = (
    re.compile(rf"(?P<industry>(?:(?![{ZH_NAME_STOP}做事干属所])[{CJK}A-Za-z/]){{2,8}}?)行业"),
    re.compile(rf"行业(?:是|为|:)\s*(?P<industry>[{CJK}A-Za-z/]{{2,8}}?)(?=[,.;!?。，；！？\s]|$|的|行业)"),
)
# Industries a user names without the word "行业"/"industry": "做外贸", "I'm in marketing".
INDUSTRIES_ZH = (
    "外贸", "金融", "互联网", "医疗器械", "医疗", "医药", "生物医药", "教育", "房地产", "地产", "保险", "制造业", "零售",
    "电商", "物流", "咨询", "法律", "新能源汽车", "新能源", "芯片设计", "芯片", "半导体", "广告", "传媒", "媒体", "餐饮",
    "建筑", "汽车", "游戏", "投行", "投资银行", "私募", "基金", "审计", "会计", "人工智能", "AI", "IT", "航空", "能源",
    "化工", "快消", "时尚", "影视", "体育", "旅游", "酒店", "农业", "航运", "贸易", "供应链", "区块链", "金融科技",
)
INDUSTRIES_EN = (
    "fintech", "finance", "financial services", "banking", "investment banking", "private equity", "asset management",
    "healthcare", "health care", "pharma", "pharmaceuticals", "biotech", "marketing", "advertising", "education",
    "consulting", "law", "legal", "tech", "technology", "IT", "software", "real estate", "property", "insurance",
    "manufacturing", "retail", "e-commerce", "ecommerce", "logistics", "shipping", "media", "journalism", "hospitality",
    "construction", "semiconductors", "semiconductor", "gaming", "energy", "oil and gas", "oil", "accounting",
    "trading", "crypto", "blockchain", "aviation", "telecoms", "telecom", "automotive", "fashion", "food and beverage",
)
_ZH_INDUSTRY_KNOWN = re.compile(
    rf"(?:做|从事|搞|干|在)(?P<industry>{alternation(INDUSTRIES_ZH)})(?=行业|生意|相关|领域|这块|的|工作|方面|,|，|。|$|\s)"
    rf"|(?:一家|家)(?P<industry2>{alternation(INDUSTRIES_ZH)})(?:公司|企业|机构)"
)
_EN_INDUSTRY_KNOWN = re.compile(
    r"\b(?:work(?:s|ing|ed)?|experience|career|background|years|I'm|I am|employed)\s+in\s+(?:the\s+)?"
    rf"(?P<industry>{alternation(INDUSTRIES_EN)})(?![A-Za-z-])(?!\s+(?:industry|sector))",
    re.IGNORECASE,
)
_ZH_INDUSTRY_GENERIC = re.compile(r"^(?:这个|那个|哪个|什么|同一|整个|各个|相关|一个|本)")
_EN_INDUSTRY_PATTERNS = (
    re.compile(r"\bin\s+the\s+(?P<industry>[A-Za-z&/ -]{2,30}?)\s+(?:industry|sector)\b", re.IGNORECASE),
    re.compile(
        r"\bwork\s+in\s+(?P<industry>[A-Za-z&/-]{2,20}(?:\s+[A-Za-z&/-]{2,20})?)\s+(?:industry|sector)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:my\s+)?(?:industry|sector)\s+is\s+(?P<industry>[A-Za-z&/ -]{2,30}?)(?=\s*[,.;!?]|$|\s+and\b)",
        re.IGNORECASE,
    ),
)


def _zh_title(raw: str) -> str:
    """The title in a raw run: "阿里的产品经理工作" -> "产品经理"."""
    end = _ZH_TITLE_END.search(raw)
    raw = raw[: end.start()] if end else raw
    return _ZH_TITLE_LEAD.sub("", raw.rpartition("的")[2])


def job_title(ctx: Utterance) -> ExtractedMemory | None:
    candidates: list[tuple[int, str]] = []
    for pattern in _ZH_JOB_PATTERNS:
        for m in matches(pattern, ctx, "title", past=True):
            title = _zh_title(m["title"])
            if title.endswith("出身"):  # "程序员出身" is where the user comes from, not the current job
                continue
            if 2 <= len(title) <= 12 and ZH_JOB_WORDS.search(title) and not CITY_ZH_RE.fullmatch(title):
                candidates.append((m.start(), title))
    for pattern in _EN_JOB_PATTERNS:
        for m in matches(pattern, ctx, "title", past=True):
            title = _EN_TITLE_END.split(m["title"], maxsplit=1)[0].strip(" -")
            if EN_JOB_WORDS.search(title) and len(title.split()) <= 5:
                candidates.append((m.start(), title))
    if not candidates:
        return None
    title = min(candidates)[1]
    return fact("currentJobTitle", title, ctx.say(f"职位：{title}", f"Job title: {title}"))


def company(ctx: Utterance) -> ExtractedMemory | None:
    for pattern, needs_evidence in _ZH_COMPANY_PATTERNS:
        for m in matches(pattern, ctx, "company", past=True):
            company = m["company"].rpartition("的")[2]  # "香港的汇丰银行" -> "汇丰银行"
            company = CITY_PREFIX_RE.sub("", company) if len(CITY_PREFIX_RE.sub("", company)) >= 2 else company
            if len(company) < 2 or _ZH_COMPANY_GENERIC.match(company) or is_city(company):
                continue
            if company.startswith(("做", "搞", "从事")) or company.endswith("行业"):
                continue
            known = company in _ZH_COMPANIES or bool(_ZH_COMPANY_SUFFIX.search(company))
            if needs_evidence and not known:
                continue
            return fact("currentCompany", company, ctx.say(f"就职于{company}", f"Works at {company}"))
    for m in matches(_EN_COMPANY, ctx, "name", past=True):
        company = clean_en_name(m["name"])
        if company and not is_city(company):
            return fact("currentCompany", company, ctx.say(f"就职于{company}", f"Works at {company}"))
    for pattern in _EN_JOB_PATTERNS:
        for m in matches(pattern, ctx, "title", past=True):
            title = _EN_TITLE_END.split(m["title"], maxsplit=1)[0]
            after = _EN_COMPANY_AFTER_TITLE.match(ctx.text, m.start("title") + len(title))
            company = clean_en_name(after["name"]) if after else ""
            if company and EN_JOB_WORDS.search(title) and not is_city(company):
                return fact("currentCompany", company, ctx.say(f"就职于{company}", f"Works at {company}"))
    return None


def industry(ctx: Utterance) -> ExtractedMemory | None:
    for pattern in _ZH_INDUSTRY_PATTERNS:
        for m in matches(pattern, ctx, "industry", past=True):
            industry = CITY_PREFIX_RE.sub("", m["industry"])
            if len(industry) >= 2 and not _ZH_INDUSTRY_GENERIC.match(industry):
                return fact(
                    "currentIndustry", industry, ctx.say(f"所在行业：{industry}", f"Industry: {industry}")
                )
    for m in matches(_ZH_INDUSTRY_KNOWN, ctx, past=True):
        industry = m["industry"] or m["industry2"]
        return fact("currentIndustry", industry, ctx.say(f"所在行业：{industry}", f"Industry: {industry}"))
    for pattern in (*_EN_INDUSTRY_PATTERNS, _EN_INDUSTRY_KNOWN):
        for m in matches(pattern, ctx, "industry", past=True):
            industry = m["industry"].strip()
            if industry and len(industry.split()) <= 3:
                return fact(
                    "currentIndustry", industry, ctx.say(f"所在行业：{industry}", f"Industry: {industry}")
                )
    return None


# --------------------------------------------------------------------------------------
# totalYearsOfExperience
# --------------------------------------------------------------------------------------

_YEARS_NUM = (
    r"(?:(?P<qual>快|近|将近|接近|大概|差不多|约|超过|有)\s*)?"
    rf"(?P<num>{SMALL_NUM})(?:\s*(?P<more>多|几|来))?\s*(?:个\s*)?年(?P<more_after>多)?"
)
_ZH_YEARS_PATTERNS = (
    re.compile(
        rf"(?:工作年限|工龄|从业|工作|入行)(?:经验|经历)?(?:了|有|已经|已|:|是)*\s*{_YEARS_NUM}(?!前|后|以前|以后|之前|之后)"
    ),
    re.compile(rf"(?P<num>{SMALL_NUM})\s*(?P<more>多|几|来)?\s*年(?:的)?(?:工作|从业)?(?:经验|经历)"),
    re.compile(rf"(?:干了|做了|从事[{CJK}A-Za-z]{{0,8}}?)\s*{_YEARS_NUM}(?!前|后|以前|以后|之前|之后)"),
    # "我做销售快十年了": doing a job for a span that runs to now.
    re.compile(rf"(?:做|干)(?!了)[{CJK}A-Za-z]{{1,6}}?\s*{_YEARS_NUM}\s*(?:了|啦)"),
)
_EN_QUAL = r"(?:(?P<qual>about|around|over|nearly|almost|more than|roughly)\s+)?"
_EN_YEARS_NUM = rf"(?P<num>\d{{1,2}}|{EN_NUM})(?:\s*(?P<more>\+|plus))?\s*(?:years?|yrs?)\b"
# Where one is "in" that is no work: a place, a school, a relationship.
_NOT_A_LINE_OF_WORK = r"(?!the\b|a\b|an\b|here\b|there\b|this\s+(?:city|country|place|town)\b|school\b|college\b|university\b|love\b)"
_EN_YEARS_PATTERNS = (
    re.compile(
        rf"\bbeen\s+(?:in\s+{_NOT_A_LINE_OF_WORK}(?-i:[a-z])[\w -]{{1,30}}?|doing\s+(?:this|that|it)|(?:teaching|practi[cs]ing|coding|"
        rf"programming|nursing|lecturing|consulting|freelancing|trading|designing))\s+for\s+{_EN_QUAL}{_EN_YEARS_NUM}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:it's|it\s+has|it\s+is)\s+been\s+{_EN_QUAL}{_EN_YEARS_NUM}\s+since\s+I\s+(?:started|began)\s+"
        r"(?:working|work|my\s+career)",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?P<qual>about|around|over|nearly|almost|more than|roughly)?\s*(?P<num>\d{{1,2}}|{EN_NUM})\s*"
        r"(?P<more>\+|plus)?\s*(?:years?|yrs?)(?:\s+of)?\s+(?:(?:work|working|professional|industry|relevant|total)\s+)?"
        r"experience\b",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?P<num>\d{{1,2}}|{EN_NUM})\s*(?P<more>\+|plus)?\s*(?:years?|yrs?)\s+in\s+(?:the\s+)?(?:industry|field|sector|"
        r"business|finance|banking|tech|IT|consulting|marketing)\b(?P<qual>)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:been\s+working|(?:have|'ve)\s+(?:been\s+)?work(?:ed|ing)|(?:have|'ve)\s+(?:run|owned|been\s+running)\s+"
        r"(?:my\s+own|a)\s+(?:business|company|firm))(?:\s+in\s+[\w -]{2,30}?)?\s+(?:for\s+)?"
        rf"(?P<qual>about|around|over|nearly|almost|more than|roughly)?\s*(?P<num>\d{{1,2}}|{EN_NUM})\s*"
        r"(?P<more>\+|plus)?\s*(?:years?|yrs?)\b",
        re.IGNORECASE,
    ),
)


def years_of_experience(ctx: Utterance) -> ExtractedMemory | None:
    for pattern in (*_ZH_YEARS_PATTERNS, *_EN_YEARS_PATTERNS):
        for m in matches(pattern, ctx, "num", future=False):
            n = parse_number(m["num"])
            if n is None or not 0 < n < 60:
                continue
            qual = (m.groupdict().get("qual") or "").lower()
            if m["more"] or m.groupdict().get("more_after") or qual in ("超过", "over", "more than"):
                value: int | str = f"{int(n)}+"
                text = ctx.say(f"工作年限：{int(n)}年以上", f"Work experience: {int(n)}+ years")
                return fact("totalYearsOfExperience", value, text)
            metadata = {"approximate": True} if qual and qual != "有" else {}
            text = ctx.say(
                f"工作年限：{'约' if metadata else ''}{int(n)}年",
                f"Work experience: {'about ' if metadata else ''}{int(n)} years",
            )
            return fact("totalYearsOfExperience", int(n), text, metadata=metadata)
    return None


# --------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# hasTechBackground
# --------------------------------------------------------------------------------------

_TECH_ZH = r"(?:科技|技术|IT|互联网|理工科?|工科|计算机|软件|工程|STEM|AI|人工智能)"
_TECH_ZH_NONE = re.compile(rf"(?:没有|没|不是|并非|无)\s*(?:什么)?\s*{_TECH_ZH}(?:相关)?(?:的)?(?:背景|出身)", re.I)
_TECH_ZH_SOME = re.compile(
    rf"有\s*(?:一定的|多年的?|很强的|扎实的)?\s*{_TECH_ZH}(?:相关)?(?:的)?背景|{_TECH_ZH}(?:背景|出身)|搞技术的|做技术的",
    re.IGNORECASE,
)
_TECH_EN = r"(?:tech|technical|technology|engineering|STEM|computer science|CS|IT|software|science)"
_TECH_EN_NONE = re.compile(
    rf"\b(?:no|don't have an?|do not have an?|without an?|not from an?)\s+{_TECH_EN}\s+background\b"
    r"|\bI'?m not (?:very )?technical\b|\bnot a tech person\b",
    re.IGNORECASE,
)
_TECH_EN_SOME = re.compile(
    rf"\b(?:have|'ve got|with|from|come from)\s+an?\s+(?:strong\s+|solid\s+)?{_TECH_EN}\s+background\b"
    rf"|\bmy\s+background\s+is\s+(?:in\s+)?{_TECH_EN}\b|\bI'?m\s+(?:a\s+)?(?:techie|tech person)\b",
    re.IGNORECASE,
)


def tech_background(ctx: Utterance) -> ExtractedMemory | None:
    for pattern in (_TECH_ZH_NONE, _TECH_EN_NONE):
        for _ in matches(pattern, ctx, negation=False, future=False):
            return fact("hasTechBackground", False, ctx.say("没有科技背景", "Has no technical background"))
    for pattern in (_TECH_ZH_SOME, _TECH_EN_SOME):
        for _ in matches(pattern, ctx, future=False):
            return fact("hasTechBackground", True, ctx.say("有科技背景", "Has a technical background"))
    return None
