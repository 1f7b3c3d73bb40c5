"""OfflineExtractor: the deterministic, rule-based extractor used when no LLM is configured."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.domain.models import ExtractedMemory, MemoryType, is_cjk_text
from agent_memory.extraction import OfflineExtractor
from agent_memory.ports import ConversationTurn

SELF_INTRODUCTION = "我今年32岁，浙大计算机硕士毕业的，现在在杭州做前端开发，工作8年了，年薪大概80万"

INTENT_FIELDS = {"targetCategory", "immigrationTimeline", "investmentCapacity"}


def extract(user_message: str, **turn: Any) -> dict[str, ExtractedMemory]:
    """The positive memories by field (what a turn takes back is tested in test_retraction_rules.py)."""
    memories = [m for m in OfflineExtractor().extract(ConversationTurn(user_message=user_message, **turn))
                if not m.retraction]
    fields = [memory.field for memory in memories]
    assert len(fields) == len(set(fields)), f"one memory per field, got {fields}"
    return {memory.field: memory for memory in memories if memory.field}


def values(user_message: str) -> dict[str, Any]:
    return {field: memory.value for field, memory in extract(user_message).items()}


# --- a self-introduction with eight profile facts ------------------------------------------


def test_given_a_self_introduction_when_extracting_then_all_eight_fields_are_found():
    assert values(SELF_INTRODUCTION) == {
        "age": 32,
        "education": "硕士",
        "university": "浙江大学",
        "major": "计算机",
        "currentJobTitle": "前端开发",
        "totalYearsOfExperience": 8,
        "annualIncome": 800000,
        "currentLocation": "杭州",
    }


def test_given_a_self_introduction_when_extracting_then_income_carries_currency_and_approximation():
    income = extract(SELF_INTRODUCTION)["annualIncome"]

    assert income.metadata == {"currency": "CNY", "approximate": True}
    assert income.content == "年薪约80万人民币"


def test_given_a_self_introduction_when_extracting_then_every_content_is_chinese_and_every_type_is_fact():
    memories = extract(SELF_INTRODUCTION).values()

    assert all(is_cjk_text(memory.content) for memory in memories)
    assert {memory.memory_type for memory in memories} == {MemoryType.FACT}


def test_given_a_self_introduction_with_ascii_commas_when_extracting_then_same_values():
    assert values(SELF_INTRODUCTION.replace("，", ",")) == values(SELF_INTRODUCTION)


def test_given_a_self_introduction_when_extracting_then_contents_are_concise_declaratives():
    contents = {field: memory.content for field, memory in extract(SELF_INTRODUCTION).items()}

    assert contents["age"] == "用户32岁"
    assert contents["education"] == "最高学历：硕士"
    assert contents["university"] == "毕业于浙江大学"
    assert contents["major"] == "专业：计算机"
    assert contents["currentJobTitle"] == "职位：前端开发"
    assert contents["totalYearsOfExperience"] == "工作年限：8年"
    assert contents["currentLocation"] == "目前在杭州"


# --- age ---------------------------------------------------------------------------------


def test_given_only_an_age_when_extracting_then_only_age_is_returned():
    assert values("我今年33岁") == {"age": 33}


def test_given_a_vague_age_when_extracting_then_vagueness_is_kept():
    memory = extract("我大概三十多岁")["age"]

    assert memory.value == "30+"
    assert memory.content == "用户30多岁"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我三十出头", "30+"),
        ("我今年二十八岁", 28),
        ("年龄：45", 45),
        ("I'm 32", 32),
        ("I am 32 years old.", 32),
        ("I'm a 32-year-old engineer", 32),
        ("I'm in my thirties", "30+"),
        ("I'm thirty-something", "30+"),
        ("I am in my early forties", "40+"),
    ],
)
def test_given_an_age_statement_when_extracting_then_age_is_parsed(message, expected):
    assert values(message)["age"] == expected


def test_given_a_vague_english_age_when_extracting_then_content_keeps_vagueness_in_english():
    assert extract("I'm in my thirties")["age"].content == "User is in their 30s"


@pytest.mark.parametrize(
    "message", ["我儿子今年5岁", "My son is 5 years old", "我18岁就开始工作了", "I'm 5 minutes away"]
)
def test_given_an_age_that_is_not_the_users_current_age_when_extracting_then_no_age(message):
    assert "age" not in values(message)


# --- education / university / major --------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我是博士后", "博士"),
        ("我读的是研究生", "硕士"),
        ("本科毕业", "学士"),
        ("我本科和硕士都在复旦", "硕士"),
        ("我是大专学历", "大专"),
        ("高中毕业", "高中"),
        ("我读的是MBA", "硕士"),
        ("I have a PhD in physics", "PhD"),
        ("I hold a master's degree", "Master's"),
        ("I have a bachelor's in economics", "Bachelor's"),
        ("I have an associate degree", "Associate"),
        ("I'm a high school graduate", "High school"),
    ],
)
def test_given_a_degree_when_extracting_then_education_is_normalised(message, expected):
    assert values(message)["education"] == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我是清华毕业的", "清华大学"),
        ("北大本科", "北京大学"),
        ("我在复旦读的研究生", "复旦大学"),
        ("上海交大毕业", "上海交通大学"),
        ("哈工大毕业", "哈尔滨工业大学"),
        ("华科电子信息硕士", "华中科技大学"),
        ("中科大本科", "中国科学技术大学"),
        ("港大硕士", "香港大学"),
        ("港科大硕士", "香港科技大学"),
        ("我毕业于哈尔滨工业大学", "哈尔滨工业大学"),
        ("我是东北大学毕业的", "东北大学"),
        ("我是浙大计算机学院毕业的", "浙江大学"),
        ("I graduated from MIT", "MIT"),
        ("I graduated from Zhejiang University", "Zhejiang University"),
        ("I majored in economics at the University of Toronto", "University of Toronto"),
        ("I have an MBA from Harvard", "Harvard University"),
    ],
)
def test_given_a_university_when_extracting_then_full_name_is_returned(message, expected):
    assert values(message)["university"] == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我学的是软件工程专业", "软件工程"),
        ("我的专业是金融工程", "金融工程"),
        ("计算机专业毕业", "计算机"),
        ("我是浙江大学计算机硕士", "计算机"),
        ("I have a degree in computer science", "computer science"),
        ("I majored in economics", "economics"),
        ("I have a master's in finance from HKU", "finance"),
    ],
)
def test_given_a_major_when_extracting_then_major_is_returned(message, expected):
    assert values(message)["major"] == expected


def test_given_two_universities_when_extracting_then_first_is_the_value_and_others_are_kept_in_metadata():
    memory = extract("我本科是复旦的，研究生在港大读的")["university"]

    assert memory.value == "复旦大学"
    assert memory.metadata == {"also_mentioned": ["香港大学"]}


# --- career ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我是一名产品经理", "产品经理"),
        ("我担任技术总监", "技术总监"),
        ("我的职位是高级算法工程师", "高级算法工程师"),
        ("我从事前端开发工作8年", "前端开发"),
        ("我是阿里的产品经理", "产品经理"),
        ("I work as a software engineer at Google", "software engineer"),
        ("I'm a product manager at Tencent", "product manager"),
        ("My job title is data scientist", "data scientist"),
    ],
)
def test_given_a_job_title_when_extracting_then_title_is_returned(message, expected):
    assert values(message)["currentJobTitle"] == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我在阿里巴巴工作", "阿里巴巴"),
        ("我就职于招商银行", "招商银行"),
        ("在香港的汇丰银行工作", "汇丰银行"),
        ("我以前在腾讯工作，现在在字节跳动上班", "字节跳动"),
        ("I work at Google", "Google"),
        ("I'm a product manager at Tencent. I like it.", "Tencent"),
    ],
)
def test_given_a_named_employer_when_extracting_then_company_is_returned(message, expected):
    assert values(message)["currentCompany"] == expected


@pytest.mark.parametrize(
    "message", ["我在上海工作", "我在一家互联网公司工作", "我高中同学在腾讯", "I work for a startup"]
)
def test_given_no_named_employer_when_extracting_then_no_company(message):
    assert "currentCompany" not in values(message)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我在互联网行业", "互联网"),
        ("我是做金融行业的", "金融"),
        ("我在IT行业", "IT"),
        ("I work in the finance industry", "finance"),
        ("I'm in the healthcare sector", "healthcare"),
    ],
)
def test_given_an_explicit_industry_when_extracting_then_industry_is_returned(message, expected):
    assert values(message)["currentIndustry"] == expected


def test_given_only_a_job_title_when_extracting_then_industry_is_not_inferred():
    assert "currentIndustry" not in values("我是一名前端开发工程师")


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("工作了八年", 8),
        ("8年工作经验", 8),
        ("工作十多年了", "10+"),
        ("I have 10 years of experience", 10),
        ("I've been working for 5 years", 5),
        ("I have 10+ years of experience", "10+"),
    ],
)
def test_given_years_of_work_when_extracting_then_total_years_is_returned(message, expected):
    assert values(message)["totalYearsOfExperience"] == expected


# --- income / investment -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "value", "currency", "approximate"),
    [
        ("年薪50w", 500000, "CNY", False),
        ("年薪120万港币", 1200000, "HKD", False),
        ("年收入大约30万美元", 300000, "USD", True),
        ("年薪一百万", 1000000, "CNY", False),
        ("年薪1.5百万港元", 1500000, "HKD", False),
        ("I earn $150k a year", 150000, "USD", False),
        ("My salary is 1.2 million HKD", 1200000, "HKD", False),
        ("My annual salary is around £90,000", 90000, "GBP", True),
        ("I make €80k per year", 80000, "EUR", False),
    ],
)
def test_given_an_annual_income_when_extracting_then_amount_and_currency_are_parsed(
    message, value, currency, approximate
):
    memory = extract(message)["annualIncome"]

    assert memory.value == value
    assert memory.metadata == {"currency": currency, "approximate": approximate}


def test_given_a_non_cny_income_when_extracting_then_content_names_the_currency():
    assert extract("年薪120万港币")["annualIncome"].content == "年薪120万港币"
    assert extract("I earn $150k a year")["annualIncome"].content == "Annual income USD 150,000"


@pytest.mark.parametrize("message", ["月薪3万", "My salary is 10k per month"])
def test_given_a_monthly_salary_when_extracting_then_no_annual_income(message):
    assert "annualIncome" not in values(message)


@pytest.mark.parametrize(
    ("message", "value", "currency"),
    [("可以投资3000万港币", 30000000, "HKD"), ("I can invest HKD 30 million", 30000000, "HKD")],
)
def test_given_an_investment_capacity_when_extracting_then_investment_amount_is_an_intent(
    message, value, currency
):
    memory = extract(message)["investmentCapacity"]

    assert (memory.value, memory.metadata["currency"], memory.memory_type) == (
        value,
        currency,
        MemoryType.INTENT,
    )


# --- location / family -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我在上海工作", "上海"),
        ("住在北京", "北京"),
        ("定居深圳", "深圳"),
        ("我不在北京了，现在定居深圳", "深圳"),
        ("I live in Toronto", "Toronto"),
        ("I'm based in Hangzhou, China", "Hangzhou"),
        ("I'm in Toronto", "Toronto"),
    ],
)
def test_given_a_current_location_when_extracting_then_city_is_returned(message, expected):
    assert values(message)["currentLocation"] == expected


@pytest.mark.parametrize(
    "message", ["我想去香港定居", "我以前在北京工作", "I plan to move to London", "我在北京大学读书的时候"]
)
def test_given_a_wished_or_past_location_when_extracting_then_no_location(message):
    assert "currentLocation" not in values(message)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我已婚", "已婚"),
        ("结婚了", "已婚"),
        ("我还是单身", "未婚"),
        ("我还没结婚", "未婚"),
        ("我离婚了", "离异"),
        ("I'm married with two kids", "married"),
        ("I'm single", "single"),
        ("I'm not married", "single"),
        ("I'm divorced", "divorced"),
    ],
)
def test_given_a_marital_status_when_extracting_then_status_is_returned(message, expected):
    assert values(message)["maritalStatus"] == expected


@pytest.mark.parametrize(
    ("message", "expected", "count"),
    [
        ("我有一个孩子", True, 1),
        ("有两个孩子", True, 2),
        ("我有个女儿", True, 1),
        ("我没有孩子", False, None),
        ("还没孩子", False, None),
        ("I have two kids", True, 2),
        ("I have a daughter", True, 1),
        ("No children yet", False, None),
        ("I don't have kids", False, None),
    ],
)
def test_given_a_statement_about_children_when_extracting_then_has_children_is_a_bool(
    message, expected, count
):
    memory = extract(message)["hasChildren"]

    assert memory.value is expected
    assert memory.metadata.get("count") == count


def test_given_a_child_count_when_extracting_then_content_states_it():
    assert extract("我有一个孩子")["hasChildren"].content == "有1个孩子"
    assert extract("I have two kids")["hasChildren"].content == "Has 2 children"


# --- immigration -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("我对高才通很感兴趣", "TTPS"),
        ("我比较想走优才", "QMAS"),
        ("打算申请专才", "GEP"),
        ("我想了解非本地毕业生计划", "IANG"),
        ("考虑资本投资者入境计划", "CIES"),
        ("我想申请科技人才入境计划", "TECHTAS"),
        ("I'm interested in the Top Talent Pass Scheme (TTPS)", "TTPS"),
        ("I'm considering QMAS", "QMAS"),
    ],
)
def test_given_interest_in_a_scheme_when_extracting_then_target_category_is_an_intent_with_category(
    message, code
):
    memory = extract(message)["targetCategory"]

    assert (memory.value, memory.category, memory.memory_type) == (code, code, MemoryType.INTENT)


def test_given_a_scheme_class_when_extracting_then_content_keeps_the_users_wording():
    memory = extract("我对高才通B类感兴趣")["targetCategory"]

    assert memory.content == "对高才通B类感兴趣"
    assert memory.metadata["subclass"] == "B"


@pytest.mark.parametrize(
    "message", ["优才和高才通有什么区别？", "我对投资移民没兴趣", "How long does QMAS take?"]
)
def test_given_a_scheme_mentioned_without_interest_when_extracting_then_no_target_category(message):
    stated = [m for m in OfflineExtractor().extract(ConversationTurn(user_message=message)) if not m.retraction]
    assert "targetCategory" not in {m.field for m in stated}  # "没兴趣" takes the scheme back (a retraction)


@pytest.mark.parametrize(
    ("message", "expected", "content"),
    [
        ("打算明年申请", "明年", "计划明年申请"),
        ("计划半年内办理", "半年内", "计划半年内办理"),
        ("我想尽快", "尽快", "计划尽快申请"),
        ("I plan to apply next year", "next year", "Plans to apply next year"),
        ("I want to apply within 6 months", "within 6 months", "Plans to apply within 6 months"),
        ("We plan to move as soon as possible", "as soon as possible", "Plans to move as soon as possible"),
    ],
)
def test_given_a_timeline_when_extracting_then_immigration_timeline_is_an_intent(message, expected, content):
    memory = extract(message)["immigrationTimeline"]

    assert (memory.value, memory.content, memory.memory_type) == (expected, content, MemoryType.INTENT)


@pytest.mark.parametrize(
    ("message", "expected", "content"),
    [
        ("最好能在明年年底前拿到身份", "明年年底前", "计划明年年底前拿到身份"),
        ("可能过几年再考虑吧", "过几年", "打算过几年再考虑"),
        ("等明后年再说吧", "明后年", "打算明后年再说"),
        ("预计两三年以后动身", "两三年后", "计划两三年后动身"),
        ("Maybe in a few years, not right now", "in a few years", "Plans to move in a few years"),
        ("Probably two or three years from now", "two or three years from now",
         "Plans to move two or three years from now"),
        ("We hope to settle there before the end of next year", "before the end of next year",
         "Plans to settle before the end of next year"),
    ],
)
def test_given_a_vague_or_deadline_timeline_when_extracting_then_it_keeps_its_vagueness(message, expected, content):
    memory = extract(message)["immigrationTimeline"]

    assert (memory.value, memory.content, memory.memory_type) == (expected, content, MemoryType.INTENT)


@pytest.mark.parametrize("message", [
    "明年结婚", "我今年33岁", "I want to get married next year", "几年前我去过一次香港", "明年年底我们要换房子",
    "我在香港待过两年", "I lived in Hong Kong a few years back", "My contract ends next year",
    "I'll get married in a few years",
])
def test_given_a_date_unrelated_to_applying_when_extracting_then_no_timeline(message):
    assert "immigrationTimeline" not in values(message)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我有香港雇主", True),
        ("已经拿到香港offer了", True),
        ("我没有香港雇主", False),
        ("I got a job offer from a Hong Kong company", True),
        ("I have no Hong Kong employer", False),
    ],
)
def test_given_a_hong_kong_employer_statement_when_extracting_then_bool_is_returned(message, expected):
    assert values(message)["hasHKEmployer"] is expected


# --- an English profile and the language of contents --------------------------------------------------


def test_given_an_english_profile_when_extracting_then_fields_are_found_and_contents_are_english():
    message = (
        "I'm 35, I have a master's degree in computer science from Stanford University and I work as a "
        "software engineer at Google in Toronto. I've been working for 10 years and I earn $150k a year."
    )

    memories = extract(message)

    assert {field: memory.value for field, memory in memories.items()} == {
        "age": 35,
        "education": "Master's",
        "university": "Stanford University",
        "major": "computer science",
        "currentJobTitle": "software engineer",
        "currentCompany": "Google",
        "totalYearsOfExperience": 10,
        "annualIncome": 150000,
        "currentLocation": "Toronto",
    }
    assert not any(is_cjk_text(memory.content) for memory in memories.values())
    assert memories["age"].content == "User is 35 years old"
    assert memories["education"].content == "Highest education: Master's"
    assert memories["university"].content == "Graduated from Stanford University"


def test_given_an_english_intent_message_when_extracting_then_intents_are_typed_as_intent():
    memories = extract(
        "I'm interested in the Top Talent Pass Scheme (TTPS) and plan to apply within 6 months. "
        "I can invest HKD 30 million."
    )

    assert {field for field in memories} == INTENT_FIELDS
    assert all(memory.memory_type is MemoryType.INTENT for memory in memories.values())


def test_given_a_chinese_intent_message_when_extracting_then_everything_is_typed_per_field():
    memories = extract(
        "我已婚，有一个孩子，对高才通B类感兴趣，打算明年申请，已经拿到香港offer，可以投资3000万港币"
    )

    assert set(memories) == {
        "maritalStatus",
        "hasChildren",
        "targetCategory",
        "immigrationTimeline",
        "hasHKEmployer",
        "investmentCapacity",
    }
    for field, memory in memories.items():
        expected = MemoryType.INTENT if field in INTENT_FIELDS else MemoryType.FACT
        assert memory.memory_type is expected, field
        assert is_cjk_text(memory.content), memory.content


# --- negatives, chit-chat and the turn's other parts ----------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "今天天气不错",
        "What's the weather like?",
        "你好",
        "谢谢你的解释，很有帮助",
        "Thanks, that's helpful!",
        "",
        "   ",
    ],
)
def test_given_chit_chat_when_extracting_then_nothing_is_returned(message):
    assert extract(message) == {}


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ("我不是硕士", "education"),
        ("我没有读过博士", "education"),
        ("我想读博", "education"),
        ("我老婆是博士", "education"),
        ("I don't have a PhD", "education"),
        ("I want to do a master's", "education"),
        ("我不是程序员", "currentJobTitle"),
        ("我想做产品经理", "currentJobTitle"),
        ("I'm not a software engineer", "currentJobTitle"),
        ("我不是北大毕业的", "university"),
        ("我想申请港大", "university"),
        ("I want to study at Stanford", "university"),
        ("我不在阿里巴巴工作", "currentCompany"),
        ("I don't live in London", "currentLocation"),
        ("他有两个孩子", "hasChildren"),
        ("我不打算明年申请", "immigrationTimeline"),
    ],
)
def test_given_a_negated_hypothetical_or_third_party_statement_when_extracting_then_field_is_absent(
    message, field
):
    assert field not in values(message)


def test_given_a_partly_negated_message_when_extracting_then_only_the_affirmed_fact_is_kept():
    assert values("我没有读过博士，本科毕业")["education"] == "学士"
    assert values("I don't have a PhD, but I have a bachelor's degree")["education"] == "Bachelor's"


def test_given_facts_only_in_the_assistant_message_when_extracting_then_they_are_ignored():
    turn = {"assistant_message": "您是32岁的硕士，年薪100万，对吗？"}

    assert extract("好的", **turn) == {}
    assert values("我今年33岁") == {"age": 33}


def test_given_existing_info_when_extracting_then_known_fields_are_still_returned_for_the_caller_to_skip():
    memories = extract("我今年33岁，已婚", existing_info={"age": 33, "maritalStatus": "已婚"})

    assert {field: memory.value for field, memory in memories.items()} == {"age": 33, "maritalStatus": "已婚"}


def test_given_the_same_message_twice_when_extracting_then_results_are_identical():
    assert OfflineExtractor().extract(
        ConversationTurn(user_message=SELF_INTRODUCTION)
    ) == OfflineExtractor().extract(ConversationTurn(user_message=SELF_INTRODUCTION))


def test_given_full_width_digits_when_extracting_then_they_are_read_as_numbers():
    assert values("我今年３２岁")["age"] == 32


# --------------------------------------------------------------------------------------
# Preferences, fields beyond the core profile, and answers to the assistant's questions
# --------------------------------------------------------------------------------------


def kinds(user_message: str, **turn: Any) -> dict[str, tuple[str, Any]]:
    return {field: (m.memory_type.value, m.value) for field, m in extract(user_message, **turn).items()}


def test_given_a_wish_for_speed_when_extracting_then_it_is_a_timeline_preference_not_an_intent():
    assert kinds("希望尽快办理,时间越短越好") == {"immigrationTimeline": ("PREFERENCE", "尽快")}


def test_given_a_concrete_plan_when_extracting_then_the_timeline_stays_an_intent():
    assert kinds("我打算明年申请")["immigrationTimeline"] == ("INTENT", "明年")


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我更喜欢文字交流，回复简短一点", {"communicationChannel": "文字", "responseStyle": "简短"}),
        ("I'd rather communicate by email", {"communicationChannel": "email"}),
        ("I prefer window seats", {"preference": "window seats"}),
        ("Could you reply in Mandarin from now on?", {"preferredLanguage": "Chinese"}),
        ("有事打电话给我就行", {"communicationChannel": "电话"}),
        ("我吃素", {"preference": "吃素"}),
    ],
)
def test_given_a_stated_preference_when_extracting_then_a_preference_is_kept(message, expected):
    found = kinds(message)
    assert {field: value for field, (_, value) in found.items()} == expected
    assert {kind for kind, _ in found.values()} == {"PREFERENCE"}


@pytest.mark.parametrize(
    "message", ["你喜欢什么颜色？", "Do you prefer email or phone?", "我老婆更喜欢打电话", "Does she hate long emails?"]
)
def test_given_a_question_or_someone_elses_liking_when_extracting_then_no_preference(message):
    assert not [m for m in OfflineExtractor().extract(ConversationTurn(user_message=message))
                if m.memory_type is MemoryType.PREFERENCE]


def test_given_a_choice_between_schemes_when_extracting_then_the_chosen_one_is_the_preference():
    assert kinds("比起优才我更倾向高才通")["targetCategory"] == ("PREFERENCE", "TTPS")
    assert kinds("Between TTPS and QMAS, I lean towards TTPS")["targetCategory"] == ("PREFERENCE", "TTPS")


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I'm 29, I live in Berlin and work as a nurse",
         {"age": 29, "currentLocation": "Berlin", "currentJobTitle": "nurse"}),
        ("I'm married with two kids and we're thinking about applying for the Top Talent Pass next spring",
         {"maritalStatus": "married", "hasChildren": True, "targetCategory": "TTPS",
          "immigrationTimeline": "next spring"}),
        ("I'm from Germany", {"nationality": "Germany"}),
        ("我是中国国籍", {"nationality": "中国"}),
        ("我有科技背景", {"hasTechBackground": True}),
        ("家人都很支持", {"familySupport": "支持"}),
        ("预算大概300万人民币", {"budget": 3_000_000}),
        ("I'm fluent in English and Cantonese", {"languageSkills": "fluent in English and Cantonese"}),
    ],
)
def test_given_a_fact_the_offline_rules_used_to_miss_when_extracting_then_it_is_found(message, expected):
    assert {field: value for field, (_, value) in kinds(message).items()} == expected


@pytest.mark.parametrize(
    ("message", "skills"),
    [
        ("我英语还可以，雅思考过7分", "英语还可以，雅思7分"),
        ("日语N1，英语马马虎虎", "日语N1，英语马马虎虎"),
        ("我粤语说得很溜", "粤语说得很溜"),
        ("我不会说粤语", "不会说粤语"),
        ("My English is fine, IELTS 7", "fine English, IELTS 7"),
        ("My Mandarin is rusty these days", "rusty Mandarin"),
        ("I scored 110 on the TOEFL", "TOEFL 110"),
    ],
)
def test_given_language_skills_and_scores_when_extracting_then_every_one_is_kept_in_one_memory(message, skills):
    assert values(message)["languageSkills"] == skills


@pytest.mark.parametrize("message", [
    "英语老师说我口语进步很大", "我同学雅思考了7.5", "英语要考多少分？", "Is IELTS 6.5 enough?",
    "My English tutor thinks I'm ready for the exam", "I'm planning to take IELTS in May",
])
def test_given_a_language_mentioned_but_no_skill_of_the_users_then_no_language_skills(message):
    assert "languageSkills" not in values(message)


def test_given_a_hypothetical_question_when_extracting_then_nothing_is_stored():
    assert kinds("如果我有硕士学位的话，能申请高才通吗？") == {}
    assert kinds("If I had a master's degree, would I qualify for QMAS?") == {}


def test_given_a_relatives_sentence_when_extracting_then_nothing_is_the_users():
    assert kinds("My brother lives in Hong Kong and works at HSBC.") == {}
    assert kinds("我表哥在香港做律师") == {}


def test_given_a_terse_answer_to_the_assistants_questions_when_extracting_then_the_asked_fields_are_filled():
    found = kinds("32，在深圳腾讯", assistant_message="请问您今年多大年纪？在哪里工作？")
    assert found == {"age": ("FACT", 32), "currentLocation": ("FACT", "深圳"), "currentCompany": ("FACT", "腾讯")}


@pytest.mark.parametrize(
    ("assistant", "user", "expected"),
    [
        ("您在香港有雇主吗？", "没有", {"hasHKEmployer": False}),
        ("What's your highest degree?", "a master's, from Imperial",
         {"education": "Master's", "university": "Imperial College London"}),
        ("Which language would you like me to reply in?", "English please", {"preferredLanguage": "English"}),
        ("您家人对移民香港怎么看？", "还在犹豫", {"familySupport": "犹豫"}),
    ],
)
def test_given_an_answer_when_extracting_then_it_means_what_was_asked(assistant, user, expected):
    assert {field: value for field, (_, value) in kinds(user, assistant_message=assistant).items()} == expected


def test_given_the_assistants_own_statement_when_extracting_then_it_is_not_the_users_fact():
    assert kinds("好的，谢谢", assistant_message="您32岁，在杭州工作，年薪80万。") == {}


@pytest.mark.parametrize(("message", "field", "content"), [
    ("I don't like long emails", "dislike", "Dislikes long emails"),
    ("I hate spicy food", "dislike", "Dislikes spicy food"),
    ("我不喜欢早起", "dislike", "不喜欢早起"),
    ("I love hiking on weekends", "preference", "Likes hiking on weekends"),
    ("喜欢打篮球", "preference", "喜欢打篮球"),
    ("I'm a big fan of jazz", "preference", "Likes jazz"),
    ("My name is Alice Chen", "name", "Name: Alice Chen"),
    ("我叫李雷", "name", "姓名：李雷"),
    ("My birthday is May 3", "birthday", "Birthday: May 3"),
    ("我的生日是5月3日", "birthday", "生日：5月3日"),
    ("I'm allergic to peanuts", "allergy", "Allergic to peanuts"),
    ("我对花生过敏", "allergy", "对花生过敏"),
    ("I just turned 30", "age", "User is 30 years old"),
])
def test_given_everyday_facts_and_likings_when_extracting_then_each_is_kept_in_the_users_words(
        message, field, content):
    found = [(m.field, m.content) for m in OfflineExtractor().extract(ConversationTurn(user_message=message))]
    assert (field, content) in found


@pytest.mark.parametrize("message", [
    "My wife is allergic to cats", "我不对花生过敏", "call me tomorrow", "我叫外卖了", "I like you",
    "Do you like jazz?", "my friend hates spicy food",
])
def test_given_no_fact_of_the_users_own_then_no_name_allergy_or_liking_is_kept(message):
    found = {m.field for m in OfflineExtractor().extract(ConversationTurn(user_message=message)) if not m.retraction}
    assert not found & {"name", "allergy", "preference", "dislike", "birthday"}


def test_given_call_me_and_a_name_then_the_name_to_be_called_by_not_a_phone_preference():
    found = {m.field: m.value for m in OfflineExtractor().extract(ConversationTurn(user_message="Call me Bob"))}
    assert found == {"preferredName": "Bob"}
    later = {m.field for m in OfflineExtractor().extract(ConversationTurn(user_message="Just call me tomorrow"))}
    assert "communicationChannel" in later


@pytest.mark.parametrize(("message", "channel"), [
    ("I'd prefer to keep things in writing rather than calls", "text"),
    ("比起电话我更喜欢邮件", "邮件"),
    ("不要打电话，发微信就行", "微信"),
    ("Email instead of WhatsApp, please", "email"),
])
def test_a_comparison_keeps_the_option_chosen_not_the_one_turned_down(message, channel):
    assert values(message)["communicationChannel"] == channel


@pytest.mark.parametrize(("message", "called"), [
    ("叫我小王就行", "小王"), ("朋友们都叫我大刘，你也可以这么叫", "大刘"), ("您直接叫我Tony就可以", "Tony"),
    ("别叫我王总，叫我小王就行", "小王"), ("just call me Wang", "Wang"), ("I go by Alex", "Alex"),
    ("Everyone calls me Benny", "Benny"),
])
def test_given_a_nickname_when_extracting_then_it_is_the_preferred_name_not_the_name(message, called):
    memory = extract(message)["preferredName"]
    assert (memory.memory_type, memory.value) == (MemoryType.PREFERENCE, called)
    assert "name" not in values(message)


@pytest.mark.parametrize("message", [
    "明天早上叫我起床", "我叫了辆车", "叫我去开会吧", "My boss called me in for a meeting", "Please don't call me Bob",
    "How should I address you?", "Call me Monday",
])
def test_given_no_name_to_be_called_by_then_no_preferred_name(message):
    assert "preferredName" not in values(message)


@pytest.mark.parametrize(("assistant", "user", "expected"), [
    ("Do you currently have a job offer from a Hong Kong company?", "Yes, from HSBC", {"hasHKEmployer": True}),
    ("您目前有香港公司的工作邀约吗？", "有的，腾讯香港给的", {"hasHKEmployer": True}),
    ("Are you working for a Hong Kong company at the moment?", "yes I am", {"hasHKEmployer": True}),
    ("Have you lined up an employer in Hong Kong yet?", "Not yet", {"hasHKEmployer": False}),
    ("您有技术背景吗？", "有，我是程序员出身", {"hasTechBackground": True}),
    ("请问怎么称呼您？", "小李就行", {"preferredName": "小李"}),
    ("What should I call you?", "Just Sam", {"preferredName": "Sam"}),
    ("How long have you been in this line of work?", "about 10 years now", {"totalYearsOfExperience": 10}),
])
def test_given_a_yes_or_a_terse_answer_to_the_assistants_question_then_the_asked_field_is_filled(
        assistant, user, expected):
    found = {m.field: m.value for m in OfflineExtractor().extract(ConversationTurn(user_message=user,
                                                                                    assistant_message=assistant))}
    assert found == expected


@pytest.mark.parametrize(("assistant", "user"), [
    ("Does your husband have a Hong Kong employer?", "Yes"),
    ("您先生在香港工作吗？", "是的"),
    ("Would you like to have kids one day?", "Yes"),
    ("How long have you been in Hong Kong?", "about 3 years"),
    ("要不要我帮您预约顾问？", "好的"),
])
def test_given_a_yes_to_a_question_about_someone_else_or_a_wish_then_nothing_is_the_users(assistant, user):
    assert OfflineExtractor().extract(ConversationTurn(user_message=user, assistant_message=assistant)) == []


@pytest.mark.parametrize(("message", "years"), [
    ("我做销售快十年了", 10), ("入行八年多了", "8+"), ("工作十来年了", "10+"),
    ("I've been in banking for about 10 years now", 10), ("I've been teaching for nearly twelve years", 12),
    ("It's been about 7 years since I started working", 7),
])
def test_given_a_span_of_work_that_runs_to_now_then_it_is_the_years_of_experience(message, years):
    assert values(message)["totalYearsOfExperience"] == years


@pytest.mark.parametrize("message", [
    "我在北京住了十年了", "We've been together for about 10 years now", "I finished my degree about 5 years ago",
    "毕业快六年了", "我们结婚快五年了", "I've been in London for 6 years", "I've been in the UK for 5 years",
    "I've been in a relationship for 3 years",
])
def test_given_a_span_that_is_not_of_work_then_no_years_of_experience(message):
    assert "totalYearsOfExperience" not in values(message)


@pytest.mark.parametrize("lead", [
    "call me", "叫我", "maybe", "雅思", "做销售", "been in banking for", "I plan to apply in",
])
def test_given_a_long_run_of_spaces_then_the_timeline_language_name_and_years_rules_take_linear_time(lead):
    import time

    from agent_memory.extraction.fields.career import years_of_experience
    from agent_memory.extraction.fields.personal import language_skills, preferred_name
    from agent_memory.extraction.fields.timeline import timeline
    from agent_memory.extraction.grammar import Utterance

    ctx = Utterance(text=lead + " " * 20_000 + "x", zh=is_cjk_text(lead))
    started = time.perf_counter()
    for rule in (timeline, language_skills, preferred_name, years_of_experience):
        rule(ctx)
    assert time.perf_counter() - started < 2.0  # a quadratic reading of the spaces takes minutes


@pytest.mark.parametrize("gap", [" " * 8_000, "\t \u3000" * 2_700, " \n \n" * 2_000])
def test_given_a_long_run_of_whitespace_then_it_reads_as_one_space_or_line_break_in_linear_time(gap):
    import time

    for lead, tail in (("I can invest", "500k USD"), ("我可以投资", "500万"), ("I'm 32", "and live in Berlin")):
        spaced = lead + gap + tail
        started = time.perf_counter()
        found = values(spaced)
        elapsed = time.perf_counter() - started
        assert found == values(lead + ("\n" if "\n" in gap else " ") + tail)
        assert elapsed < 1.0  # read as written, the rules' optional whitespace took ~8 s on 8,000 spaces
