"""Domain packs: what makes the memory an immigration consultant's or a personal assistant's, as data.

A pack bundles the profile (its fields, sections and narrative wording), the categories a memory may carry
(none = any short text), the built-in synonyms, the offline extractor's field rules (by name), the fields of
load_context's profile summary, the words that make a message worth a knowledge retrieval, and the LLM
extraction prompt. A deployment picks one (MEMORY_PACK) and may give a tenant another (MEMORY_TENANT_PACKS);
every service asks for the caller's tenant's pack (`TenantPacks.for_tenant`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.profile.profile_schema import ProfileSchema


class ExtractionRules(BaseModel):
    """The offline extractor's rules: the field rules that run, in the order their memories are reported
    (names of extraction.rules.FIELD_RULES), and the preference stage that reads likings after them."""

    model_config = ConfigDict(frozen=True)

    fields: tuple[str, ...] = Field(min_length=1)
    preferences: Literal["immigration", "general"]
    # Labelled clauses (<name>.jsonl beside the packs) that read what the rules leave alone, by nearest examples.
    exemplars: str | None = None


class LlmPrompt(BaseModel):
    """The LLM extractor's system prompt and the wording of its save_user_memory tool."""

    model_config = ConfigDict(frozen=True)

    system: str
    tool_description: str
    memory_type_description: str
    category_description: str
    content_description: str = ('要保存的记忆内容,用简洁的陈述句表达,如"用户32岁,清华大学计算机硕士"。'
                                "使用用户自己的语言,不要翻译。")
    core_fields: tuple[str, ...]  # the fields the tool's `field` names (besides "other")
    operation_description: str = (
        '"save"(默认): 保存一条新信息; "retract": 用户说某条信息已不再成立(否认、撤回、结束:"我不考虑高才通了"、'
        '"我对花生不过敏"、"我离职了"), field 填被撤回的字段, value 填被撤回的那一项(列表字段), 整个字段都撤回时不填 '
        'value。否认本身带有事实时(如"我没有孩子")用 "save" 保存该事实(hasChildren=false)。')


class AssessmentWording(BaseModel):
    """The wording of inject's blocks that restate the caller's consulting_state: the labels of its collected_info
    fields (field -> Chinese, English; an unknown field shows its name) and the core fields listed as not collected
    yet; how the assessment block opens, per language, and the note that closes the Chinese one (empty = none)."""

    model_config = ConfigDict(frozen=True)

    collected_labels: Mapping[str, tuple[str, str]] = Field(default_factory=dict)
    core_collected: tuple[str, ...] = ()
    heading_zh: str = "初步评估结果:"
    heading_en: str = "Preliminary assessment:"
    note_zh: str = ""


class DomainPack(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    profile: ProfileSchema
    # The categories a memory may carry (case-insensitive, stored as written here); empty = any short text.
    categories: tuple[str, ...] = ()
    # Fields that hold several values at once: each value is its own slot, `<field>.<value>`.
    list_fields: frozenset[str] = frozenset()
    # What names a list field's slot: the memory's category first (a scheme: "targetCategory.TTPS"), or its value.
    list_slot_key: Literal["category", "value"] = "category"
    synonyms: Mapping[str, tuple[str, ...]] = Field(default_factory=dict)  # head term -> its synonyms
    extraction: ExtractionRules
    summary_fields: tuple[str, ...]  # load_context's profile summary: these fields' memories, in this order
    knowledge_triggers: tuple[str, ...] = ()  # empty = every message is worth a knowledge retrieval
    # Fields whose memories matter to any request (allergies, health, diet): the user_memory block carries them
    # whenever it is placed, before the ranked memories, whatever the message says.
    always_relevant_fields: frozenset[str] = frozenset()
    llm: LlmPrompt
    assessment: AssessmentWording = AssessmentWording()


def _packs() -> dict[str, DomainPack]:
    from agent_memory.domain.packs.general import GENERAL
    from agent_memory.domain.packs.immigration import IMMIGRATION

    return {pack.name: pack for pack in (IMMIGRATION, GENERAL)}


@cache
def packs() -> Mapping[str, DomainPack]:
    """Every pack by name (built on first use, then kept)."""
    return MappingProxyType(_packs())


DEFAULT_PACK = "immigration"


class UnknownPack(ValueError):
    """A setting names a pack there is not."""


def pack_named(name: str) -> DomainPack:
    found = packs().get(name.strip().lower())
    if found is None:
        raise UnknownPack(f"unknown pack {name!r} (the packs are: {', '.join(sorted(packs()))})")
    return found


def default_pack() -> DomainPack:
    """The pack of a tenant and a setting that name none (DEFAULT_PACK): every default in the code is this one."""
    return pack_named(DEFAULT_PACK)


class TenantPacks:
    """Which pack a tenant's memory uses: the deployment's, unless the tenant has its own."""

    def __init__(self, default: str = DEFAULT_PACK, by_tenant: Mapping[str, str] | None = None) -> None:
        self.default = pack_named(default)
        self._by_tenant = {tenant: pack_named(name) for tenant, name in (by_tenant or {}).items()}

    def for_tenant(self, tenant_id: str) -> DomainPack:
        return self._by_tenant.get(tenant_id, self.default)

    def __call__(self, tenant_id: str) -> DomainPack:
        return self.for_tenant(tenant_id)
