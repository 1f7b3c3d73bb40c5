"""The user_memory block over fakes: which memories it shows, how many, and what its cache keys on."""

from __future__ import annotations

from typing import Any

from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache
from agent_memory.domain.models import MemoryType
from agent_memory.domain.text.tokens import estimate_tokens
from agent_memory.settings import Settings
from tests.fakes.embedders import HashingEmbedder
from tests.fakes.store import InMemoryMemoryStore
from tests.fakes.user_memory_block import FILLER, Block, remember, who


def test_given_tied_importances_when_injecting_then_the_top_slots_go_to_memories_relevant_to_the_message():
    # Given ten older memories about contacting the user, and thirty newer unrelated ones, all at 70
    store, user = InMemoryMemoryStore(), who("ties")
    for i in range(10):
        remember(store, user, f"Prefers WhatsApp messages for topic {i}", day=i)
    for i in range(30):
        remember(store, user, f"{FILLER[i % 10]} ({i})", day=100 + i)

    # When the block is built under the new rule and under the old one (margin 0: importance always decides)
    lines = Block(store, max_share=0.0).lines(user, "Can you send me a WhatsApp message?")
    old = Block(store, max_share=0.0, importance_margin=0).lines(user, "Can you send me a WhatsApp message?")

    # Then all eight memories are relevant ones; the old rule spent five slots on the newest, unrelated ones
    assert len(lines) == 8 and all("WhatsApp" in line for line in lines)
    assert len(old) == 8 and sum("WhatsApp" in line for line in old) == 3


def test_given_a_clear_importance_spread_when_injecting_then_the_important_memories_come_first():
    store, user = InMemoryMemoryStore(), who("spread")
    remember(store, user, "Plans to apply for the TTPS visa next spring", 80, memory_type=MemoryType.INTENT)
    remember(store, user, "Wants a consultation about schools", 80, memory_type=MemoryType.INTENT)
    for i in range(20):
        remember(store, user, f"Prefers WhatsApp messages for topic {i}", day=i)

    lines = Block(store, max_share=0.0).lines(user, "Can you send me a WhatsApp message?")

    assert [line.split("] ")[0] for line in lines[:2]] == ["- [INTENT", "- [INTENT"]
    assert all("WhatsApp" in line for line in lines[2:]) and len(lines) == 8


def test_when_relevance_finds_too_little_the_empty_top_slots_keep_the_importance_order():
    store, user = InMemoryMemoryStore(), who("thin")
    remember(store, user, "Prefers WhatsApp messages", day=0)
    for i in range(10):
        remember(store, user, f"{FILLER[i]}", day=10 + i)

    lines = Block(store, max_share=0.0).lines(user, "Can you send me a WhatsApp message?")

    assert "WhatsApp" in lines[0]  # relevance first ...
    assert len(lines) == 5  # ... then the newest memories fill the top slots, not the relevant ones'


def test_near_duplicates_are_shown_once():
    store, user = InMemoryMemoryStore(), who("duplicates")
    remember(store, user, "The user prefers WhatsApp for contact", day=1)
    remember(store, user, "User prefers WhatsApp for contact.", day=2)  # the same terms
    remember(store, user, "Prefers WhatsApp contact by voice notes", day=3)
    for i in range(10):
        remember(store, user, FILLER[i], day=10 + i)

    lines = Block(store, max_share=0.0).lines(user, "Should we use WhatsApp for contact?")

    assert sum("prefers WhatsApp for contact" in line for line in lines) == 1
    assert any("voice notes" in line for line in lines)


def test_the_block_diversifies_the_search_ranking_once_so_the_search_order_setting_does_not_change_it():
    # Given paraphrases of one preference that outscore other relevant memories, all carrying embeddings
    store, user, embedder = InMemoryMemoryStore(), who("diversity"), HashingEmbedder()
    for i in range(12):
        remember(store, user, f"Prefers WhatsApp messages about topic {i}", day=i, embedder=embedder)
    for i in range(10):
        remember(store, user, f"Joined a WhatsApp group for {FILLER[i]}", day=20 + i, embedder=embedder)
    message = "Can you send me a WhatsApp message?"

    # When the block is built over searches whose own result order ranges from by score to most diverse
    by_setting = {diversity: Block(store, settings=Settings(memory_search_diversity=diversity), embedder=embedder,
                                   max_share=0.0).lines(user, message)
                  for diversity in (0.0, 0.4, 1.0)}

    # Then the block's picks are the same: its own maximal marginal relevance is the only one applied
    assert len(by_setting[0.0]) == 8
    assert by_setting[0.4] == by_setting[0.0] and by_setting[1.0] == by_setting[0.0]


def test_the_share_sizes_the_block_past_its_floor_and_the_cap_bounds_it():
    store, user = InMemoryMemoryStore(), who("share")
    for i in range(200):
        remember(store, user, f"Asked about the visa application documents, question number {i}", day=i)
    stored = sum(estimate_tokens(m.content) for m in store.all_current(user))
    message = "Which visa application documents do I need?"

    floor = Block(store, max_share=0.0).lines(user, message)
    sized = Block(store, max_share=0.1).lines(user, message)
    capped = Block(store, max_share=0.1, max_tokens=400).lines(user, message)

    assert len(floor) == 8
    assert len(sized) > 8 and sum(estimate_tokens(line) for line in sized) <= 0.1 * stored
    assert 8 <= len(capped) < len(sized) and sum(estimate_tokens(line) for line in capped) <= 400


def test_the_cache_keys_on_the_selection_settings_so_another_share_is_never_served_a_stale_block():
    store, user = InMemoryMemoryStore(), who("cache")
    for i in range(100):
        remember(store, user, f"Asked about the visa application documents, question number {i}", day=i)
    cache = LayeredContextCache(local=LocalContextCache(), shared=None)
    small, large = Block(store, cache, max_share=0.0), Block(store, cache, max_share=0.2)
    margin = Block(store, cache, max_share=0.0, importance_margin=0)
    message = "Which visa application documents do I need?"

    def memory_block(block: Block) -> Any:
        return next(b for b in block.inject(user, message).blocks if b.type == "user_memory")

    first, again = memory_block(small), memory_block(small)
    other_share, other_margin = memory_block(large), memory_block(margin)

    assert (first.cached, again.cached) == (False, True)
    assert not other_share.cached and other_share.tokens > first.tokens
    assert not other_margin.cached


def test_the_cached_parts_are_keyed_by_the_locale_they_were_written_in():
    store, user = InMemoryMemoryStore(), who("locale")
    remember(store, user, "用户对高才通B类感兴趣", 80, memory_type=MemoryType.INTENT)
    block = Block(store)

    chinese = block.inject(user, "我适合高才通吗？").messages[0]["content"]
    english = block.inject(user, "Am I a fit for TTPS?").messages[0]["content"]

    assert "重要度: 80" in chinese and "importance: 80" in english
