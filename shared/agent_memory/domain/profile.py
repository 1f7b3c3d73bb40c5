"""The structured user profile (what summarize returns), built deterministically
from a user's current memories. The schema is data: a deployment can bring its own field set.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, Field

from agent_memory.domain.models import Memory, is_cjk_text
from agent_memory.domain.occupations import industry_of


class ProfileField(BaseModel):
    section: str  # basic | career | immigration | family (or a deployment's own)
    name: str  # the profile's field name (e.g. jobTitle)
    memory_fields: list[str]  # memory `field` slots that fill it (e.g. currentJobTitle)
    kind: str = "text"  # text | list | bool
    unit_zh: str = ""  # appended to bare numbers for Chinese users (32 -> 32岁)
    unit_en: str = ""
    label_zh: str = ""  # how a Chinese narrative names the field (missing ones are listed by it)
    label_en: str = ""
    # Counted once known, never listed as missing (a field asked about only when the user mentions it).
    optional: bool = False
    # Answered even when unknown: text as 未知 / unknown, a yes/no as null.
    shown_unknown: bool = False
    # An industry field: the field naming the user's occupation, whose industry fills this one when no
    # memory states an industry (前端开发 -> IT/互联网).
    industry_from: str | None = None

    def label(self, chinese: bool) -> str:
        return (self.label_zh if chinese else self.label_en) or self.name

    def fills(self, memory_field: str | None) -> bool:
        """Whether a memory's field fills this one (a list field's slots are `<field>.<value>`)."""
        if not memory_field:
            return False
        return memory_field in self.memory_fields or (
            self.kind == "list" and memory_field.split(".", 1)[0] in self.memory_fields)


class ProfileSchema(BaseModel):
    fields: list[ProfileField] = Field(min_length=1)

    def sections(self) -> list[str]:
        return list(dict.fromkeys(f.section for f in self.fields))


# The default profile: an immigration applicant's basics, career, immigration plans and family.
DEFAULT_PROFILE_SCHEMA = ProfileSchema(fields=[
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
                 label_en="annual income"),
    ProfileField(section="immigration", name="targetCategories", memory_fields=["targetCategory"], kind="list",
                 label_zh="目标类别", label_en="target categories"),
    ProfileField(section="immigration", name="timeline", memory_fields=["immigrationTimeline"],
                 label_zh="时间规划", label_en="timeline"),
    ProfileField(section="immigration", name="hasHongKongEmployer", memory_fields=["hasHongKongEmployer"],
                 kind="bool", label_zh="香港雇主", label_en="Hong Kong employer"),
    ProfileField(section="immigration", name="hasTechBackground", memory_fields=["hasTechBackground"], kind="bool",
                 label_zh="科技背景", label_en="technical background"),
    ProfileField(section="immigration", name="investmentAmount", memory_fields=["investmentAmount"],
                 label_zh="可投资金额", label_en="investment amount"),
    ProfileField(section="family", name="maritalStatus", memory_fields=["maritalStatus"], label_zh="婚姻状况",
                 label_en="marital status", shown_unknown=True),
    ProfileField(section="family", name="hasChildren", memory_fields=["hasChildren"], kind="bool",
                 label_zh="子女", label_en="children", shown_unknown=True),
    ProfileField(section="family", name="familySupport", memory_fields=["familySupport"], label_zh="家庭支持",
                 label_en="family support", shown_unknown=True, optional=True),
])

# Fields that hold several values at once (a user may aim at two immigration categories, like several
# things, have several allergies): each value is its own slot, `<field>.<value>`, so a new value adds to
# the others and a repeated one replaces itself.
LIST_MEMORY_FIELDS = frozenset(f for spec in DEFAULT_PROFILE_SCHEMA.fields if spec.kind == "list"
                               for f in spec.memory_fields) | {"preference", "dislike", "allergy"}


def slot_field(field: str | None, category: str | None, value: object) -> str | None:
    """The slot a memory fills: its field, or for a list field the field and its value."""
    if not field or field not in LIST_MEMORY_FIELDS:
        return field
    raw = category or (str(value) if value not in (None, "") else "")
    key = "".join(c for c in raw if (c.isascii() and c.isalnum()) or c in "_+-")[:40]
    if raw and not key:  # a value in another script: a short stable digest names its slot
        key = hashlib.sha1(raw.encode()).hexdigest()[:10]
    return f"{field}.{key}" if key else field


class Completeness(BaseModel):
    score: int
    filled_fields: list[str]
    missing_fields: list[str]


class Profile(BaseModel):
    user_profile: dict[str, dict[str, Any]]
    completeness: Completeness
    chinese: bool
    labels: dict[str, str] = Field(default_factory=dict)  # field name -> its name in the user's language


def _display(memory: Memory, spec: ProfileField, chinese: bool) -> Any:
    value = memory.metadata.get("value")
    if spec.kind == "bool":
        return value if isinstance(value, bool) else None
    if spec.kind == "list":
        return memory.category or (str(value) if value is not None else memory.content)
    if spec.name in ("annualIncome", "investmentAmount"):  # the sentence keeps amount, currency, vagueness
        return memory.content
    if isinstance(value, int | float) and not isinstance(value, bool):
        unit = spec.unit_zh if chinese else spec.unit_en
        return f"{format_number(value, chinese)}{unit}"
    if isinstance(value, str) and value:
        return value + (spec.unit_zh if chinese and spec.unit_zh and value.endswith("+") else "")
    return memory.content


def format_number(value: float, chinese: bool) -> str:
    """A number as people write it, never in exponent form: 5000000 -> 500万 (Chinese), 5,000,000."""
    if float(value).is_integer():
        whole = int(value)
        if chinese and abs(whole) >= 10_000 and whole % 10_000 == 0:
            return f"{whole // 10_000}万"
        return f"{whole:,}" if not chinese else str(whole)
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _field_views(memory: Memory) -> list[Memory]:
    """The memory, and one view of it per further field its text states (`inferred_fields`)."""
    extra = memory.metadata.get("inferred_fields")
    if not isinstance(extra, dict):
        return [memory]
    return [memory] + [memory.model_copy(update={"field": field, "metadata": {**memory.metadata, "value": value}})
                       for field, value in extra.items()]


def build_profile(memories: list[Memory], schema: ProfileSchema = DEFAULT_PROFILE_SCHEMA) -> Profile:
    """Current memories only; the newest memory of a slot wins; a list slot collects all of them. The score is
    the share of filled fields among those counted: all but an optional field that is not known."""
    current = sorted((view for m in memories if m.is_current for view in _field_views(m)),
                     key=lambda m: (m.created_at, m.memory_key))
    chinese = is_cjk_text("".join(m.content for m in current)) if current else True
    profile: dict[str, dict[str, Any]] = {section: {} for section in schema.sections()}
    known: dict[str, Any] = {}
    filled, missing = [], []
    for spec in schema.fields:
        matching = [m for m in current if spec.fills(m.field)]
        values = [v for v in (_display(m, spec, chinese) for m in matching) if v is not None]
        if values:
            known[spec.name] = list(dict.fromkeys(values)) if spec.kind == "list" else values[-1]
    for spec in schema.fields:
        occupation = known.get(spec.industry_from or "")
        industry = industry_of(occupation, chinese=chinese) if isinstance(occupation, str) else None
        if spec.name not in known and industry is not None:
            known[spec.name] = industry
        if spec.name in known:
            profile[spec.section][spec.name] = known[spec.name]
            filled.append(spec.name)
            continue
        if spec.shown_unknown:
            profile[spec.section][spec.name] = None if spec.kind != "text" else ("未知" if chinese else "unknown")
        if not spec.optional:
            missing.append(spec.name)
    score = round(100 * len(filled) / (len(filled) + len(missing))) if filled or missing else 0
    labels = {spec.name: spec.label(chinese) for spec in schema.fields}
    return Profile(user_profile=profile, completeness=Completeness(score=score, filled_fields=filled,
                                                                   missing_fields=missing), chinese=chinese,
                   labels=labels)


def template_narrative(profile: Profile) -> str:
    """The offline narrative: one paragraph in the user's language from the filled slots only."""
    known = set(profile.completeness.filled_fields)
    p = {name: value for section in profile.user_profile.values() for name, value in section.items() if name in known}
    missing = profile.completeness.missing_fields
    if profile.chinese:
        parts = []
        if "age" in p or "jobTitle" in p:
            parts.append("用户" + (f"{p['age']}" if "age" in p else "") + ("，职位为" + p["jobTitle"] if "jobTitle" in p
                                                                          else ""))
        school = "".join(str(p[k]) for k in ("university", "major", "education") if k in p)
        if school:
            parts.append(f"{school}毕业")
        if "industry" in p:
            parts.append(f"所在行业: {p['industry']}")
        if "yearsOfExperience" in p:
            parts.append(f"工作经验{p['yearsOfExperience']}")
        if "annualIncome" in p:
            parts.append(str(p["annualIncome"]).removeprefix("用户"))
        if "location" in p:
            parts.append(f"目前在{p['location']}")
        if "targetCategories" in p:
            parts.append("关注的移民类别: " + "、".join(p["targetCategories"]))
        if "timeline" in p:
            parts.append(f"计划时间: {p['timeline']}")
        text = "，".join(parts) + "。" if parts else "尚未收集到用户信息。"
        named = "、".join(profile.labels.get(m, m) for m in missing[:4])
        return text + (f"{named}等信息尚未收集。" if missing and parts else "")
    parts = [f"{profile.labels.get(k, k)}: {', '.join(map(str, v)) if isinstance(v, list) else v}"
             for k, v in p.items()]
    text = ("Known about the user: " + "; ".join(parts) + ".") if parts else "Nothing is known yet."
    named = ", ".join(profile.labels.get(m, m) for m in missing[:4])
    return text + (f" Not yet collected: {named}." if missing and parts else "")
