"""The structured profile: deterministic from current memories, schema as data, cached by version."""

from __future__ import annotations

from agent_memory.domain.models import MemoryType, NewMemory, UserRef
from agent_memory.domain.profile import ProfileField, ProfileSchema, build_profile, template_narrative
from agent_memory.services.summarize import SummarizeService
from tests.fakes import InMemoryMemoryStore

USER = UserRef(tenant_id="t", user_id="u")


def fact(store, content, field, value=None, memory_type=MemoryType.FACT, category=None):
    store.save(USER, NewMemory(memory_type=memory_type, content=content, field=field, category=category,
                               metadata={"value": value} if value is not None else {}))


def test_profile_uses_only_current_memories_and_the_newest_value():
    store = InMemoryMemoryStore()
    fact(store, "用户32岁", "age", 32)
    fact(store, "用户33岁", "age", 33)
    fact(store, "对高才通B类感兴趣", "targetCategory", "TTPS", MemoryType.INTENT, "TTPS")
    fact(store, "对优才感兴趣", "targetCategory", "QMAS", MemoryType.INTENT, "QMAS")
    profile = build_profile(store.all_current(USER))
    assert profile.user_profile["basic"]["age"] == "33岁"
    # a newer targetCategory supersedes the older slot value: the profile reflects the current one
    assert profile.user_profile["immigration"]["targetCategories"] == ["QMAS"]
    assert profile.completeness.score == round(100 * 2 / 18)
    assert "用户33岁" in template_narrative(profile)


def test_english_users_get_an_english_narrative():
    store = InMemoryMemoryStore()
    fact(store, "User is 41 years old", "age", 41)
    profile = build_profile(store.all_current(USER))
    assert profile.user_profile["basic"]["age"] == "41 years old"
    assert template_narrative(profile).startswith("Known about the user: age: 41 years old")


def test_a_deployment_brings_its_own_schema():
    schema = ProfileSchema(fields=[ProfileField(section="project", name="pi", memory_fields=["principalInvestigator"]),
                                   ProfileField(section="project", name="target", memory_fields=["enrollment"])])
    store = InMemoryMemoryStore()
    fact(store, "PI is Dr. Wang", "principalInvestigator", "Dr. Wang")
    profile = build_profile(store.all_current(USER), schema)
    assert profile.user_profile == {"project": {"pi": "Dr. Wang"}}
    assert profile.completeness.model_dump() == {"score": 50, "filled_fields": ["pi"], "missing_fields": ["target"]}


def test_an_unchanged_user_is_summarized_from_the_cache():
    store = InMemoryMemoryStore()
    fact(store, "用户32岁", "age", 32)
    calls = []
    service = SummarizeService(store=store, narrate=lambda p: calls.append(p) or "narrative")
    first = service.summarize(USER)
    assert service.summarize(USER) == first and len(calls) == 1
    fact(store, "目前在杭州", "currentLocation", "杭州")
    assert service.summarize(USER).user_profile["basic"]["location"] == "杭州" and len(calls) == 2
