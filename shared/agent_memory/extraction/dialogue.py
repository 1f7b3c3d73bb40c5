"""Terse answers to the assistant's questions: "请问您今年多大年纪？在哪里工作？" / "32，在深圳腾讯".

The assistant's words are never the user's facts, but its questions say what a short answer is
about. Each question is data: how it is asked in each language, the fields an answer can fill,
and statements that turn the answer back into a full sentence ("32" -> "我32岁"), which the
ordinary field rules then read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_YES_ZH = re.compile(r"^(?:是的?|对的?|有的?|嗯+|结了|已经?结了|当然|没错|yes)$", re.IGNORECASE)
_NO_ZH = re.compile(r"^(?:没有?|还没有?|不是|不|无|否|暂时没有|目前没有)$")
_YES_EN = re.compile(r"^(?:yes|yeah|yep|yup|sure|of course|I do|I am|we are|correct|right)"
                     r"(?:\s+(?:I|we)\s+(?:am|are|do|have|did))?$", re.IGNORECASE)
_NO_EN = re.compile(r"^(?:no|nope|not yet|I don't|I do not|I'm not|I am not|none|not really)$", re.IGNORECASE)


@dataclass(frozen=True)
class Question:
    fields: tuple[str, ...]  # what an answer can fill
    asked: re.Pattern[str]  # how the assistant asks it, in either language
    zh: tuple[str, ...]  # statements a Chinese answer `{a}` is read as, tried in order
    en: tuple[str, ...]
    yes: tuple[str, str] = ("", "")  # (zh, en) statements for a bare yes / no, when the question is yes-no
    no: tuple[str, str] = ("", "")
    about_others: bool = False  # asked about the user's family, so "your wife" is still the user's field


def _asked(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


QUESTIONS: tuple[Question, ...] = (
    Question(("age",), _asked(r"多大|年纪|几岁|年龄|岁数|how old|your age"),
             ("我{a}岁", "我{a}"), ("I'm {a} years old", "I'm {a}")),
    Question(("currentLocation",),
             _asked(r"在哪(?:个城市|里|儿)?(?:生活|住|发展|定居)|住在?哪|哪个城市|现居|坐标|where (?:do|are) you (?:live|living|"
                    r"based|located)|which city|where are you now"),
             ("我住在{a}", "我在{a}"), ("I live in {a}", "I'm based in {a}")),
    Question(("currentCompany", "currentLocation", "currentJobTitle"),
             _asked(r"在哪(?:里|儿|个公司|家公司)?(?:工作|上班|高就|任职)|哪家公司|什么公司|公司是|where do you work|"
                    r"which company|who do you work for|your employer"),
             ("我在{a}工作", "我是{a}"), ("I work at {a}", "I work as {a}")),
    Question(("currentJobTitle", "currentIndustry"),
             _asked(r"做什么(?:工作|的|行业)?|什么(?:职位|岗位|工作)|职业|职务|哪个行业|what do you do|your (?:job|role|"
                    r"position|occupation)|what(?:'s| is) your (?:job|title)|which industry"),
             ("我是{a}", "我做{a}", "我在{a}行业"), ("I work as {a}", "I'm {a}", "I work in the {a} industry")),
    Question(("education", "university", "major"),
             _asked(r"学历|什么学位|最高学位|highest degree|your degree|level of education|education"),
             ("我{a}毕业", "我毕业于{a}"), ("I have {a}", "I graduated from {a}", "I have a degree in {a}")),
    Question(("university", "education", "major"),
             _asked(r"哪(?:个|所)(?:大学|学校)|哪里毕业|毕业于|什么学校|母校|which (?:university|school|college)|"
                    r"where did you (?:study|graduate)"),
             ("我毕业于{a}", "我{a}毕业"), ("I graduated from {a}", "I studied at {a}")),
    Question(("major",), _asked(r"什么专业|专业是|学的什么|what did you study|your major|what subject"),
             ("我学的是{a}专业",), ("I have a degree in {a}",)),
    Question(("annualIncome",),
             _asked(r"年薪|年收入|收入|赚多少|工资|薪资|薪水|how much do you (?:earn|make)|salary|income"),
             ("我年薪{a}", "我年收入{a}"), ("My annual salary is {a}", "I make {a} a year")),
    Question(("totalYearsOfExperience",),
             _asked(r"工作(?:了)?(?:几|多少)年|几年经验|多少年(?:的)?经验|工作多久|从业多久|入行多久|how many years|"
                    r"how long have you been (?:working|doing (?:this|that|it)|in (?:this|that|your|the) (?:line|field|"
                    r"industry|profession|job|role|business|current field))|years of experience"),
             ("我工作{a}年", "我工作{a}"), ("I have {a} years of experience", "I've been working for {a}")),
    Question(("maritalStatus",), _asked(r"结婚|婚姻|成家|are you married|marital status|single or married"),
             ("我{a}",), ("I'm {a}",), yes=("我已婚", "I'm married"), no=("我未婚", "I'm single")),
    Question(("hasChildren",), _asked(r"孩子|小孩|子女|do you have (?:any )?(?:kids|children)|kids|children"),
             ("我有{a}孩子", "我{a}"), ("I have {a} kids", "I have {a}"),
             yes=("我有孩子", "I have kids"), no=("我没有孩子", "I don't have any kids")),
    Question(("nationality",), _asked(r"国籍|哪国人|哪里人|护照|nationality|citizen|passport|where are you from"),
             ("我是{a}国籍", "我是{a}人"), ("I'm from {a}", "I'm {a}")),
    Question(("immigrationTimeline",),
             _asked(r"什么时候|何时|时间(?:安排|规划|计划)|打算多久|when (?:do|would|are) you|timeline|how soon"),
             ("我打算{a}申请",), ("I plan to apply {a}",)),
    Question(("targetCategory",),
             _asked(r"哪(?:个|种)(?:类别|计划|项目|方案|通道|签证)|什么(?:类别|计划|项目)|考虑哪|which (?:scheme|program|"
                    r"programme|category|route|visa)"),
             ("我想申请{a}",), ("I'm interested in {a}",)),
    Question(("hasHKEmployer",),
             _asked(r"香港[^，。？?]{0,6}(?:雇主|offer|工作机会|工作邀约|邀约|聘书|聘用|录用)|在香港(?:的)?(?:公司|企业)?(?:工作|上班)|"
                    r"(?:Hong Kong|HK)(?:-based)? (?:employer|job offer|company|firm|job)|"
                    r"(?:employer|offer|job|position|company|firm|employed|working|work) (?:in|from|with|by|at|for) "
                    r"(?:an? )?(?:Hong Kong|HK)\b"),
             ("我{a}香港雇主",), ("I {a} a Hong Kong employer",),
             yes=("我有香港雇主", "I have a Hong Kong employer"), no=("我没有香港雇主", "I don't have a Hong Kong employer")),
    Question(("budget",), _asked(r"预算|budget"), ("我的预算是{a}",), ("My budget is {a}",)),
    Question(("investmentCapacity",), _asked(r"投资(?:多少|金额|能力)|能投|how much (?:can|could) you invest"),
             ("我可以投资{a}",), ("I can invest {a}",)),
    Question(("hasTechBackground",), _asked(r"(?:科技|技术|理工|IT)背景|tech(?:nical)? background|STEM"),
             ("我有{a}背景",), ("I have a {a} background",),
             yes=("我有科技背景", "I have a tech background"), no=("我没有科技背景", "I don't have a tech background")),
    Question(("familySupport",), _asked(r"家人|家里|家属|your family|your (?:wife|husband|partner)"),
             ("家人{a}",), ("My family is {a}",), about_others=True),
    Question(("allergy",), _asked(r"过敏|allerg"), ("我对{a}过敏",), ("I'm allergic to {a}",)),
    Question(("pet",), _asked(r"宠物|养(?:了|过)?(?:什么|猫|狗)|\bpets?\b"), ("我养了{a}",), ("I have {a}",)),
    Question(("healthCondition",), _asked(r"健康|病史|慢性病|\bhealth\b|medical condition"), ("我有{a}",),
             ("I have {a}",)),
    Question(("diet",), _asked(r"忌口|饮食|吃素"), ("我{a}",), ()),
    Question(("goal",), _asked(r"目标|\bgoals?\b|hoping to achieve"), ("我打算{a}",), ("I want to {a}",)),
    Question(("preferredName",), _asked(r"怎么称呼|如何称呼|叫你什么|叫您什么|what (?:should|shall|can) I call you|"
                                        r"how (?:should|shall|do) I address you|what do you (?:like|prefer) to be called"),
             ("叫我{a}就行",), ("call me {a}",)),
)

# A question about somebody else ("Does your husband have a Hong Kong employer?") is not about the user.
_ABOUT_SOMEONE_ELSE = re.compile(
    r"\b(?:your|his|her|their)\s+(?:wife|husband|spouse|partner|sons?|daughters?|kids?|child(?:ren)?|father|mother|"
    r"dad|mom|mum|parents?|brothers?|sisters?|friends?|colleagues?|boss)\b|\b(?:he|she|they)\b|"
    r"[您你]的?(?:先生|太太|妻子|丈夫|爱人|老公|老婆|夫人|孩子|儿子|女儿|父母|父亲|母亲|朋友|同事)|(?<!其)[他她]",
    re.IGNORECASE,
)
# A yes to "Do you want kids?" or "想在香港工作吗？" is a wish, not the fact a yes-no question asks about.
_ASKS_A_WISH = re.compile(r"\b(?:want|wish|hope|plan|planning|like to|love to|intend)\b|想|打算|希望|计划|愿意", re.IGNORECASE)
# A sentence of the assistant's that asks something (only questions give answers a meaning).
_ASSISTANT_SENTENCE = re.compile(r"[^。！？!?\n]*[？?]|[^。！？!?\n]*(?:请问|能否告诉|可以告诉|方便说)[^。！？!?\n]*")
_SEGMENT_BREAK = re.compile(r"[,，、;；。.!！]\s*|\s+and\s+|\s+but\s+", re.IGNORECASE)
_LEAD_ZH = re.compile(r"^(?:嗯+|哦|呃|额|我今年|今年|我是|我在|我|在|是|就是)\s*")
_LEAD_EN = re.compile(r"^(?:um+|uh|well|so|just|I'm|I am|I|in|at|from)\s+", re.IGNORECASE)


def asked_questions(assistant_message: str) -> list[Question]:
    """The questions the assistant asked, in the order it asked them."""
    found: list[tuple[int, int, Question]] = []
    for sentence in _ASSISTANT_SENTENCE.finditer(assistant_message):
        others = bool(_ABOUT_SOMEONE_ELSE.search(sentence.group(0)))
        wish = bool(_ASKS_A_WISH.search(sentence.group(0)))
        for order, question in enumerate(QUESTIONS):
            if (others and not question.about_others) or (wish and question.yes != ("", "")):
                continue
            m = question.asked.search(sentence.group(0))
            if m:
                found.append((sentence.start() + m.start(), order, question))
    found.sort(key=lambda item: (item[0], item[1]))
    return list(dict.fromkeys(question for _, _, question in found))


def answer_segments(user_message: str) -> list[str]:
    return [s.strip() for s in _SEGMENT_BREAK.split(user_message) if s and s.strip() and "?" not in s and "？" not in s]


def statements(question: Question, answer: str, *, zh: bool, city_prefix: re.Pattern[str]) -> list[str]:
    """Full sentences `answer` may stand for as a reply to `question`."""
    lead = _LEAD_ZH if zh else _LEAD_EN
    answer = lead.sub("", answer).strip()
    if not answer:
        return []
    yes, no = (_YES_ZH, _NO_ZH) if zh else (_YES_EN, _NO_EN)
    side = 0 if zh else 1
    if yes.match(answer):
        return [question.yes[side]] if question.yes[side] else []
    if no.match(answer):
        return [question.no[side]] if question.no[side] else []
    pieces = [answer]
    city = city_prefix.match(answer) if zh else None
    if city and len(answer) - city.end() >= 2:  # "深圳腾讯": a city, then a place of work
        pieces += [city.group(0), answer[city.end():]]
    templates = question.zh if zh else question.en
    return [template.format(a=piece) for piece in pieces for template in templates]
