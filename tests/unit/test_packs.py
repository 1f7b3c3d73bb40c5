"""Domain packs: chosen per deployment (MEMORY_PACK) and per tenant (MEMORY_TENANT_PACKS), validated once at
settings load, and each bringing its profile, categories, synonyms and rules."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_memory.domain.packs import TenantPacks, UnknownPack, pack_named, packs
from agent_memory.settings import Settings


def test_given_no_pack_setting_then_every_tenant_uses_the_immigration_pack():
    settings = Settings()
    assert settings.memory_pack == "immigration"
    assert settings.pack_for("any-tenant").name == "immigration"
    assert settings.categories_for("any-tenant") == ["QMAS", "GEP", "IANG", "TTPS", "CIES", "TECHTAS"]


def test_given_an_unknown_pack_then_settings_fail_at_load_naming_it(monkeypatch):
    monkeypatch.setenv("MEMORY_PACK", "astrology")
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert "MEMORY_PACK: unknown pack 'astrology'" in str(raised.value)
    assert "immigration" in str(raised.value)  # the packs there are


def test_given_a_tenant_mapped_to_an_unknown_pack_then_settings_fail_naming_tenant_and_pack(monkeypatch):
    monkeypatch.setenv("MEMORY_TENANT_PACKS", '{"acme": "immigration", "globex": "gardening"}')
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert "MEMORY_TENANT_PACKS: tenant 'globex': unknown pack 'gardening'" in str(raised.value)


def test_pack_names_are_read_case_insensitively():
    assert pack_named(" Immigration ").name == "immigration"
    with pytest.raises(UnknownPack):
        pack_named("")


def test_explicit_categories_hold_for_every_tenant_and_empty_means_any(monkeypatch):
    monkeypatch.setenv("MEMORY_CATEGORIES", "A,B")
    assert Settings().categories_for("t") == ["A", "B"]
    monkeypatch.setenv("MEMORY_CATEGORIES", "")
    assert Settings().categories_for("t") == []


def test_a_tenant_without_a_pack_of_its_own_gets_the_deployments():
    choice = TenantPacks("immigration", {"acme": "immigration"})
    assert choice("acme") is choice("other") is pack_named("immigration")


@pytest.mark.parametrize("name", sorted(packs()))
def test_every_pack_names_only_rules_the_offline_extractor_has(name):
    from agent_memory.extraction import OfflineExtractor

    OfflineExtractor(pack_named(name).extraction)  # raises on a rule it does not have


@pytest.mark.parametrize("name", sorted(packs()))
def test_every_packs_profile_fields_are_unique_and_labelled_in_both_languages(name):
    fields = pack_named(name).profile.fields
    assert len({f.name for f in fields}) == len(fields)
    assert all(f.label_zh and f.label_en for f in fields)


@pytest.mark.parametrize("name", sorted(packs()))
def test_every_narrative_clause_names_a_field_of_its_profile(name):
    profile = pack_named(name).profile
    names = {f.name for f in profile.fields}
    for wording in (profile.narrative.zh, profile.narrative.en):
        assert {s.field for c in wording.clauses for s in c.segments if s.field} <= names


def test_make_run_hands_the_pack_settings_to_the_functions_over_the_templates_defaults(monkeypatch):
    from local.runtime import local_environment
    from local.settings import LocalSettings
    from local.template import sqs_queues

    queues = {queue: f"http://queue/{queue}" for queue in sqs_queues()}
    default = local_environment(queues=queues)
    assert (default["MEMORY_PACK"], default["MEMORY_TENANT_PACKS"]) == ("immigration", "{}")
    monkeypatch.setenv("MEMORY_PACK", "general")
    monkeypatch.setenv("MEMORY_TENANT_PACKS", '{"acme": "immigration"}')
    env = local_environment(LocalSettings().parameters(), queues)
    assert (env["MEMORY_PACK"], env["MEMORY_TENANT_PACKS"]) == ("general", '{"acme": "immigration"}')
