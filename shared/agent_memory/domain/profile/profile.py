"""The structured user profile (what summarize returns), built deterministically
from a user's current memories. The schema is data (domain/profile/profile_schema.py): each domain pack brings its own.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, Field

from agent_memory.domain.models import Memory, is_cjk_text
from agent_memory.domain.packs import DomainPack, default_pack
from agent_memory.domain.profile.profile_schema import (
    Narrative,
    NarrativeSegment,
    NarrativeWording,
    ProfileField,
    ProfileSchema,
)
from agent_memory.domain.text.occupations import industry_of

__all__ = ["DEFAULT_PROFILE_SCHEMA", "Completeness", "Profile", "ProfileField", "ProfileSchema", "build_profile",
           "slot_field", "template_narrative"]


# The default profile: the immigration pack's (an applicant's basics, career, immigration plans and family).
DEFAULT_PROFILE_SCHEMA = default_pack().profile

# The immigration pack's fields that hold several values at once (a pack's `list_fields`).
LIST_MEMORY_FIELDS = default_pack().list_fields


def slot_field(field: str | None, category: str | None, value: object, pack: DomainPack | None = None
               ) -> str | None:
    """The slot a memory fills: its field, or for one of the pack's list fields the field and what names the
    value (its category or its value, as the pack says; the default pack when none is given)."""
    pack = pack or default_pack()
    if not field or field not in pack.list_fields:
        return field
    stated = str(value) if value not in (None, "") else ""
    raw = (category or stated) if pack.list_slot_key == "category" else (stated or category or "")
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
    # How the offline narrative words it (the schema's); not part of the profile's answer.
    narrative: Narrative = Field(default_factory=Narrative, exclude=True)


def _display(memory: Memory, spec: ProfileField, chinese: bool) -> Any:
    value = memory.metadata.get("value")
    if spec.kind == "bool":
        return value if isinstance(value, bool) else None
    if spec.kind == "list":
        return memory.category or (str(value) if value is not None else memory.content)
    if spec.as_sentence:  # the sentence keeps amount, currency, vagueness
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
    """Current memories only, retractions aside; the newest memory of a slot wins; a list slot collects all of
    them. The score is the share of filled fields among those counted: all but an optional field that is not
    known."""
    # A retraction fills no field: it retired the memory that did (a list field loses only that item).
    current = sorted((view for m in memories if m.is_current and not m.retraction for view in _field_views(m)),
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
                   labels=labels, narrative=schema.narrative)


def template_narrative(profile: Profile) -> str:
    """The offline narrative: one paragraph in the user's language from the filled slots only, in the wording
    of the profile's schema."""
    wording = profile.narrative.zh if profile.chinese else profile.narrative.en
    known = set(profile.completeness.filled_fields)
    p = {name: value for section in profile.user_profile.values() for name, value in section.items() if name in known}
    parts = _clauses(wording, p) if wording.clauses else [
        f"{profile.labels.get(k, k)}{wording.label_separator}{_shown(v, wording)}" for k, v in p.items()]
    if not parts:
        return wording.nothing_known
    text = wording.opening + wording.separator.join(parts) + wording.end
    missing = profile.completeness.missing_fields
    named = wording.missing_separator.join(profile.labels.get(m, m) for m in missing[:4])
    return text + (wording.missing.format(fields=named) if missing else "")


def _shown(value: Any, wording: NarrativeWording) -> str:
    return wording.list_separator.join(map(str, value)) if isinstance(value, list) else str(value)


def _clauses(wording: NarrativeWording, known: dict[str, Any]) -> list[str]:
    """Each clause with a known field, its segments of unknown fields left out."""
    parts = []
    for clause in wording.clauses:
        if not any(s.field in known for s in clause.segments if s.field):
            continue
        parts.append("".join(_segment(segment, known, wording) for segment in clause.segments
                             if segment.field is None or segment.field in known))
    return parts


def _segment(segment: NarrativeSegment, known: dict[str, Any], wording: NarrativeWording) -> str:
    if segment.field is None:
        return segment.text
    value = known[segment.field]
    if isinstance(value, bool):
        return segment.if_true if value else segment.if_false
    lead = segment.text.split("{value}", 1)[0]
    items = value if isinstance(value, list) else [value]
    said = [_without_lead(str(item).removeprefix(segment.strip_prefix), lead) for item in items]
    return segment.text.format(value=wording.list_separator.join(said))


def _without_lead(value: str, lead: str) -> str:
    """A value that repeats the words before it in the template, without them: "养了" + "养了一只狗" reads "养了一只狗",
    "is allergic to " + "allergic to peanuts" reads "is allergic to peanuts" (a sentence, never a clause pasted in)."""
    for size in range(len(lead), 0, -1):
        words = lead[-size:].strip(" ，,、")
        # A Chinese word may be one character ("对"); an English one is at least two letters.
        if (len(words) >= 2 or (words and is_cjk_text(words))) and value.casefold().startswith(words.casefold()) \
                and len(value) > len(words):
            return value[len(words):].lstrip()
    return value
