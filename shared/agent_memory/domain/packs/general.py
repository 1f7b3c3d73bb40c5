"""The general pack: a personal assistant's memory of its user. The profile holds who they are, their work,
family and pets, health and allergies, diet, languages, preferences and goals; categories are open (any short
text, or none); the offline rules read everyday statements in English and Chinese."""

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


def _field(section: str, name: str, memory_fields: list[str], zh: str, en: str, **options: object) -> ProfileField:
    return ProfileField.model_validate({"section": section, "name": name, "memory_fields": memory_fields,
                                        "label_zh": zh, "label_en": en, **options})


# Counted in completeness whether known or not: what an assistant wants to know of anybody. The rest (a pet, an
# allergy, a dislike) counts once the user mentions it.
PROFILE_FIELDS = [
    _field("basic", "preferredName", ["preferredName", "name"], "称呼", "name"),
    _field("basic", "age", ["age"], "年龄", "age", unit_zh="岁", unit_en=" years old"),
    _field("basic", "location", ["currentLocation", "location"], "所在地", "location"),
    _field("basic", "nationality", ["nationality"], "国籍", "nationality", optional=True),
    _field("basic", "languageSkills", ["languageSkills"], "语言", "languages", kind="list", optional=True),
    _field("basic", "education", ["education"], "学历", "education", optional=True),
    _field("work", "jobTitle", ["currentJobTitle", "jobTitle"], "职业", "job"),
    _field("work", "company", ["currentCompany", "company"], "单位", "employer", optional=True),
    _field("family", "maritalStatus", ["maritalStatus"], "婚姻状况", "marital status", shown_unknown=True),
    _field("family", "hasChildren", ["hasChildren"], "子女", "children", kind="bool", shown_unknown=True),
    _field("family", "pets", ["pet"], "宠物", "pets", kind="list", optional=True),
    _field("health", "allergies", ["allergy"], "过敏", "allergies", kind="list", optional=True),
    _field("health", "healthConditions", ["healthCondition"], "健康状况", "health conditions", kind="list",
           optional=True),
    _field("health", "diet", ["diet"], "饮食", "diet", optional=True),
    _field("preferences", "preferredLanguage", ["preferredLanguage"], "回复语言", "reply language"),
    _field("preferences", "responseStyle", ["responseStyle"], "回复风格", "reply style", optional=True),
    _field("preferences", "communicationChannel", ["communicationChannel"], "联系方式", "contact channel",
           optional=True),
    _field("preferences", "likes", ["preference"], "喜欢", "likes", kind="list", optional=True),
    _field("preferences", "dislikes", ["dislike"], "不喜欢", "dislikes", kind="list", optional=True),
    _field("goals", "goals", ["goal"], "目标", "goals", kind="list"),
]


def _clause(text: str, field: str) -> NarrativeClause:
    return NarrativeClause(segments=[NarrativeSegment(text=text, field=field)])


def _yes_no(field: str, if_true: str, if_false: str) -> NarrativeClause:
    return NarrativeClause(segments=[NarrativeSegment(field=field, if_true=if_true, if_false=if_false)])


# "用户称呼为娜娜，35岁，住在成都，职业为护士，…。"
NARRATIVE_ZH = NarrativeWording(
    clauses=[_clause("称呼为{value}", "preferredName"), _clause("{value}", "age"), _clause("住在{value}", "location"),
             _clause("国籍{value}", "nationality"), _clause("职业为{value}", "jobTitle"),
             _clause("就职于{value}", "company"), _clause("学历{value}", "education"),
             _clause("会说{value}", "languageSkills"), _clause("{value}", "maritalStatus"),
             _yes_no("hasChildren", "有孩子", "没有孩子"), _clause("养了{value}", "pets"),
             _clause("对{value}过敏", "allergies"), _clause("有{value}", "healthConditions"),
             _clause("饮食：{value}", "diet"), _clause("希望用{value}回复", "preferredLanguage"),
             _clause("回复风格：{value}", "responseStyle"), _clause("联系方式：{value}", "communicationChannel"),
             _clause("喜欢{value}", "likes"), _clause("不喜欢{value}", "dislikes"), _clause("目标：{value}", "goals")],
    opening="用户", separator="，", list_separator="、", end="。", nothing_known="尚未收集到用户信息。",
    missing="{fields}等信息尚未收集。", missing_separator="、",
)
# "The user goes by Lena, is 34 years old, lives in Berlin, works as a data engineer, …."
NARRATIVE_EN = NarrativeWording(
    clauses=[_clause("goes by {value}", "preferredName"), _clause("is {value}", "age"),
             _clause("lives in {value}", "location"), _clause("is {value}", "nationality"),
             _clause("works as {value}", "jobTitle"), _clause("works at {value}", "company"),
             _clause("education: {value}", "education"), _clause("speaks {value}", "languageSkills"),
             _clause("is {value}", "maritalStatus"), _yes_no("hasChildren", "has children", "has no children"),
             _clause("has pets: {value}", "pets"), _clause("is allergic to {value}", "allergies"),
             _clause("has {value}", "healthConditions"), _clause("diet: {value}", "diet"),
             _clause("wants replies in {value}", "preferredLanguage"),
             _clause("reply style: {value}", "responseStyle"),
             _clause("prefers to be reached by {value}", "communicationChannel"), _clause("likes {value}", "likes"),
             _clause("dislikes {value}", "dislikes"), _clause("goals: {value}", "goals")],
    opening="The user ", separator=", ", list_separator=", ", end=".",
)

SYNONYMS: dict[str, tuple[str, ...]] = {
    "allergy": ("allergic", "过敏"),
    "vegetarian": ("素食", "吃素"),
    "cat": ("猫", "cats"),
    "dog": ("狗", "dogs"),
    "diabetes": ("糖尿病",),
    "high blood pressure": ("高血压", "hypertension"),
    "marathon": ("马拉松",),
}

LLM_SYSTEM_PROMPT = """# Role
You keep a personal assistant's long-term memory of its user. From each conversation turn, save what the user
states about themselves.

# Principles
1. Save only what the user states outright, never guesses (the assistant's words are not the user's statements).
2. Keep vague statements vague ("in my thirties" -> "30+", not 35).
3. Do not save the same thing twice; skip a field in "known information" whose value has not changed, and save a
   new value when the user gives one.
4. One short statement per memory, each filling one field.
5. Write each memory in the user's own language; never translate.
6. memoryType: FACT for facts (age, work, family, pets, health); PREFERENCE for likings and how they want to be
   served (diet, reply language and style, contact channel, likes, dislikes); INTENT for plans and goals.
7. Somebody else's facts ("my brother is a doctor") are not the user's.
8. A denial, a withdrawal or an ending is never stored as the positive fact: "I'm not allergic to peanuts", "my dog
   passed away", "I quit my job", "I'm not vegetarian anymore" are saved with operation "retract" on the field (and
   the item: allergy "peanuts", pet "dog"); "I don't have any pets" retracts the whole field (no value). A denial
   that is itself a fact ("I don't have kids") is saved as that fact (hasChildren false). Questions and
   hypotheticals ("if I ever quit...") state nothing.

# Fields
- Basics: preferredName (the name to call them), age, currentLocation, nationality, education, languageSkills (one
  memory per language)
- Work: currentJobTitle, currentCompany
- Family: maritalStatus, hasChildren (true/false), pet (one memory per animal)
- Health: allergy (one per allergen), healthCondition (one per condition), diet
- Preferences: preferredLanguage (the language to answer in), responseStyle, communicationChannel, preference (one
  per liking), dislike (one per dislike)
- Goals: goal (one per goal or plan)

# Action
Call save_user_memory once for each new piece of information (several calls in one reply are fine). With nothing
new to save, call no tool and answer "nothing new"."""

GENERAL = DomainPack(
    name="general",
    description="A personal assistant's memory of its user",
    profile=ProfileSchema(fields=PROFILE_FIELDS, narrative=Narrative(zh=NARRATIVE_ZH, en=NARRATIVE_EN)),
    categories=(),
    list_fields=frozenset({"pet", "allergy", "healthCondition", "languageSkills", "preference", "dislike", "goal"}),
    always_relevant_fields=frozenset({"allergy", "healthCondition", "diet"}),
    list_slot_key="value",
    synonyms=SYNONYMS,
    extraction=ExtractionRules(
        fields=("general.preferredName", "general.age", "general.nationality", "general.currentLocation",
                "general.currentJobTitle", "general.currentCompany", "general.education", "general.maritalStatus",
                "general.hasChildren", "general.pet", "general.allergy", "general.healthCondition", "general.diet",
                "general.languageSkills", "general.goal"),
        preferences="general",
        exemplars="general_exemplars",
    ),
    summary_fields=("preferredName", "name", "age", "currentLocation", "nationality", "currentJobTitle",
                    "currentCompany", "education", "languageSkills", "maritalStatus", "hasChildren", "pet", "allergy",
                    "healthCondition", "diet", "preferredLanguage", "responseStyle", "communicationChannel",
                    "preference", "dislike", "goal"),
    knowledge_triggers=(),
    # A caller's collected_info labelled by the profile's own fields; the fields every profile counts are the core.
    assessment=AssessmentWording(
        collected_labels={field.name: (field.label_zh, field.label_en) for field in PROFILE_FIELDS},
        core_collected=tuple(field.name for field in PROFILE_FIELDS if not field.optional),
    ),
    llm=LlmPrompt(
        system=LLM_SYSTEM_PROMPT,
        tool_description="Save information about the user to long-term memory: a type, a short statement and, "
                         "when it clearly has one, a category.",
        memory_type_description="FACT = a fact the user states (age, work, family, health); PREFERENCE = what they "
                                "like or how they want to be served; INTENT = a plan or goal",
        content_description="The memory as one short statement in the user's own language, e.g. \"User is "
                            "allergic to peanuts\"; never translated",
        category_description="A short topic for the memory (e.g. pets, health, food, travel), any text; omit when "
                             "none fits",
        operation_description='"save" (default): new information. "retract": the user says something no longer '
                              'holds (a denial, a withdrawal, an ending: "I\'m not allergic to peanuts", "my dog '
                              'passed away", "I quit my job"); `field` is the field taken back, `value` the item of '
                              'a list field (none: the whole field). A denial that is itself a fact ("I don\'t have '
                              'kids") is a "save" of that fact (hasChildren false).',
        core_fields=("preferredName", "age", "currentLocation", "nationality", "education", "languageSkills",
                     "currentJobTitle", "currentCompany", "maritalStatus", "hasChildren", "pet", "allergy",
                     "healthCondition", "diet", "preferredLanguage", "responseStyle", "communicationChannel",
                     "preference", "dislike", "goal"),
    ),
)
