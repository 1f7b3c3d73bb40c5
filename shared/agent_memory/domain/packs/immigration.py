"""The immigration pack: a Hong Kong immigration consultant's memory (the product as specified). Its profile
holds an applicant's basics, career, immigration plans and family; a memory's category is one of the Hong Kong
schemes; the offline rules read schemes, a Hong Kong employer, timelines and amounts."""

from __future__ import annotations

from agent_memory.domain.packs import AssessmentWording, DomainPack, ExtractionRules, LlmPrompt
from agent_memory.domain.profile.profile_schema import (
    Narrative,
    NarrativeClause,
    NarrativeSegment,
    NarrativeWording,
    ProfileField,
    ProfileSchema,
)

# The Hong Kong schemes a memory's category names.
CATEGORIES = ("QMAS", "GEP", "IANG", "TTPS", "CIES", "TECHTAS")


def _clause(*segments: tuple[str, str | None] | NarrativeSegment) -> NarrativeClause:
    return NarrativeClause(segments=[s if isinstance(s, NarrativeSegment) else NarrativeSegment(text=s[0], field=s[1])
                                     for s in segments])


# The Chinese narrative: "用户32岁，职位为后端工程师，浙江大学计算机硕士毕业，…。"
_NARRATIVE_ZH = NarrativeWording(
    clauses=[
        _clause(("用户", None), ("{value}", "age"), ("，职位为{value}", "jobTitle")),
        _clause(("{value}", "university"), ("{value}", "major"), ("{value}", "education"), ("毕业", None)),
        _clause(("所在行业: {value}", "industry")),
        _clause(("工作经验{value}", "yearsOfExperience")),
        _clause(NarrativeSegment(text="{value}", field="annualIncome", strip_prefix="用户")),
        _clause(("目前在{value}", "location")),
        _clause(("关注的移民类别: {value}", "targetCategories")),
        _clause(("计划时间: {value}", "timeline")),
    ],
    opening="", separator="，", list_separator="、", end="。", nothing_known="尚未收集到用户信息。",
    missing="{fields}等信息尚未收集。", missing_separator="、",
)

PROFILE = ProfileSchema(fields=[
    ProfileField(section="basic", name="age", memory_fields=["age"], unit_zh="岁", unit_en=" years old",
                 label_zh="年龄", label_en="age"),
    ProfileField(section="basic", name="education", memory_fields=["education"], label_zh="学历",
                 label_en="education"),
    ProfileField(section="basic", name="university", memory_fields=["university"], label_zh="毕业院校",
                 label_en="university"),
    ProfileField(section="basic", name="major", memory_fields=["major"], label_zh="专业", label_en="major"),
    ProfileField(section="basic", name="nationality", memory_fields=["nationality"], label_zh="国籍",
                 label_en="nationality"),
    ProfileField(section="basic", name="location", memory_fields=["currentLocation", "location"],
                 label_zh="所在地", label_en="location"),
    ProfileField(section="basic", name="languageSkills", memory_fields=["languageSkills"], label_zh="语言能力",
                 label_en="language skills"),
    ProfileField(section="career", name="jobTitle", memory_fields=["currentJobTitle", "jobTitle"],
                 label_zh="职位", label_en="job title"),
    ProfileField(section="career", name="industry", memory_fields=["currentIndustry", "industry"],
                 label_zh="行业", label_en="industry", industry_from="jobTitle"),
    ProfileField(section="career", name="company", memory_fields=["currentCompany", "company"],
                 label_zh="公司", label_en="company", optional=True),
    ProfileField(section="career", name="yearsOfExperience", memory_fields=["totalYearsOfExperience"],
                 unit_zh="年", unit_en=" years", label_zh="工作年限", label_en="years of experience"),
    ProfileField(section="career", name="annualIncome", memory_fields=["annualIncome"], label_zh="年收入",
                 label_en="annual income", as_sentence=True),
    ProfileField(section="immigration", name="targetCategories", memory_fields=["targetCategory"], kind="list",
                 label_zh="目标类别", label_en="target categories"),
    ProfileField(section="immigration", name="timeline", memory_fields=["immigrationTimeline"],
                 label_zh="时间规划", label_en="timeline"),
    ProfileField(section="immigration", name="hasHKEmployer", memory_fields=["hasHKEmployer"],
                 kind="bool", label_zh="香港雇主", label_en="Hong Kong employer"),
    ProfileField(section="immigration", name="hasTechBackground", memory_fields=["hasTechBackground"], kind="bool",
                 label_zh="科技背景", label_en="technical background"),
    ProfileField(section="immigration", name="investmentCapacity", memory_fields=["investmentCapacity"],
                 label_zh="可投资金额", label_en="investment amount", as_sentence=True),
    ProfileField(section="family", name="maritalStatus", memory_fields=["maritalStatus"], label_zh="婚姻状况",
                 label_en="marital status", shown_unknown=True),
    ProfileField(section="family", name="hasChildren", memory_fields=["hasChildren"], kind="bool",
                 label_zh="子女", label_en="children", shown_unknown=True),
    ProfileField(section="family", name="familySupport", memory_fields=["familySupport"], label_zh="家庭支持",
                 label_en="family support", shown_unknown=True, optional=True),
], narrative=Narrative(zh=_NARRATIVE_ZH))

# The Hong Kong schemes' names in Chinese and English.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "ttps": ("高才通", "高端人才通行证计划", "top talent pass scheme"),
    "qmas": ("优才", "优秀人才入境计划", "quality migrant admission scheme"),
    "gep": ("专才", "一般就业政策", "general employment policy"),
    "iang": ("非本地毕业生留港", "non-local graduates"),
    "cies": ("投资移民", "资本投资者入境计划", "capital investment entrant scheme"),
    "techtas": ("科技人才入境计划", "technology talent admission scheme"),
}

# Only policy-like questions are worth a knowledge retrieval call.
KNOWLEDGE_TRIGGERS = (
    "高才通", "TTPS", "优才", "QMAS", "专才", "GEP", "留学", "IANG", "投资", "CIES", "科技", "TECHTAS", "条件",
    "要求", "资格", "申请", "流程", "材料", "费用", "时间", "打分", "评分", "签证", "续签", "永居", "居留", "配偶",
    "受养人", "政策", "最新",
)

LLM_SYSTEM_PROMPT = """# 身份
你是记忆管理专员。你负责从对话中提取并保存用户信息。

# 核心原则
1. 只提取用户明确陈述的信息,不做推测(助手的话不是用户的陈述)
2. 模糊信息保留模糊性("三十多岁" → "30+岁",不要推测为35)
3. 同一信息不要重复保存;"已有信息"中值未变的字段不要再次提取,用户给出新值时提取新值
4. 每条记忆用简洁的陈述句表达,且只对应一个字段
5. 使用用户自己的语言书写记忆内容(中文保持中文,英文保持英文),绝不翻译
6. 正确分类 memoryType:
   - FACT: 客观事实(年龄、学历、工作、收入等)
   - PREFERENCE: 主观偏好(偏好的移民方式、时间偏好等)
   - INTENT: 行动意图(打算何时申请、预算范围、已在准备等)
7. 收入注明币种(如"年薪约80万人民币")
8. 否定与撤回不是肯定: "我不考虑高才通了"、"对花生不过敏"、"已经离职了" 用 operation "retract" 撤回对应字段
   (不要把被否定的内容存成肯定的事实); "不考虑高才通，改走优才" 撤回 TTPS 并保存 QMAS。
   别人的情况、提问和假设("如果我不走优才…")都不是用户的陈述

# 需要提取的核心信息字段
- 基础信息: age 年龄, education 最高学历(博士/硕士/学士/大专/高中), university 毕业院校, major 专业方向
- 职业信息: currentJobTitle 当前职位, currentIndustry 所属行业, currentCompany 当前公司,
  totalYearsOfExperience 工作年限, annualIncome 年收入
- 移民相关: targetCategory 感兴趣的移民类别, hasHKEmployer 是否有香港雇主,
  hasTechBackground 是否有科技背景, investmentCapacity 可投资金额, immigrationTimeline 计划移民时间
- 家庭信息: maritalStatus 婚姻状况, hasChildren 是否有子女, familySupport 家人支持程度
- 个人与喜好: name 姓名, birthday 生日, allergy 过敏(每种一条), preference 其他喜好(每项一条),
  dislike 不喜欢的事物(每项一条)

# 操作
对每一条新信息调用一次 save_user_memory(可以在一次回复中并行调用多次)。
没有可保存的新信息时,不调用工具,直接回复"无新信息"。"""

IMMIGRATION = DomainPack(
    name="immigration",
    description="A Hong Kong immigration consultant's memory of an applicant",
    profile=PROFILE,
    categories=CATEGORIES,
    # A user may aim at two schemes, like several things, have several allergies.
    list_fields=frozenset({"targetCategory", "preference", "dislike", "allergy"}),
    always_relevant_fields=frozenset({"allergy"}),
    list_slot_key="category",
    synonyms=SYNONYMS,
    extraction=ExtractionRules(
        fields=("name", "preferredName", "age", "birthday", "nationality", "languageSkills", "education", "university",
                "major", "currentJobTitle", "currentCompany", "currentIndustry", "totalYearsOfExperience",
                "hasTechBackground", "annualIncome", "currentLocation", "maritalStatus", "hasChildren",
                "familySupport", "targetCategory", "immigrationTimeline", "hasHKEmployer", "investmentCapacity",
                "budget", "allergy"),
        preferences="immigration",
    ),
    summary_fields=(
        "age", "education", "university", "major", "currentJobTitle", "currentIndustry", "currentCompany",
        "totalYearsOfExperience", "annualIncome", "currentLocation", "maritalStatus", "hasChildren",
        "targetCategory", "immigrationTimeline", "investmentCapacity", "hasHKEmployer",
    ),
    knowledge_triggers=KNOWLEDGE_TRIGGERS,
    assessment=AssessmentWording(
        collected_labels={
            "age": ("年龄", "Age"), "education": ("学历", "Education"), "university": ("毕业院校", "University"),
            "workYears": ("工作年限", "Years of experience"), "industry": ("行业", "Industry"),
            "annualIncome": ("年收入", "Annual income"), "maritalStatus": ("婚姻状况", "Marital status"),
            "children": ("子女", "Children"), "languageAbility": ("语言能力", "Languages"),
            "hasHKConnection": ("香港联系", "Hong Kong connection"), "assets": ("资产情况", "Assets"),
            "nationality": ("国籍", "Nationality"),
        },
        core_collected=("age", "education", "workYears", "annualIncome", "languageAbility", "hasHKConnection"),
        heading_zh="用户移民资格初步评估结果:", heading_en="Preliminary assessment:",
        note_zh="提示: 这是基于初步信息的预评估。付费详细评估(¥99)将提供完整的评分报告和申请建议。",
    ),
    llm=LlmPrompt(
        system=LLM_SYSTEM_PROMPT,
        tool_description="将用户信息保存到长期记忆存储。每条记忆包含类型、内容和相关移民类别。",
        memory_type_description="FACT=用户陈述的事实(年龄、学历等),PREFERENCE=用户偏好(倾向的移民方式),"
                                "INTENT=用户意图(计划时间、预算等)",
        category_description="相关的移民类别(如果有明确关联)",
        core_fields=(
            "age", "education", "university", "major",
            "currentJobTitle", "currentIndustry", "currentCompany", "totalYearsOfExperience", "annualIncome",
            "currentLocation", "targetCategory", "hasHKEmployer", "hasTechBackground", "investmentCapacity",
            "immigrationTimeline", "maritalStatus", "hasChildren", "familySupport",
        ),
    ),
)
