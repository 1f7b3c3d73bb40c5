"""Where the user lives or works now."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory
from agent_memory.extraction.grammar import CJK, Utterance, alternation, fact, matches

# --------------------------------------------------------------------------------------
# currentLocation
# --------------------------------------------------------------------------------------

_CITIES_ZH = (
    "北京", "上海", "广州", "深圳", "杭州", "南京", "苏州", "成都", "重庆", "武汉", "西安", "天津", "长沙",
    "郑州", "青岛", "厦门", "宁波", "合肥", "济南", "大连", "沈阳", "哈尔滨", "长春", "福州", "昆明", "南昌",
    "贵阳", "南宁", "太原", "石家庄", "无锡", "常州", "东莞", "佛山", "珠海", "中山", "惠州", "温州", "绍兴",
    "嘉兴", "金华", "台州", "烟台", "徐州", "南通", "扬州", "泉州", "兰州", "乌鲁木齐", "呼和浩特", "海口",
    "三亚", "香港", "澳门", "台北", "新加坡", "东京", "大阪", "首尔", "伦敦", "曼彻斯特", "纽约", "旧金山",
    "硅谷", "湾区", "洛杉矶", "西雅图", "波士顿", "芝加哥", "多伦多", "温哥华", "蒙特利尔", "悉尼", "墨尔本",
    "奥克兰", "巴黎", "柏林", "慕尼黑", "阿姆斯特丹", "迪拜", "吉隆坡", "曼谷", "苏黎世", "都柏林",
)
_CITIES_EN = (
    "Hong Kong", "Shanghai", "Beijing", "Shenzhen", "Guangzhou", "Hangzhou", "Nanjing", "Suzhou", "Chengdu",
    "Wuhan", "Xi'an", "Tianjin", "Chongqing", "Xiamen", "Macau", "Taipei", "Singapore", "Tokyo", "Seoul",
    "London", "Manchester", "New York", "San Francisco", "Bay Area", "Silicon Valley", "Los Angeles",
    "Seattle", "Boston", "Chicago", "Toronto", "Vancouver", "Montreal", "Sydney", "Melbourne", "Auckland",
    "Paris", "Berlin", "Munich", "Amsterdam", "Dubai", "Kuala Lumpur", "Bangkok", "Zurich", "Dublin", "Basel",
    "Geneva", "Frankfurt", "Madrid", "Barcelona", "Milan", "Rome", "Stockholm", "Copenhagen", "Oslo", "Edinburgh",
    "Jakarta", "Manila", "Mumbai", "Bangalore", "Delhi", "Perth", "Brisbane", "Calgary", "Austin", "Washington",
)
CITY_ZH_RE = re.compile(alternation(_CITIES_ZH))
CITY_PREFIX_RE = re.compile(rf"^(?:{alternation(_CITIES_ZH)})")
_CITY_FOLLOW = (
    r"(?=工作|上班|生活|定居|做|当|从事|读|上学|发展|打工|创业|任职|就职|住|这边|那边|呢|了|一家|的|,|\.|。|，|;|；|!|！|\?|？"
    r"|\s|$)"
)
_ZH_LOCATION_PATTERNS = (
    re.compile(
        r"(?:住在|定居在?|定居于|现居(?:住)?(?:在|于)?|生活在|人在|base在|坐标|在)\s*"
        rf"(?P<city>{alternation(_CITIES_ZH)})市?{_CITY_FOLLOW}(?!的时候)",
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?:住在|定居在|定居于|现居(?:住)?(?:在|于)?|生活在|坐标)\s*(?P<city>[{CJK}]{{2,4}}?)市?"
        r"(?=[,.;!?。，；！？\s]|$|工作|生活)"
    ),
    # "在深圳华为做硬件工程师", "搬到深圳了": the city, then a place of work or a verb of work.
    re.compile(
        rf"在\s*(?P<city>{alternation(_CITIES_ZH)})(?![^,.;!?。，；！？]*(?:的时候|那年|期间))(?!大学|师范|理工|交通|科技大学)"
        r"[^,.;!?。，；！？]{1,12}?(?:工作|上班|做|当|任职|就职|干|读)"
    ),
    re.compile(rf"(?:搬到|搬去|来到|调到|落户)了?\s*(?P<city>{alternation(_CITIES_ZH)})"),
)
_EN_LOCATION_PATTERNS = (
    re.compile(
        r"\b(?:remotely|currently|now)\s+from\s+"
        rf"(?P<city>{alternation(_CITIES_EN)})\b"
    ),
    re.compile(
        r"\b(?:engineer|manager|developer|analyst|scientist|pharmacist|nurse|doctor|teacher|lawyer|consultant|"
        r"designer|accountant|banker|director|officer|researcher|CFO|CEO|CTO)\b[^.;!?]{0,30}?\bin\s+"
        rf"(?P<city>{alternation(_CITIES_EN)})\b"
    ),
    re.compile(
        r"\b(?:live|living|lives|based|located|reside|residing|work|working|stay|staying|settled|moved|"
        r"I'm|I am)\b"
        rf"[^.;!?]{{0,60}}?\b(?:in|to)\s+(?P<city>{alternation(_CITIES_EN)})\b"
    ),
    re.compile(
        r"\b(?:I\s+live|I'm\s+living|I\s+am\s+living|I\s+reside|I'm\s+based|I\s+am\s+based|based|moved)\s+"
        r"(?:in|to)\s+(?P<city>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
    ),
)


def is_city(name: str) -> bool:
    return name in _CITIES_ZH or name in _CITIES_EN


def location(ctx: Utterance) -> ExtractedMemory | None:
    for pattern in (*_ZH_LOCATION_PATTERNS, *_EN_LOCATION_PATTERNS):
        for m in matches(pattern, ctx, "city", past=True):
            city = m["city"]
            return fact("currentLocation", city, ctx.say(f"目前在{city}", f"Currently based in {city}"))
    return None
