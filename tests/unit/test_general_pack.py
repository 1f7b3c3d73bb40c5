"""The general pack's profile, and every service answering a tenant with its own pack: categories, list slots,
the offline extractor, the profile, the synonyms, the knowledge triggers and the LLM prompt."""

from __future__ import annotations

from typing import Any

from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.packs import pack_named
from agent_memory.domain.profile.profile import build_profile, slot_field, template_narrative
from agent_memory.errors import InvalidInput
from agent_memory.ports import ConversationTurn
from agent_memory.settings import Settings
from tests.fakes.services import services_over_fakes
from tests.fakes.store import InMemoryMemoryStore

GENERAL = pack_named("general")
IMMIGRATION = pack_named("immigration")
LENA = ScopeRef(tenant_id="globex", user_id="lena")  # globex is on the general pack
WANG = ScopeRef(tenant_id="acme", user_id="wang")  # acme on the deployment's, immigration


def two_packs(**settings: object):
    return services_over_fakes(Settings(memory_tenant_packs={"globex": "general"}, **settings), embedder=None)


def remember(store: InMemoryMemoryStore, user: ScopeRef, field: str, content: str, value: object,
             memory_type: MemoryType = MemoryType.FACT) -> None:
    store.save(user, NewMemory(memory_type=memory_type, content=content, metadata={"value": value},
                               field=slot_field(field, None, value, GENERAL)))


def berlin_engineer() -> InMemoryMemoryStore:
    store = InMemoryMemoryStore()
    remember(store, LENA, "preferredName", "Goes by Lena", "Lena")
    remember(store, LENA, "currentLocation", "Lives in Berlin", "Berlin")
    remember(store, LENA, "currentJobTitle", "Works as data engineer", "data engineer")
    remember(store, LENA, "allergy", "Allergic to peanuts", "peanuts")
    remember(store, LENA, "pet", "Has a cat named Luna", "cat (Luna)")
    remember(store, LENA, "preferredLanguage", "Wants replies in German", "German", MemoryType.PREFERENCE)
    return store


def test_the_general_profile_has_its_own_sections_and_an_allergy_is_in_health():
    profile = build_profile(berlin_engineer().all_current(LENA), GENERAL.profile)

    assert list(profile.user_profile) == ["basic", "work", "family", "health", "preferences", "goals"]
    assert profile.user_profile["health"] == {"allergies": ["peanuts"]}
    assert profile.user_profile["family"] == {"maritalStatus": "unknown", "hasChildren": None, "pets": ["cat (Luna)"]}
    assert profile.user_profile["preferences"] == {"preferredLanguage": "German"}


def test_the_general_completeness_counts_what_an_assistant_asks_everybody_and_what_else_the_user_said():
    completeness = build_profile(berlin_engineer().all_current(LENA), GENERAL.profile).completeness

    assert completeness.filled_fields == ["preferredName", "location", "jobTitle", "pets", "allergies",
                                          "preferredLanguage"]
    assert completeness.missing_fields == ["age", "maritalStatus", "hasChildren", "goals"]
    assert completeness.score == 60


def test_the_general_narrative_is_in_the_users_language():
    english = template_narrative(build_profile(berlin_engineer().all_current(LENA), GENERAL.profile))
    assert english == ("The user goes by Lena, lives in Berlin, works as data engineer, has pets: cat (Luna), "
                       "is allergic to peanuts, wants replies in German. Not yet collected: age, marital status, "
                       "children, goals.")
    store = InMemoryMemoryStore()
    remember(store, LENA, "age", "用户35岁", 35)
    remember(store, LENA, "allergy", "对花生过敏", "花生")
    remember(store, LENA, "hasChildren", "没有孩子", False)
    chinese = template_narrative(build_profile(store.all_current(LENA), GENERAL.profile))
    assert chinese == "用户35岁，没有孩子，对花生过敏。称呼、所在地、职业、婚姻状况等信息尚未收集。"


def test_a_general_list_slot_is_named_by_its_value_so_two_pets_of_one_category_are_two_slots():
    assert slot_field("pet", "pets", "cat (Luna)", GENERAL) == "pet.catLuna"
    assert slot_field("pet", "pets", "dog", GENERAL) == "pet.dog"
    assert slot_field("targetCategory", "TTPS", "高才通", IMMIGRATION) == "targetCategory.TTPS"


def test_given_a_tenant_on_the_general_pack_then_any_category_is_taken_and_the_immigration_tenant_keeps_its_own():
    services = two_packs()
    saved = services.save.save(LENA, NewMemory(memory_type=MemoryType.FACT, content="Has a cat", category="pets"))
    assert saved.memory.category == "pets"
    try:
        services.save.save(WANG, NewMemory(memory_type=MemoryType.FACT, content="Has a cat", category="pets"))
        raise AssertionError("the immigration tenant took a category outside its schemes")
    except InvalidInput as refused:
        assert refused.details[0]["field"] == "category"


def test_given_a_tenant_on_the_general_pack_then_its_turns_are_read_by_the_general_rules():
    services = two_packs()
    turn = ConversationTurn(user_message="I'm allergic to peanuts and shellfish. I have a cat named Luna.")
    saved = services.save.extract_and_save(LENA, turn)
    assert sorted(m.field or "" for m in services.store.all_current(LENA)) == [
        "allergy.peanuts", "allergy.shellfish", "pet.catLuna"]
    assert sorted(slot for slot, _ in saved.saved) == ["allergy.peanuts", "allergy.shellfish", "pet.catLuna"]
    immigration = services.save.extract_and_save(WANG, turn)
    assert [slot for slot, _ in immigration.saved] == ["allergy.peanuts"]  # the immigration rules read one allergy


def test_extract_reports_every_value_a_turn_gives_a_list_field_and_one_value_as_a_value():
    services = two_packs()

    saved = services.save.extract_and_save(LENA, ConversationTurn(
        user_message="I'm allergic to peanuts and shellfish. I'm 34."))

    assert saved.extracted_info == {"allergy": ["peanuts", "shellfish"], "age": 34}
    one = services.save.extract_and_save(LENA, ConversationTurn(user_message="I'm allergic to kiwi."))
    assert one.extracted_info == {"allergy": "kiwi"}


def test_a_direct_save_reads_its_field_with_the_tenants_rules():
    services = two_packs()
    saved = services.save.save(LENA, NewMemory(memory_type=MemoryType.PREFERENCE,
                                               content="Please always answer me in German."))
    assert (saved.memory.field, saved.memory.metadata["value"]) == ("preferredLanguage", "German")


def test_summarize_answers_each_tenant_in_its_packs_profile():
    services = two_packs()
    services.save.save(LENA, NewMemory(memory_type=MemoryType.FACT, content="I'm allergic to peanuts."))
    services.save.save(WANG, NewMemory(memory_type=MemoryType.FACT, content="用户32岁"))
    assert services.summarize.summarize(LENA).profile.user_profile["health"] == {"allergies": ["peanuts"]}
    assert "immigration" in services.summarize.summarize(WANG).profile.user_profile


def test_the_built_in_synonyms_are_the_tenants_packs():
    services = two_packs()
    assert "高才通" in dict(services.search.synonyms_for("acme", ("ttps",))["ttps"])
    assert "ttps" not in services.search.synonyms_for("globex", ("ttps",))
    assert "猫" in dict(services.search.synonyms_for("globex", ("cat",))["cat"])
    assert "k8s" in dict(services.search.synonyms_for("globex", ("kubernetes",))["kubernetes"])  # common to all


def test_the_knowledge_triggers_are_the_tenants_packs():
    from agent_memory.services.blocks.retrieved import RelevantKnowledgeSource

    source = RelevantKnowledgeSource(retriever=None, triggers=lambda tenant: two_packs().settings.pack_for(
        tenant).knowledge_triggers)

    class Request:
        current_user_message = "what should I cook tonight?"

    class Context:
        request = Request()

        def __init__(self, tenant: str) -> None:
            self.user = ScopeRef(tenant_id=tenant, user_id="u")

    assert source._wanted(Context("globex"))  # the general pack: every message
    assert not source._wanted(Context("acme"))  # the immigration pack: policy words only


def test_the_llm_extraction_prompt_is_the_packs():
    from agent_memory.adapters.llm.claude import SAVE_USER_MEMORY_TOOL, extraction_tool

    general = extraction_tool(GENERAL)
    assert "enum" not in general["input_schema"]["properties"]["category"]
    assert "pet" in general["input_schema"]["properties"]["field"]["description"]
    assert "targetCategory" not in general["input_schema"]["properties"]["field"]["description"]
    assert extraction_tool(IMMIGRATION) == SAVE_USER_MEMORY_TOOL
    assert SAVE_USER_MEMORY_TOOL["input_schema"]["properties"]["category"]["enum"] == list(IMMIGRATION.categories)


def test_the_offline_provider_builds_the_packs_rules():
    from agent_memory.adapters.llm import build_extractor

    extractor = build_extractor(Settings(memory_pack="general"))
    assert [m.field for m in extractor.extract(ConversationTurn(user_message="I have a dog."))] == ["pet"]


def test_the_context_caches_keys_carry_the_tenants_pack_so_a_tenant_moved_to_another_pack_reads_no_old_block():
    from agent_memory.adapters.context_cache import LocalContextCache
    from agent_memory.services.blocks.base import BlockCache

    cache = LocalContextCache(max_entries=10)
    BlockCache(cache, LENA, now=1.0, pack="immigration").get_or_build("user_memory#top", 60, lambda: "immigration's")
    again = BlockCache(cache, LENA, now=2.0, pack="immigration")
    assert again.get_or_build("user_memory#top", 60, lambda: "rebuilt") == "immigration's" and again.all_hits
    moved = BlockCache(cache, LENA, now=2.0, pack="general")
    assert moved.get_or_build("user_memory#top", 60, lambda: "general's") == "general's" and not moved.all_hits


def test_a_value_that_repeats_the_words_before_it_in_the_narrative_reads_once():
    store = InMemoryMemoryStore()
    remember(store, LENA, "pet", "养了一只狗", "养了一只狗")
    remember(store, LENA, "allergy", "对花生过敏", "对花生")
    chinese = template_narrative(build_profile(store.all_current(LENA), GENERAL.profile))
    assert "养了养了" not in chinese and "一只狗" in chinese
    assert "对对" not in chinese and "对花生过敏" in chinese


def test_a_retracted_value_is_not_in_the_profile_nor_its_narrative_and_the_other_items_stay():
    store = berlin_engineer()
    store.save(LENA, NewMemory(memory_type=MemoryType.FACT, content="I'm not allergic to peanuts",
                               metadata={"value": "peanuts"}, field=slot_field("allergy", None, "peanuts", GENERAL),
                               retraction=True))
    remember(store, LENA, "pet", "Has a dog", "dog")

    profile = build_profile(store.all_current(LENA), GENERAL.profile)

    assert "allergies" not in profile.user_profile["health"]
    assert profile.user_profile["family"]["pets"] == ["cat (Luna)", "dog"]
    assert "allergic" not in template_narrative(profile)


def test_the_protocol_folder_stands_in_for_a_knowledge_service_only_for_a_pack_with_trigger_words():
    from agent_memory.services.blocks.base import BlockCache
    from agent_memory.services.blocks.retrieved import RelevantKnowledgeSource

    class Protocol:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def retrieve(self, user: ScopeRef, query: str, limit: int) -> list[dict[str, str]]:
            self.asked.append(query)
            return [{"content": "高才通B类：全球百强大学学士学位，三年工作经验", "source": "protocol.md"}]

    protocol = Protocol()
    source = RelevantKnowledgeSource(retriever=None, protocol=protocol,
                                     triggers=lambda tenant: two_packs().settings.pack_for(tenant).knowledge_triggers)

    class Request:
        def __init__(self, message: str, intent: Any = None) -> None:
            self.current_user_message, self.intent, self.relevant_knowledge = message, intent, None

    class Context:
        def __init__(self, tenant: str, message: str, intent: Any = None) -> None:
            self.user = ScopeRef(tenant_id=tenant, user_id="u")
            self.request = Request(message, intent)
            self.locale = "zh"

        def pick(self, zh: str, en: str) -> str:
            return zh

        def message_hash(self) -> str:
            return self.request.current_user_message

    class NoCache(BlockCache):
        def __init__(self) -> None:
            pass

        def get_or_build(self, key: str, ttl: float, build: Any) -> str:
            return build()

    assert "百强大学" in source.build(Context("acme", "高才通的申请条件是什么？"), NoCache())  # type: ignore[arg-type]
    assert source.build(Context("globex", "Can you suggest a restaurant?"), NoCache()) == ""  # type: ignore[arg-type]
    intent = type("Intent", (), {"type": "PROTOCOL_QA"})()
    assert source.build(Context("acme", "高才通的申请条件是什么？", intent), NoCache()) == ""  # type: ignore[arg-type]
    assert protocol.asked == ["高才通的申请条件是什么？"]
