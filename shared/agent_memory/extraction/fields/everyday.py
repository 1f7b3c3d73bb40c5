"""Everyday facts a personal assistant keeps: pets, health conditions, diet, and goals. Lists (pets, conditions,
goals) give one memory per value; the value is worded as the user says it."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.grammar import CJK, Utterance, alternation, clause_around, fact, intent, matches
from agent_memory.extraction.numbers import parse_number
from agent_memory.extraction.rule import FieldRule, single

# --------------------------------------------------------------------------------------
# pet
# --------------------------------------------------------------------------------------

# The animal as a value: plural -> singular.
_ANIMALS_EN = {
    "cat": "cat", "cats": "cat", "kitten": "kitten", "kittens": "kitten", "dog": "dog", "dogs": "dog",
    "puppy": "puppy", "puppies": "puppy", "rabbit": "rabbit", "rabbits": "rabbit", "bunny": "rabbit",
    "hamster": "hamster", "hamsters": "hamster", "guinea pig": "guinea pig", "guinea pigs": "guinea pig",
    "parrot": "parrot", "parrots": "parrot", "budgie": "budgie", "budgies": "budgie", "bird": "bird",
    "birds": "bird", "goldfish": "goldfish", "fish": "fish", "turtle": "turtle", "turtles": "turtle",
    "tortoise": "tortoise", "snake": "snake", "lizard": "lizard", "gecko": "gecko", "ferret": "ferret",
    "horse": "horse", "horses": "horse", "pony": "pony", "chickens": "chicken", "rats": "rat",
}
_ANIMALS_ZH = {
    "猫咪": "猫", "小猫": "猫", "猫": "猫", "狗狗": "狗", "小狗": "狗", "狗": "狗", "兔子": "兔子", "仓鼠": "仓鼠",
    "鹦鹉": "鹦鹉", "金鱼": "金鱼", "乌龟": "乌龟", "荷兰猪": "荷兰猪", "柯基": "柯基", "金毛": "金毛", "泰迪": "泰迪",
    "哈士奇": "哈士奇", "柴犬": "柴犬", "布偶猫": "布偶猫", "英短": "英短", "蜥蜴": "蜥蜴", "鸟": "鸟",
}
# A breed is kept with its animal: "dog (golden retriever)".
_BREEDS = {
    "golden retriever": "dog", "labrador": "dog", "lab": "dog", "retriever": "dog", "corgi": "dog", "poodle": "dog",
    "beagle": "dog", "husky": "dog", "german shepherd": "dog", "dachshund": "dog", "pug": "dog", "bulldog": "dog",
    "french bulldog": "dog", "chihuahua": "dog", "shih tzu": "dog", "border collie": "dog", "collie": "dog",
    "terrier": "dog", "spaniel": "dog", "schnauzer": "dog", "greyhound": "dog", "maine coon": "cat",
    "siamese": "cat", "ragdoll": "cat", "bengal": "cat", "tabby": "cat",
}
_ANIMALS_EN |= {breed: f"{animal} ({breed})" for breed, animal in _BREEDS.items()}
_ANIMAL_EN = alternation(_ANIMALS_EN)
_ANIMAL_ZH = alternation(_ANIMALS_ZH)
ANIMALS_EN, ANIMALS_ZH = _ANIMALS_EN, _ANIMALS_ZH  # as said -> the value (retractions name the same animals)
_COUNT_EN = r"(?:a|an|one|two|three|four|five|\d+|some|several)"
_EN_PET_START = re.compile(
    rf"\b(?:I|we)(?:\s+have|'ve\s+got|\s+have\s+got|\s+own|\s+got|\s+adopted|\s+just\s+got|\s+just\s+adopted|"
    rf"\s+rescued|'ve\s+adopted)\s+(?P<count>{_COUNT_EN})\s+"
    rf"(?:[a-z]+\s+){{0,2}}?(?P<animal>{_ANIMAL_EN})\b"
    rf"|\b(?:my|our)\s+(?:[a-z]+\s+)?(?P<own>{_ANIMAL_EN})\b",
    re.IGNORECASE,
)
# More animals after the first: "two cats and a rabbit".
_EN_PET_MORE = re.compile(rf"(?:\s*,\s*|\s+and\s+|\s*,\s*and\s+){_COUNT_EN}\s+(?:[a-z]+\s+)?(?P<animal>{_ANIMAL_EN})\b",
                          re.IGNORECASE)
_EN_PET_NAME = re.compile(r"(?:\s+(?:named|called)\s+|\s*,\s*|\s+is\s+(?:called|named)\s+|'s\s+(?:called|named)\s+)"
                          r"(?P<name>[A-Z][a-z]+)\b(?!\s+[a-z])")
_ZH_PET = re.compile(
    rf"(?:我|我们|我家|家里)(?:家)?(?:又|还|也|刚|新|最近)?(?:养了?|有|收养了)\s*(?:(?P<count>一|两|二|三|四|五|几|\d)?\s*(?:只|条|个|匹|头))?\s*"
    rf"(?P<animal>{_ANIMAL_ZH})|我(?:的|家)(?P<own>{_ANIMAL_ZH})"
)
_ZH_PET_MORE = re.compile(rf"(?:[,，、和]|还有|以及)?\s*(?:一|两|二|三|四|五|几|\d)\s*(?:只|条|个|匹|头)\s*(?P<animal>{_ANIMAL_ZH})")
_ZH_PET_NAME = re.compile(rf"[,，]?\s*(?:它)?(?:叫|名字叫|名叫)\s*(?P<name>[{CJK}A-Za-z]{{1,4}})")


def pets(ctx: Utterance) -> list[ExtractedMemory]:
    found: dict[str, ExtractedMemory] = {}

    def add(animal: str, end: int, said_count: str | None = None) -> None:
        pet_name = (_ZH_PET_NAME if ctx.zh else _EN_PET_NAME).match(ctx.text, end)
        value = (f"{animal[:-1]}, {pet_name['name']})" if animal.endswith(")") else f"{animal} ({pet_name['name']})"
                 ) if pet_name else animal
        count = int(parse_number(said_count) or 0) if said_count else 0
        if count > 1:  # "two cats" is two: said so, and kept as a count
            content = ctx.say(f"养了{said_count}只{animal}", f"Has {count} {animal}s")
            found.setdefault(value, fact("pet", value, content, metadata={"count": count}))
            return
        content = ctx.say(f"养了{animal}" + (f"，叫{pet_name['name']}" if pet_name else ""),
                          f"Has a {animal}" + (f" named {pet_name['name']}" if pet_name else ""))
        found.setdefault(value, fact("pet", value, content))

    if ctx.zh:
        for m in matches(_ZH_PET, ctx, future=False):
            group = "animal" if m["animal"] else "own"
            add(_ANIMALS_ZH[m[group]], m.end(group), m["count"] if group == "animal" else None)
            end = m.end()
            while more := _ZH_PET_MORE.match(ctx.text, end):
                add(_ANIMALS_ZH[more["animal"]], more.end())
                end = more.end()
        return list(found.values())
    for m in matches(_EN_PET_START, ctx, future=False):
        group = "animal" if m["animal"] else "own"
        add(_ANIMALS_EN[m[group].lower()], m.end(group), m["count"] if group == "animal" else None)
        end = m.end()
        while more := _EN_PET_MORE.match(ctx.text, end):
            add(_ANIMALS_EN[more["animal"].lower()], more.end())
            end = more.end()
    return list(found.values())


# --------------------------------------------------------------------------------------
# healthCondition
# --------------------------------------------------------------------------------------

_CONDITIONS_EN = (
    "type 1 diabetes", "type 2 diabetes", "diabetes", "prediabetes", "asthma", "high blood pressure", "hypertension",
    "low blood pressure", "high cholesterol", "arthritis", "rheumatoid arthritis", "osteoarthritis", "migraines",
    "migraine", "depression", "anxiety", "ADHD", "autism", "insomnia", "sleep apnea", "sleep apnoea", "eczema",
    "psoriasis", "celiac disease", "coeliac disease", "IBS", "Crohn's disease", "heart disease", "a heart condition",
    "epilepsy", "lactose intolerance", "back pain", "chronic back pain", "tinnitus", "PCOS", "gout", "anemia",
    "anaemia", "multiple sclerosis", "COPD", "long covid", "chronic fatigue", "fibromyalgia", "hay fever",
    "glaucoma", "osteoporosis", "endometriosis", "a thyroid condition", "hypothyroidism", "hyperthyroidism",
    "kidney disease", "a bad knee", "a bad back", "a bad hip", "a bad shoulder", "bad knees", "dyslexia", "cancer",
)
_CONDITION_EN = (rf"(?:mild\s+|severe\s+|chronic\s+)?(?:{alternation(_CONDITIONS_EN)})"
                 r"|(?:[A-Z]?[a-z]+\s+)?(?:disease|syndrome|disorder)")
_EN_HEALTH = re.compile(
    rf"\bI(?:\s+have|'ve\s+got|\s+have\s+got|\s+get|\s+suffer\s+from|\s+live\s+with|\s+struggle\s+with|"
    rf"\s+was\s+diagnosed\s+with|'ve\s+been\s+diagnosed\s+with|\s+got\s+diagnosed\s+with)\s+(?P<first>{_CONDITION_EN})\b"
    rf"(?P<rest>(?:(?:\s*,\s*|\s+and\s+|\s*,\s*and\s+)(?:{_CONDITION_EN})\b)*)",
    re.IGNORECASE,
)
_EN_HEALTH_ADJECTIVE = {"diabetic": "diabetes", "asthmatic": "asthma", "epileptic": "epilepsy",
                        "anemic": "anemia", "prediabetic": "prediabetes", "pre-diabetic": "prediabetes",
                        "coeliac": "coeliac disease", "celiac": "celiac disease", "autistic": "autism"}
_EN_HEALTH_IS = re.compile(rf"\bI(?:'m| am)\s+(?:a\s+)?(?P<adj>{alternation(_EN_HEALTH_ADJECTIVE)})\b", re.IGNORECASE)
_CONDITIONS_ZH = (
    "高血压", "高血脂", "高血糖", "糖尿病", "抑郁症", "抑郁", "焦虑症", "焦虑", "哮喘", "心脏病", "冠心病", "关节炎",
    "失眠", "偏头痛", "胃病", "胃炎", "痛风", "甲亢", "甲减", "贫血", "腰椎间盘突出", "颈椎病", "乳糖不耐受",
    "鼻炎", "湿疹", "癫痫", "脂肪肝", "乙肝", "多动症", "自闭症", "腰肌劳损", "低血压", "心律不齐", "肾结石",
)
CONDITIONS_EN, CONDITIONS_ZH = _CONDITIONS_EN, _CONDITIONS_ZH  # the conditions a retraction may name
_ZH_HEALTH_HIGH = {"血压": "高血压", "血糖": "高血糖", "血脂": "高血脂"}
_ZH_HEALTH_OTHER = re.compile(
    rf"(?:^|我)(?:的)?(?P<high>血压|血糖|血脂)(?:有点|有些|偏|比较|一直|很)?高"
    rf"|(?:^|我)(?:是)?(?:一名|一个|个)?(?P<patient>{alternation(_CONDITIONS_ZH)})患者"
    r"|(?:^|我)(?:有点|有些|一直|经常)?(?P<direct>乳糖不耐受|失眠|贫血)"
)
_ZH_HEALTH = re.compile(
    rf"(?:我|本人)(?:有|患有|得了|得过|确诊了?|查出了?|一直有|从小就?有)\s*(?:轻度|中度|重度|慢性|一点|点|轻微的?|严重的?)?"
    rf"\s*(?P<first>{alternation(_CONDITIONS_ZH)})(?P<rest>(?:\s*(?:、|和|跟|还有)\s*(?:{alternation(_CONDITIONS_ZH)}))*)"
)


def health_conditions(ctx: Utterance) -> list[ExtractedMemory]:
    found: dict[str, ExtractedMemory] = {}

    def add(value: str) -> None:
        value = re.sub(r"^(?:a|an)\s+", "", value.strip(), flags=re.IGNORECASE)
        if value:
            found.setdefault(value.casefold(), fact("healthCondition", value, ctx.say(f"患有{value}", f"Has {value}")))

    if ctx.zh:
        for m in matches(_ZH_HEALTH, ctx, future=False, past=True):
            add(m["first"])
            for more in re.findall(alternation(_CONDITIONS_ZH), m["rest"] or ""):
                add(more)
        for m in matches(_ZH_HEALTH_OTHER, ctx, future=False, past=True):
            add(_ZH_HEALTH_HIGH[m["high"]] if m["high"] else m["patient"] or m["direct"])
        return list(found.values())
    for m in matches(_EN_HEALTH, ctx, future=False, past=True):
        add(m["first"])
        for more in re.finditer(_CONDITION_EN, m["rest"] or "", re.IGNORECASE):
            add(more.group(0))
    for m in matches(_EN_HEALTH_IS, ctx, future=False):
        add(_EN_HEALTH_ADJECTIVE[m["adj"].lower()])
    return list(found.values())


# --------------------------------------------------------------------------------------
# diet
# --------------------------------------------------------------------------------------

_EN_DIET = re.compile(
    r"(?:\bI(?:'m| am|'ve\s+been|\s+have\s+been)|^As)\s+(?:a\s+|an\s+|strictly\s+|mostly\s+|fully\s+)?(?P<is>veggie|vegetarian|vegan|pescatarian|pescetarian|"
    r"flexitarian|gluten-free|gluten free|dairy-free|dairy free|lactose[- ]intolerant|plant-based|keto)\b"
    r"|\bI(?:'m| am)\s+on\s+an?\s+(?P<on>[a-z-]+(?:\s+[a-z-]+)?)\s+diet\b"
    r"|\bI\s+(?:follow|keep)\s+an?\s+(?P<follow>[a-z-]+(?:\s+[a-z-]+)?)\s+diet\b"
    r"|\bI\s+(?:only\s+)?eat\s+(?P<eat>halal|kosher|plant-based)\b|\bI\s+keep\s+(?P<keep>kosher|halal)\b"
    r"|\bI(?:'m| am)\s+(?:doing|on)\s+(?P<doing>keto|paleo|intermittent\s+fasting|whole30|low-carb|low\s+carb)\b"
    r"|\bI\s+(?:don't|do not|never)\s+drink\s+(?P<drink>alcohol)\b"
    r"|\bI\s+(?:avoid|stay\s+away\s+from|cut\s+out|gave\s+up)\s+(?P<avoid>gluten|dairy|meat|red\s+meat|sugar|carbs|"
    r"alcohol|pork|beef|caffeine|lactose|eggs|fish|seafood)\b"
    r"|\bI\s+(?:can't|cannot)\s+have\s+(?P<food>dairy|gluten|sugar|alcohol|caffeine|nuts|meat|pork|beef|eggs|milk|"
    r"cheese|wheat|spicy\s+food|seafood|shellfish|fish|soy|lactose)\b"
    r"|\bI\s+(?:don't|do not|never|no longer|can't|cannot)\s+eat\s+(?P<no>(?:any\s+)?[a-z]+(?:\s+[a-z]+)?)"
    r"(?=\s*(?:[,.;!?]|$|\bor\b|\band\b|\bbecause\b|\bsince\b))",
    re.IGNORECASE,
)
_ZH_DIET = re.compile(
    r"(?:^|我)(?:一直|平时|从小|已经)?(?P<veg>吃素|吃全素|是素食者|是素食主义者|是纯素食者|吃纯素)"
    r"|(?:^|我)(?:只)?吃(?P<halal>清真)"
    r"|(?:^|我|[,，]\s*)(?:平时|从来|一直|已经)?(?P<no>(?:不吃|不能吃|不能喝|不喝)(?:[\u4e00-\u9fff]{1,4}?))"
    r"(?=[,，。.!！;；]|$|也|和|或)"
)


def diet(ctx: Utterance) -> ExtractedMemory | None:
    if ctx.zh:
        for m in matches(_ZH_DIET, ctx, negation=False, future=False):
            value = "素食" if m["veg"] else (m["halal"] or m["no"])
            return ExtractedMemory(memory_type=MemoryType.PREFERENCE, field="diet", value=value,
                                   content=f"饮食：{value}")
        return None
    for m in matches(_EN_DIET, ctx, negation=False, future=False):
        groups = {k: v for k, v in m.groupdict().items() if v}
        key, raw = next(iter(groups.items()))
        value = f"no {raw.removeprefix('any ')}" if key in ("no", "avoid", "food", "drink") else raw.lower()
        value = "vegetarian" if value == "veggie" else value
        if key in ("on", "follow"):
            value = f"{value} diet"
        return ExtractedMemory(memory_type=MemoryType.PREFERENCE, field="diet", value=value, content=f"Diet: {value}")
    return None


# --------------------------------------------------------------------------------------
# goal
# --------------------------------------------------------------------------------------

# What makes a clause a plan or goal (a place in it is not where the user lives).
GOAL_CUE = re.compile(
    r"\b(?:planning|plan|plans|hoping|hope|want|wants|aiming|aim|saving|saving up|goal|dream|intend|would like|'d like|"
    r"'d love|trying to|going to|buy|visit|trip|travel|holiday|vacation)\b|打算|计划|准备|想|希望|目标|梦想|买|旅游|旅行",
    re.IGNORECASE,
)
_EN_GOAL = re.compile(
    r"\bI(?:'m| am)\s+(?:planning|hoping|trying|aiming|going|determined|saving\s+up|saving|working\s+hard)\s+(?:to|for)\s+"
    r"(?P<a>[^.;!?]+)"
    r"|\bI(?:\s+really)?(?:\s+plan|\s+hope|\s+want|\s+intend|\s+aim|\s+would\s+like|'d\s+like|'d\s+love|"
    r"\s+would\s+love|\s+am\s+determined|'d\s+really\s+like)\s+to\s+(?P<b>[^.;!?]+)"
    r"|\bmy\s+(?:main\s+|big\s+)?(?:goal|plan|dream|aim|resolution|new\s+year'?s\s+resolution)(?:\s+(?:this|for\s+this|"
    r"for\s+next|next)\s+(?:year|month|summer|spring|autumn|fall|winter))?\s+is\s+to\s+(?P<c>[^.;!?]+)"
    r"|\bI(?:'m| am)\s+working\s+towards?\s+(?P<d>[^.;!?]+)"
    r"|\bI(?:'m| am|'ve\s+been|\s+have\s+been)\s+(?:currently\s+|slowly\s+)?(?P<f>learning\s+[^.;!?]+)"
    r"|(?:^|[.!?]\s+)(?P<g>[A-Z][a-z]+ing\s+[^.;!?]{2,40}?)\s+is\s+my\s+(?:main\s+|big\s+)?(?:goal|aim|dream|resolution)\b"
    r"|\bI(?:'m| am)?\s+(?:plan(?:ning)?\s+on|thinking\s+of|looking\s+to)\s+(?P<e>[a-z]+ing\b[^.;!?]*)",
    re.IGNORECASE,
)
_EN_GOAL_END = re.compile(r"\s*(?:,|\bbut\b|\bbecause\b|\bso\b|\bsince\b|\bas\b|\bwhich\b|\bif\b)", re.IGNORECASE)
_WHEN = (r"(?:\d+|a|an|one|two|three|four|five|six|ten|a\s+few|the\s+next|the\s+coming|the\s+end\s+of|january|february|"
         r"march|april|may|june|july|august|september|october|november|december|spring|summer|autumn|fall|winter|"
         r"year|month|week|\d{4})")
_EN_GOAL_TIME = re.compile(
    rf"\s+(?:(?:next|this|by|before|within|around|until)\s+(?:the\s+)?(?:end\s+of\s+(?:the\s+)?)?[a-z0-9]+(?:\s+[a-z]+)?"
    rf"|(?:in|at)\s+{_WHEN}(?:\s+[a-z]+)?|for\s+(?:a|an|\d+|two|three|a\s+few|several)\s+(?:years?|months?|weeks?|days?)"
    r"|someday|one day|soon|eventually|again|from now on)\s*$",
    re.IGNORECASE,
)
_EN_NOT_A_GOAL = re.compile(
    r"^(?:know|ask|see|check|say|thank|understand|find out|talk|chat|hear|clarify|confirm|make sure|tell|you\b|"
    r"book|order|reserve|cancel|schedule|add|set\s+up\s+a\s+reminder|remind|share|get\s+(?:a|some)\s+"
    r"(?:recommendation|advice|help|idea)|"
    r"be\s+(?:called|addressed)|keep\s+(?:it|this|things))",
    re.IGNORECASE,
)
_ZH_GOAL = re.compile(
    r"(?:^|我|今年|明年)(?:今年|明年|以后|将来)?(?:的)?(?:打算|计划|准备|想要?|希望|争取|立志|一直想|目标是|梦想是|计划是|"
    rf"要在[^,，。]{{1,8}}?(?:前|之前|以前))\s*(?P<a>[{CJK}A-Za-z0-9]{{2,20}})"
)
_ZH_GOAL_TIME = re.compile(
    r"^(?:(?:在)?(?:今年|明年|后年|年底|年内|年底前|今年内|下个月|下半年|这个月|月底|以后|将来|未来|尽快|早日|有一天|总有一天|"
    r"今年年底|明年年初|[一二三四五六七八九十\d]+(?:岁|年|个月)(?:前|之前|内|以内)?)(?:前|之前|内)?)+"
    r"(?:能|可以|要|就)?|^(?:能|可以)"
)
_ZH_NOT_A_GOAL = re.compile(r"^(?:问|知道|了解|咨询|请教|请你|让你|你|您|听|看看你|想|说|确认|谢|孩子|儿子|女儿|老公|老婆|家人|"
                            r"他|她|父母|爸|妈|去(?:趟|一趟)?(?:超市|上班|吃饭))")
_ZH_DOING = re.compile(r"我(?:最近|正在|现在|一直)?在(?P<a>学[\u4e00-\u9fffA-Za-z]{1,8}|减肥|健身|戒烟|戒酒|备考[\u4e00-\u9fffA-Za-z]{0,6}|"
                       r"存钱[\u4e00-\u9fff]{0,8})")
# Today's errands are not goals.
_MOMENTARY = re.compile(
    r"\b(?:tonight|today|tomorrow|this\s+(?:morning|afternoon|evening)|right\s+now|later|for\s+(?:dinner|lunch|"
    r"breakfast))\b|^(?:the|a|an|my|bed|work|school|church|sleep)\b|今晚|今天|明天|中午|晚饭|午饭|待会|一会儿|等会",
    re.IGNORECASE,
)


def goals(ctx: Utterance) -> list[ExtractedMemory]:
    found: dict[str, ExtractedMemory] = {}
    if ctx.zh:
        for m in [*matches(_ZH_GOAL, ctx, future=False), *matches(_ZH_DOING, ctx, future=False)]:
            what = _ZH_GOAL_TIME.sub("", m["a"])
            if (len(what) >= 2 and not _ZH_NOT_A_GOAL.match(what) and not _MOMENTARY.search(m.group(0))
                    and not re.search(r"如果|假如|要是", ctx.text)):
                found.setdefault(what, intent("goal", what, f"目标：{what}"))
        return list(found.values())
    for m in matches(_EN_GOAL, ctx, future=False):
        raw = next(value for value in m.groupdict().values() if value)
        what = _EN_GOAL_END.split(raw, maxsplit=1)[0].strip()
        if _MOMENTARY.search(what):  # "make pasta tonight": an errand, not a goal
            continue
        what = _EN_GOAL_TIME.sub("", what).strip() or what
        if len(what) < 3 or _EN_NOT_A_GOAL.match(what) or re.search(r"\bif\b", clause_around(ctx.text, m.start(),
                                                                                             m.end()), re.I):
            continue
        found.setdefault(what.casefold(), intent("goal", what, f"Goal: {what}"))
    return list(found.values())


EVERYDAY_RULES: dict[str, FieldRule] = {
    "general.pet": FieldRule("pet", pets),
    "general.healthCondition": FieldRule("healthCondition", health_conditions),
    "general.diet": single("diet", diet),
    "general.goal": FieldRule("goal", goals),
}
