"""The inject budget over fakes: what fits, what is dropped first (P2, then P1; P0 stays), when the history is
compacted, and how token counts are reported."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.api.inject import inject_context
from agent_memory.domain.inject.context import frame_overhead_tokens
from agent_memory.domain.inject.context_budget import ReserveRule
from agent_memory.domain.inject.conversation import validate_messages
from agent_memory.domain.models import ScopeRef
from agent_memory.errors import InvalidInput
from tests.fakes.inject import NOW, big_state, build, request, user


def long_history(turns: int, chars: int) -> list[dict[str, str]]:
    history: list[dict[str, str]] = []
    for i in range(turns):
        history += [{"role": "user", "content": f"question {i} " + "x" * chars},
                    {"role": "assistant", "content": f"answer {i} " + "y" * chars}]
    return history


def test_budget_when_everything_fits_nothing_is_dropped_or_compacted():
    who = user("fits")
    result = inject_context(build().inject, who, request(
        user_id=who.user_id, current_user_message="hello there", consulting_state=big_state(),
        similar_experiences=[{"content": "be brief"}], max_context_tokens=100_000))
    assert result.dropped_contexts == [] and not result.compacted
    assert result.total_context_tokens == result.token_usage.context > 0


def test_blocks_tokens_sum_the_blocks_and_total_context_tokens_adds_their_frame():
    who = user("frame")
    result = inject_context(build().inject, who, request(
        user_id=who.user_id, current_user_message="hello there", consulting_state=big_state(),
        similar_experiences=[{"content": "be brief"}], max_context_tokens=100_000))
    assert len(result.blocks) >= 2
    assert result.blocks_tokens == sum(block.tokens for block in result.blocks)
    assert result.total_context_tokens - result.blocks_tokens == frame_overhead_tokens("en") > 0


def with_blocks(services: Any, who: ScopeRef, experiences: list[dict[str, Any]], agents: list[dict[str, Any]],
                max_context_tokens: int) -> Any:
    """An inject with P0 state, a P1 agent history and P2 experiences, under the given budget."""
    return inject_context(services.inject, who, request(
        user_id=who.user_id, current_user_message="hello there", consulting_state=big_state(),
        similar_experiences=experiences, agent_history=agents, max_context_tokens=max_context_tokens))


def test_budget_when_tight_p2_is_dropped_before_p1_and_p0_stays():
    who = user("tight")
    services = build(context_reserved_output_tokens=0, context_reserved_system_tokens=0,
                     context_compaction_threshold=1.0)
    experiences = [{"content": "experience " * 60}]
    agents = [{"agentName": "Policy Expert", "invokedAt": int(NOW * 1000), "inputSummary": "x " * 90,
               "outputSummary": "y " * 90}]
    base = with_blocks(services, who, experiences, agents, 100_000)
    tokens = {b.type: b.tokens for b in base.blocks}
    p0 = tokens["collected_info"]
    # Room for P0 and the P1 blocks but not the P2 one.
    budget = base.token_usage.messages_before + p0 + tokens["conversation_stats"] \
        + tokens["active_agents_history"] + 60
    result = with_blocks(services, who, experiences, agents, max(budget, 1000))
    assert "similar_experiences" in result.dropped_contexts
    assert "collected_info" in result.injected_contexts


def test_budget_when_p0_alone_exceeds_it_p0_stays_and_the_history_is_compacted():
    who = user("p0-over")
    history = long_history(30, 3000)
    result = inject_context(build().inject, who, request(
        user_id=who.user_id, messages=history, current_user_message="so what now?",
        consulting_state=big_state(), similar_experiences=[{"content": "be brief"}], max_context_tokens=16_000))
    assert "collected_info" in result.injected_contexts
    assert "similar_experiences" in result.dropped_contexts
    assert result.compacted and result.compaction_steps
    assert result.token_usage.messages_after < result.token_usage.messages_before
    assert result.messages[-1] == {"role": "user", "content": "so what now?"}
    assert validate_messages(result.messages) == []
    assert result.compaction_steps[:1] == ["early_turns"]
    assert result.messages[2]["content"].startswith("[Summary of the earlier conversation]")
    assert len(result.messages) == 2 + 2 + 19  # context pair, summary pair, the last 10 turns
    usage = result.token_usage
    assert usage.within_budget is (usage.messages_after + usage.context <= usage.available)


def test_a_history_whose_kept_turns_alone_pass_the_budget_is_reported_over_it():
    who = user("kept-over")
    result = inject_context(build().inject, who, request(
        user_id=who.user_id, messages=long_history(30, 6000), current_user_message="so what now?",
        max_context_tokens=16_000))
    usage = result.token_usage
    assert result.compacted
    assert usage.messages_after + usage.context > usage.available
    assert usage.within_budget is False


def test_a_request_inside_its_budget_says_so():
    who = user("fits")
    usage = inject_context(build().inject, who, request(user_id=who.user_id, current_user_message="hi")).token_usage
    assert usage.within_budget is True and usage.messages_after + usage.context <= usage.available


@pytest.mark.parametrize(("window", "output", "system", "available"), [
    (4_000, 400, 1_000, 2_600),
    (8_000, 800, 2_000, 5_200),
    (16_000, 1_600, 4_000, 10_400),
    (32_000, 3_200, 8_000, 20_800),
    (40_960, 4_096, 10_000, 26_864),
    (200_000, 4_096, 10_000, 185_904),
])
def test_the_reserves_are_a_share_of_the_window_up_to_their_caps(window, output, system, available):
    reserves = ReserveRule().reserves(window)
    assert (reserves.output, reserves.system, reserves.available) == (output, system, available)


def test_a_callers_own_reserves_replace_the_rules():
    reserves = ReserveRule().reserves(8_000, output=1_024, system=500)
    assert (reserves.output, reserves.system, reserves.available) == (1_024, 500, 6_476)
    assert ReserveRule().reserves(8_000, output=1_024).system == 2_000


@pytest.mark.parametrize(("window", "available"), [(4_000, 2_600), (8_000, 5_200), (180_000, 165_904)])
def test_an_inject_answers_its_window_less_the_reserves_and_says_what_they_were(window, available):
    who = user(f"window-{window}")
    usage = inject_context(build().inject, who, request(
        user_id=who.user_id, current_user_message="hi", consulting_state=big_state(),
        max_context_tokens=window)).token_usage
    assert usage.available == available == window - usage.reserved_output - usage.reserved_system
    assert usage.within_budget


def test_the_reserve_settings_change_the_rule():
    who = user("settings")
    services = build(context_reserved_output_share=0.2, context_reserved_output_tokens=1_000,
                     context_reserved_system_share=0.0)
    usage = inject_context(services.inject, who, request(user_id=who.user_id, current_user_message="hi",
                                                          max_context_tokens=8_000)).token_usage
    assert (usage.reserved_output, usage.reserved_system, usage.available) == (1_000, 0, 7_000)


def test_own_reserves_that_take_the_whole_window_are_a_422_naming_the_field():
    with pytest.raises(InvalidInput) as raised:
        inject_context(build().inject, user("small"), request(
            current_user_message="hi", max_context_tokens=5000, reserved_output_tokens=4096,
            reserved_system_tokens=1000))
    assert raised.value.details[0]["field"] == "max_context_tokens"
    assert "4096 + 1000" in raised.value.details[0]["message"]


def test_budget_a_small_p2_block_goes_in_after_a_large_p1_block_did_not_fit():
    who = user("fit-each")
    services = build(context_reserved_output_tokens=0, context_reserved_system_tokens=0,
                     context_compaction_threshold=1.0)
    experiences = [{"content": "be brief"}]  # a small P2 block
    agents = [{"agentName": "Policy Expert", "invokedAt": int(NOW * 1000), "inputSummary": "x " * 400,
               "outputSummary": "y " * 400}]  # a large P1 block
    base = with_blocks(services, who, experiences, agents, 100_000)
    tokens = {b.type: b.tokens for b in base.blocks}
    budget = base.token_usage.context - tokens["active_agents_history"] + base.token_usage.messages_before + 5
    result = with_blocks(services, who, experiences, agents, max(budget, 1000))
    assert "active_agents_history" in result.dropped_contexts
    assert "similar_experiences" in result.injected_contexts


def test_over_the_compaction_threshold_with_nothing_to_compact_is_not_reported_as_compacted():
    who = user("nothing-to-compact")
    services = build(context_reserved_output_tokens=0, context_reserved_system_tokens=0,
                     context_compaction_threshold=0.01)
    result = inject_context(services.inject, who, request(user_id=who.user_id, current_user_message="hello there",
                                                 max_context_tokens=100_000))
    assert result.compaction_steps == [] and result.compacted is False
