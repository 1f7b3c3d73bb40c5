"""Property: any valid history, under any budget and placement, comes out of inject a valid Messages array."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.api.inject import inject_context
from agent_memory.domain.inject.conversation import validate_messages
from tests.fakes.conversations import conversations_with_prefix
from tests.fakes.inject import big_state, build, request, user

_PROPERTY_SERVICES = build()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversation=conversations_with_prefix(), current=st.sampled_from(["", "next question?", "下一个问题是什么？"]),
       max_tokens=st.integers(14_500, 40_000), placement=st.sampled_from(["pair", "system"]))
def test_property_any_history_under_any_budget_comes_out_a_valid_messages_array(
        conversation, current, max_tokens, placement):
    messages, _ = conversation
    if not current and messages[-1]["role"] != "user":
        current = "and then?"
    result = inject_context(_PROPERTY_SERVICES.inject, user("property"), request(
        user_id="property", messages=messages, current_user_message=current, max_context_tokens=max_tokens,
        placement=placement, consulting_state=big_state(), similar_experiences=[{"content": "be brief " * 40}]))

    assert validate_messages(result.messages) == []
    last = result.messages[-1]
    if current and messages[-1]["role"] == "assistant":
        assert last == {"role": "user", "content": current}
    elif not current:
        assert last == messages[-1]
    assert "collected_info" in result.injected_contexts  # P0 is never dropped
    assert not ({"similar_experiences"} & set(result.injected_contexts)) or not (
        {"conversation_stats"} & set(result.dropped_contexts))  # never P2 in while P1 is out
