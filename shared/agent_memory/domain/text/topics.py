"""The everyday topics a question and a memory can share, recognised in English and in Chinese.

A short extracted fact has few words to match and the bundled embedder puts it about as close to an unrelated
question as to its own ("where does the user live" / "Currently based in Shanghai" / "Has a dog named Mochi"
all sit within a few hundredths of cosine). What tells them apart is what each is about: residence, work,
pets, allergies, drinks... A question and a memory that name the same topic, in either language, share it
(`where does he live` and `目前住在上海` both name `residence`); a question that names a topic no memory of
the user names is about something the user never mentioned. Search ranks by the first
(MEMORY_SEARCH_TOPIC_WEIGHT) and absolute relevance counts both (domain/search/relevance.py).

Each topic is a list of cue words: English ones compared after the search analyser (stemmed, stop words
dropped: every stem of a phrase must be there), Chinese ones as substrings. A cue says a text is about the
topic, not that it states it: "does he have pets?" and "Has a dog named Mochi" both name `pets`.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from agent_memory.domain.text.text import tokenize

# topic: (English cues, Chinese cues), comma-separated
TOPICS: dict[str, tuple[str, str]] = {
    "residence": (
        "live, lives, living, lived, based in, move, moved, moving, relocate, relocated, relocating, "
        "hometown, reside, resides, resident, neighbourhood, neighborhood, address, home town, settle, "
        "city, cities, grew up, raised, originally, stay, staying, settled",
        "住在，居住，住哪，搬到，搬去，搬家，搬来，定居，老家，家乡，所在地，住址，地址，"
        "常驻，现居，住的，住于，住着，落户，生活在，城市，哪里人，长大，出生地，待过",
    ),
    "work": (
        "job, jobs, work, works, working, worked, career, occupation, profession, employer, employed, "
        "employee, company, colleague, colleagues, office, boss, retire, retired, retiring, position, "
        "role, industry, manager, engineer, teacher, headteacher, nurse, doctor, designer, developer, lawyer, "
        "accountant, consultant, analyst, firm, director, founder, startup, intern, internship, freelance, "
        "freelancer, self-employed, hired, promoted, promotion, resign, resigned",
        "工作，职业，公司，上班，就职，入职，离职，跳槽，职位，任职，岗位，从事，单位，"
        "老板，同事，退休，开发，实习，创业，创办，经营，总监，董事长，做什么，行业，经理，"
        "工程师，老师，教师，护士，医生，设计师，律师，会计，顾问，分析师，干什么，在职",
    ),
    "experience": (
        "experience, years of work, industry, worked for, senior",
        "经验，工作年限，年资，工龄，从业",
    ),
    "pets": (
        "pet, pets, dog, dogs, cat, cats, puppy, kitten, animal, animals, parrot, hamster, rabbit, "
        "goldfish, retriever, corgi, poodle, terrier",
        "宠物，狗，猫，金毛，柯基，泰迪，动物，鹦鹉，仓鼠，兔子，金鱼，养了，养只，养一只",
    ),
    "allergy": (
        "allergy, allergies, allergic, intolerance, intolerant, anaphylaxis",
        "过敏，不耐受",
    ),
    "health": (
        "health, healthy, illness, ill, sick, chronic, disease, diabetes, diabetic, asthma, "
        "blood pressure, hypertension, surgery, operation, operations, medication, medicine, injury, "
        "injured, condition, conditions, pregnant, disability, knee, back pain, migraine, heart",
        "健康，疾病，生病，病史，慢性，糖尿病，哮喘，高血压，手术，药，受伤，身体，怀孕，"
        "残疾，膝盖，腰，偏头痛，心脏，病",
    ),
    "diet": (
        "diet, dietary, vegetarian, vegan, eat, eats, eating, food, foods, meat, seafood, spicy, halal, "
        "kosher, lactose, dairy, cheese, gluten, pork, beef, meal, meals, lunch, dinner, breakfast, "
        "cuisine, cook, cooking",
        "饮食，吃饭，爱吃，不吃，能吃，吃辣，吃肉，吃的，吃什么，素食，吃素，食物，辣，"
        "海鲜，肉，乳糖，奶酪，麸质，猪肉，牛肉，忌口，清真，午饭，午餐，晚饭，晚餐，早饭，"
        "早餐，菜，做饭，饭",
    ),
    "drink": (
        "drink, drinks, drinking, coffee, tea, beer, wine, alcohol, juice, latte, espresso, milk, "
        "cocktail, soda",
        "喝，咖啡，茶，啤酒，喝酒，红酒，白酒，葡萄酒，酒精，饮料，果汁，拿铁，牛奶，奶茶",
    ),
    "partner": (
        "married, marriage, wife, husband, spouse, partner, boyfriend, girlfriend, divorced, single, "
        "engaged, fiance, fiancee, wedding",
        "结婚，已婚，未婚，妻子，老婆，太太，丈夫，老公，配偶，伴侣，男朋友，女朋友，男友，"
        "女友，离婚，单身，订婚，婚礼，爱人",
    ),
    "children": (
        "kid, kids, child, children, son, sons, daughter, daughters, baby, toddler, grandchild, "
        "grandchildren",
        "孩子，儿子，女儿，小孩，宝宝，子女，孙子，孙女，娃",
    ),
    "relatives": (
        "parent, parents, mother, mum, mom, father, dad, sister, brother, sibling, siblings, grandmother, "
        "grandfather, grandma, grandpa, family, relative, relatives, uncle, aunt, cousin, in-laws, "
        "dependant, dependants, dependent, dependents, join, joining, accompany, "
        "accompanying",
        "一起过去，随行，陪同，父母，爸爸，妈妈，母亲，父亲，爸妈，姐姐，妹妹，哥哥，弟弟，"
        "兄弟，姐妹，爷爷，奶奶，外公，外婆，家人，家里人，亲戚，叔叔，阿姨，表哥，表姐，"
        "家属，岳父，岳母，公婆",
    ),
    "age": (
        "age, old, years old, birthday, born, birth",
        "岁，年龄，出生，生日，多大",
    ),
    "name": (
        "name, named, called, goes by, nickname",
        "名字，叫什么，称呼，叫我，叫他，叫她，名叫，姓",
    ),
    "language": (
        "language, languages, english, cantonese, mandarin, german, french, spanish, japanese, korean, "
        "italian, portuguese, russian, arabic, speak, speaks, speaking, fluent, ielts, toefl, bilingual, "
        "native",
        "语言，英语，英文，粤语，广东话，普通话，国语，德语，法语，西班牙语，日语，韩语，"
        "意大利语，俄语，阿拉伯语，会说，说话，流利，雅思，托福，母语，双语，外语",
    ),
    "education": (
        "education, educated, academic, alma mater, study, studied, studies, studying, university, "
        "college, degree, bachelor, master, masters, phd, doctorate, graduate, graduated, school, major, "
        "majored, course, student, mba, diploma",
        "学历，大学，学位，本科，硕士，博士，毕业，专业，学校，读书，上学，学习，课程，"
        "学生，研究生，文凭",
    ),
    "income": (
        "salary, earn, earns, earning, earnings, income, paid, wage, wages, pension, make a year, bonus",
        "收入，月薪，年薪，工资，薪水，薪资，赚，挣，养老金，退休金，奖金，底薪",
    ),
    "budget": (
        "budget, invest, investment, investing, afford, spend, spending, money, fund, funds, savings, "
        "assets, capital, pay us, price, cost, fee, fees",
        "预算，服务费，投资，资金，花费，存款，资产，积蓄，费用，价格，多少钱，付得起，"
        "花多少",
    ),
    "contact": (
        "contact, contacted, communicate, communication, talk, reach, reach out, available, availability, "
        "call, phone, email, emails, message, messages, wechat, whatsapp, text, texts, telegram, in touch, "
        "sms",
        "联系，沟通，语音，视频通话，手机，电话，邮件，邮箱，微信，短信，消息，打电话，"
        "发消息，联络",
    ),
    "reply_style": (
        "answer, answers, reply, replies, response, responses, format, formatted, brief, concise, "
        "detailed, bullet, bullets, tone, formal, casual, explain, explanations",
        "回复，回答，简短，简洁，详细，格式，要点，语气，正式",
    ),
    "hobbies": (
        "hobby, hobbies, free time, fun, weekend, weekends, saturday, saturdays, sunday, sundays, enjoy, "
        "enjoys, leisure, pastime, interest, interests, supporter, fan, fans, team, club, play, plays, "
        "playing, music, reading, read, games, gaming, photography, painting, garden, gardening, knit, "
        "knitting, jazz, concert, concerts",
        "爱好，兴趣，球队，球迷，周末，业余，空闲，闲暇，休闲，消遣，玩，音乐，看书，阅读，"
        "游戏，摄影，画画，绘画，园艺，爵士，演唱会，音乐会",
    ),
    "exercise": (
        "exercise, exercises, gym, running, marathon, yoga, swim, swimming, fitness, workout, "
        "hike, hiking, cycling, bike, tennis, football, basketball, badminton, sport, sports, climb, "
        "climbing, ski, skiing, pilates, workouts",
        "运动，健身，跑步，马拉松，瑜伽，游泳，锻炼，徒步，爬山，骑行，自行车，网球，足球，"
        "篮球，羽毛球，攀岩，滑雪，普拉提",
    ),
    "travel": (
        "trip, trips, travel, travels, travelling, traveling, holiday, holidays, vacation, visit, "
        "visiting, visited, fly, flying, flight, flights, abroad, tour, journey",
        "旅行，旅游，出差，假期，度假，出行，机票，航班，出国，去玩，行程，国庆，春节，"
        "放假，探亲",
    ),
    "goals": (
        "goal, goals, plan, plans, planning, aim, aims, hope, hopes, want to, wants to, dream, ambition, "
        "target, fallback, plan b, backup, alternative, intend, intends, deadline, timeline",
        "目标，计划，打算，希望，梦想，想要，备选，后路，志向，截止，期限，时间表",
    ),
    "immigration": (
        "visa, visas, immigration, immigrate, emigrate, permit, residency, ttps, qmas, iang, talent, "
        "scheme, route, pathway, entrant, application, apply, applied, applying, passport, citizenship, "
        "citizen, nationality, refused, rejected, identity card",
        "签证，移民，路线，途径，高才通，优才，专才，居留，身份，申请，护照，国籍，公民，"
        "拒签，入境，续签，永居，身份证",
    ),
    "driving": (
        "drive, drives, driving, driver, car, cars, licence, license, vehicle",
        "开车，驾照，驾驶，汽车，车",
    ),
    "religion": (
        "religion, religious, buddhist, buddhism, christian, christianity, muslim, islam, catholic, hindu, "
        "jewish, church, temple, mosque, faith, pray",
        "宗教，信仰，佛教，基督，天主教，穆斯林，伊斯兰，教会，寺庙，清真寺，信教，礼拜",
    ),
    "smoking": (
        "smoke, smokes, smoking, smoker, cigarette, cigarettes, vape, vaping",
        "抽烟，吸烟，烟，电子烟",
    ),
    "property": (
        "property, properties, flat, flats, house, houses, apartment, mortgage, rent, rents, renting, "
        "landlord, own a home, real estate",
        "房产，房子，买房，物业，公寓，房贷，租房，房租，房东，楼盘，不动产",
    ),
    "appearance": (
        "tattoo, tattoos, glasses, blood type, height, tall, weight, hair, eyes",
        "纹身，眼镜，血型，身高，体重，头发，眼睛",
    ),
    "legal": (
        "criminal, conviction, convicted, police, arrest, arrested, court, lawsuit",
        "犯罪，无犯罪，定罪，警察，被捕，法院，诉讼，案底",
    ),
    "entertainment": (
        "film, films, movie, movies, book, books, novel, series, tv, instrument, instruments, piano, "
        "guitar, violin, sing, singing, band, song, songs",
        "电影，书，小说，电视剧，剧，节目，乐器，钢琴，吉他，小提琴，唱歌，乐队，歌",
    ),
    "politics": (
        "political, politics, vote, votes, voted, election",
        "政治，政党，投票，选举",
    ),
    "finance": (
        "bank, banks, account, accounts, loan, loans, debt, credit, insurance, tax, taxes, stock, stocks, "
        "shares",
        "银行，账户，贷款，债务，信用，保险，税，股票，理财",
    ),
    "schedule": (
        "morning, mornings, night, nights, evening, evenings, shift, shifts, schedule, weekday, weekdays, "
        "daily, routine, monday, mondays, tuesday, tuesdays, wednesday, wednesdays, thursday, thursdays, "
        "friday, fridays",
        "周一，周二，周三，周四，周五，早上，早晨，晚上，夜里，夜班，作息，日程，每天，"
        "早起，熬夜，白天，上午，下午",
    ),
    # Finer topics inside the broad ones: a question about a former city, a mother or a beer names the broad
    # topic and the finer one, so the memory that names both ranks above the one that names only the first.
    "former": (
        "before, previously, previous, formerly, former, prior, earlier, ago, originally, moved, "
        "moving, ex, until, grew up, back then, no longer, quit, stopped, switched",
        "以前，之前，原来，原先，曾经，曾在，过去，早年，从前，前任，搬到，搬来，搬去，不再，戒了，改成",
    ),
    "origin": (
        "hometown, home town, born, birthplace, grew up, raised, originally, native, roots",
        "老家，家乡，出生，出生地，哪里人，长大，籍贯，祖籍",
    ),
    "alcohol": (
        "alcohol, alcoholic, beer, beers, wine, wines, spirits, whisky, whiskey, vodka, gin, rum, cocktail, "
        "cocktails, pub, bar, sober, teetotal, drunk, booze",
        "啤酒，喝酒，红酒，白酒，葡萄酒，酒精，戒酒，烈酒，鸡尾酒，酒吧",
    ),
    "mother": ("mother, mum, mom, mama, mummy, mothers", "妈妈，母亲，老妈，妈"),
    "father": ("father, dad, daddy, papa, fathers", "爸爸，父亲，老爸，爸"),
    "sibling": ("sister, brother, sibling, siblings, sisters, brothers", "姐姐，妹妹，哥哥，弟弟，兄弟，姐妹"),
    "son": ("son, sons", "儿子"),
    "daughter": ("daughter, daughters", "女儿"),
    "qualification": (
        "qualification, qualifications, certificate, certificates, certified, certification, chartered, "
        "cpa, cfa, pmp, accredited",
        "证书，资格，执照，资质，认证，持证",
    ),
}


def _english_cues() -> dict[str, tuple[frozenset[str], ...]]:
    """Each topic's English cues as the analyser's stems (a cue of stop words only is dropped)."""
    out = {}
    for topic, (english, _) in TOPICS.items():
        cues = {frozenset(tokenize(cue)) for cue in english.split(",")}
        out[topic] = tuple(c for c in cues if c)
    return out


_ENGLISH = _english_cues()
_CHINESE = {topic: tuple(c.strip() for c in unicodedata.normalize("NFKC", chinese).split(",") if c.strip())
            for topic, (_, chinese) in TOPICS.items()}


# Idioms whose words would name another topic ("for a living" is about work, not residence): read as the topic's
# word before analysis.
IDIOMS = {"for a living": "job", "make a living": "job", "makes a living": "job"}


@lru_cache(maxsize=32768)
def topics_of(text: str, stems: frozenset[str] | None = None) -> frozenset[str]:
    """The topics `text` names; `stems`: its analysed terms when the caller has them already (a memory's
    `memory_terms`), so the text is not analysed twice. Memoised: a user's memories meet query after query."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    idioms = [idiom for idiom in IDIOMS if idiom in folded]
    if idioms:
        for idiom in idioms:
            folded = folded.replace(idiom, IDIOMS[idiom])
        stems = None
    return _topics(folded, frozenset(tokenize(folded)) if stems is None else stems)


def _topics(folded: str, stems: frozenset[str]) -> frozenset[str]:
    """`folded`: NFKC, case-folded."""
    return frozenset(topic for topic in TOPICS
                     if any(cue <= stems for cue in _ENGLISH[topic]) or any(c in folded for c in _CHINESE[topic]))


def topic_match(query_topics: frozenset[str], memory_topics: frozenset[str]) -> float:
    """The share of the query's topics the memory names (0 for a query that names none): 1 for the memory
    about what a question asks, a fraction for one memory of a long message that names many things."""
    return len(query_topics & memory_topics) / len(query_topics) if query_topics else 0.0
