"""Where the injected context goes: system placement, most stable first with one cache breakpoint, and the pair
placement echoing the caller's system prompt."""

from __future__ import annotations

from agent_memory.api.inject import inject_context
from agent_memory.domain.models import MemoryType
from tests.fakes.inject import build, remember, request, user
from tests.fakes.store import InMemoryMemoryStore


def test_system_placement_orders_most_stable_first_with_one_cache_breakpoint():
    store, who = InMemoryMemoryStore(), user("system")
    remember(store, who, "User prefers email", 70, MemoryType.PREFERENCE)
    result = inject_context(build(store).inject, who, request(
        user_id=who.user_id, placement="system", system="You are helpful.",
        current_user_message="What do you remember?", device_info={"deviceType": "desktop"},
        consulting_state={"collectedInfo": {"age": 40}}))
    assert result.messages == [{"role": "user", "content": "What do you remember?"}]
    system = result.system
    assert system[0] == {"type": "text", "text": "You are helpful."}
    stable, live = system[1], system[2]
    assert stable["cache_control"] == {"type": "ephemeral"} and "cache_control" not in live
    assert stable["text"].index("<device_context>") < stable["text"].index("<user_memory>")
    assert "<collected_info>" in live["text"] and "<conversation_stats>" in live["text"]


def test_system_placement_adds_no_breakpoint_when_the_caller_used_all_four():
    who = user("breakpoints")
    caller = [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}} for i in range(4)]
    result = inject_context(build().inject, who, request(
        user_id=who.user_id, placement="system", system=caller, current_user_message="hi",
        device_info={"deviceType": "desktop"}))
    assert sum("cache_control" in b for b in result.system) == 4


def test_the_pair_placement_echoes_the_callers_system_prompt():
    who = user("echo")
    result = inject_context(build().inject, who,
                            request(user_id=who.user_id, system="Be kind.", current_user_message="hi"))
    assert result.system == [{"type": "text", "text": "Be kind."}]
    assert inject_context(build().inject, who, request(user_id=who.user_id, current_user_message="hi")).system is None
