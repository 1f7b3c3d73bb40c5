"""The structured user profile (the seed's MemoryManagerSummarizeOutput), built deterministically
from a user's current memories. The schema is data: a deployment can bring its own field set.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent_memory.domain.models import Memory, is_cjk_text


class ProfileField(BaseModel):
    section: str  # basic | career | immigration | family (or a deployment's own)
    name: str  # the profile's field name (seed: jobTitle)
    memory_fields: list[str]  # memory `field` slots that fill it (seed extraction: currentJobTitle)
    kind: str = "text"  # text | list | bool
    unit_zh: str = ""  # appended to bare numbers for Chinese users (32 -> 32岁)
    unit_en: str = ""


class ProfileSchema(BaseModel):
    fields: list[ProfileField] = Field(min_length=1)

    def sections(self) -> list[str]:
        return list(dict.fromkeys(f.section for f in self.fields))


# The seed's immigration profile (07-memory-manager-agent.md, MemoryManagerSummarizeOutput).
DEFAULT_PROFILE_SCHEMA = ProfileSchema(fields=[
    ProfileField(section="basic", name="age", memory_fields=["age"], unit_zh="岁", unit_en=" years old"),
    ProfileField(section="basic", name="education", memory_fields=["education"]),
    ProfileField(section="basic", name="university", memory_fields=["university"]),
    ProfileField(section="basic", name="major", memory_fields=["major"]),
    ProfileField(section="basic", name="nationality", memory_fields=["nationality"]),
    ProfileField(section="basic", name="location", memory_fields=["currentLocation", "location"]),
    ProfileField(section="career", name="jobTitle", memory_fields=["currentJobTitle", "jobTitle"]),
    ProfileField(section="career", name="industry", memory_fields=["currentIndustry", "industry"]),
    ProfileField(section="career", name="company", memory_fields=["currentCompany", "company"]),
    ProfileField(section="career", name="yearsOfExperience", memory_fields=["totalYearsOfExperience"],
                 unit_zh="年", unit_en=" years"),
    ProfileField(section="career", name="annualIncome", memory_fields=["annualIncome"]),
    ProfileField(section="immigration", name="targetCategories", memory_fields=["targetCategory"], kind="list"),
    ProfileField(section="immigration", name="timeline", memory_fields=["immigrationTimeline"]),
    ProfileField(section="immigration", name="hasHKEmployer", memory_fields=["hasHongKongEmployer"], kind="bool"),
    ProfileField(section="immigration", name="investmentCapacity", memory_fields=["investmentAmount"]),
    ProfileField(section="family", name="maritalStatus", memory_fields=["maritalStatus"]),
    ProfileField(section="family", name="hasChildren", memory_fields=["hasChildren"], kind="bool"),
    ProfileField(section="family", name="familySupport", memory_fields=["familySupport"]),
])


class Completeness(BaseModel):
    score: int
    filled_fields: list[str]
    missing_fields: list[str]


class Profile(BaseModel):
    user_profile: dict[str, dict[str, Any]]
    completeness: Completeness
    chinese: bool


def _display(memory: Memory, spec: ProfileField, chinese: bool) -> Any:
    value = memory.metadata.get("value")
    if spec.kind == "bool":
        return value if isinstance(value, bool) else None
    if spec.kind == "list":
        return memory.category or (str(value) if value is not None else memory.content)
    if spec.name == "annualIncome":  # the memory's sentence keeps amount, currency and vagueness
        return memory.content
    if isinstance(value, int | float) and not isinstance(value, bool):
        unit = spec.unit_zh if chinese else spec.unit_en
        return f"{value:g}{unit}"
    if isinstance(value, str) and value:
        return value + (spec.unit_zh if chinese and spec.unit_zh and value.endswith("+") else "")
    return memory.content


def build_profile(memories: list[Memory], schema: ProfileSchema = DEFAULT_PROFILE_SCHEMA) -> Profile:
    """Current memories only; the newest memory of a slot wins; a list slot collects all of them."""
    current = sorted((m for m in memories if m.is_current), key=lambda m: (m.created_at, m.memory_key))
    chinese = is_cjk_text("".join(m.content for m in current)) if current else True
    profile: dict[str, dict[str, Any]] = {section: {} for section in schema.sections()}
    filled, missing = [], []
    for spec in schema.fields:
        matching = [m for m in current if m.field in spec.memory_fields]
        values = [v for v in (_display(m, spec, chinese) for m in matching) if v is not None]
        if not values:
            missing.append(spec.name)
            continue
        profile[spec.section][spec.name] = list(dict.fromkeys(values)) if spec.kind == "list" else values[-1]
        filled.append(spec.name)
    score = round(100 * len(filled) / len(schema.fields))
    return Profile(user_profile=profile, completeness=Completeness(score=score, filled_fields=filled,
                                                                   missing_fields=missing), chinese=chinese)


def template_narrative(profile: Profile) -> str:
    """The offline narrative: one paragraph in the user's language from the filled slots only."""
    p = {name: value for section in profile.user_profile.values() for name, value in section.items()}
    missing = profile.completeness.missing_fields
    if profile.chinese:
        parts = []
        if "age" in p or "jobTitle" in p:
            parts.append("用户" + (f"{p['age']}" if "age" in p else "") + ("，职位为" + p["jobTitle"] if "jobTitle" in p
                                                                          else ""))
        school = "".join(str(p[k]) for k in ("university", "major", "education") if k in p)
        if school:
            parts.append(f"{school}毕业")
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
        return text + (f"{'、'.join(missing[:4])}等信息尚未收集。" if missing and parts else "")
    parts = [f"{k}: {v}" for k, v in p.items()]
    text = ("Known about the user: " + "; ".join(str(x) for x in parts) + ".") if parts else "Nothing is known yet."
    return text + (f" Not yet collected: {', '.join(missing[:4])}." if missing and parts else "")
