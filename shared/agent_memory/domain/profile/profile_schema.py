"""What a profile is made of, as data: its fields (ProfileField), grouped in sections, and the wording of the
offline narrative written from it (Narrative). A domain pack brings one of each (domain/packs)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ProfileField(BaseModel):
    section: str  # basic | career | immigration | family (or a pack's own)
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
    # Shown as the memory's sentence rather than its value (an amount keeps its currency and vagueness).
    as_sentence: bool = False

    def label(self, chinese: bool) -> str:
        return (self.label_zh if chinese else self.label_en) or self.name

    def fills(self, memory_field: str | None) -> bool:
        """Whether a memory's field fills this one (a list field's slots are `<field>.<value>`)."""
        if not memory_field:
            return False
        return memory_field in self.memory_fields or (
            self.kind == "list" and memory_field.split(".", 1)[0] in self.memory_fields)


class NarrativeSegment(BaseModel):
    """A piece of a clause: fixed text (no field), or text around a known field's value (`{value}`); a
    segment whose field is unknown is left out. A yes/no field is worded by `if_true` / `if_false`."""

    text: str = ""
    field: str | None = None
    strip_prefix: str = ""  # taken off the value first ("用户年薪约80万" -> "年薪约80万")
    if_true: str = ""
    if_false: str = ""


class NarrativeClause(BaseModel):
    """One clause of the narrative, written when at least one of its segments' fields is known."""

    segments: list[NarrativeSegment] = Field(min_length=1)


class NarrativeWording(BaseModel):
    """The narrative in one language. Without clauses, every known field is listed as `label: value`."""

    clauses: list[NarrativeClause] = Field(default_factory=list)
    opening: str = "Known about the user: "  # before what is known
    label_separator: str = ": "
    separator: str = "; "  # between clauses or listed fields
    list_separator: str = ", "  # between the values of a list field
    end: str = "."
    nothing_known: str = "Nothing is known yet."
    missing: str = " Not yet collected: {fields}."  # after what is known, naming up to four missing fields
    missing_separator: str = ", "


CHINESE_LISTING = NarrativeWording(opening="已知用户信息：", label_separator="：", separator="；", list_separator="、",
                                   end="。", nothing_known="尚未收集到用户信息。", missing="{fields}等信息尚未收集。",
                                   missing_separator="、")


class Narrative(BaseModel):
    """The offline narrative's wording for Chinese and English users."""

    zh: NarrativeWording = CHINESE_LISTING
    en: NarrativeWording = NarrativeWording()


class ProfileSchema(BaseModel):
    fields: list[ProfileField] = Field(min_length=1)
    narrative: Narrative = Narrative()

    def sections(self) -> list[str]:
        return list(dict.fromkeys(f.section for f in self.fields))
