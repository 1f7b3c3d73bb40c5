"""The pure parts of context injection: budget fitting, placement, the current message, request blocks."""

from __future__ import annotations

from agent_memory.domain.inject.caller_state import ConsultingState, DeviceInfo
from agent_memory.domain.inject.context import ContextBlock, Priority, tagged_block
from agent_memory.domain.inject.context_budget import context_tokens, fit, shed
from agent_memory.domain.inject.context_placement import MAX_CACHE_BREAKPOINTS, place
from agent_memory.domain.inject.current_message import user_texts, with_current_message
from agent_memory.domain.inject.request_blocks import assessment_text, collected_info_text, device_text
from agent_memory.domain.packs import pack_named
from agent_memory.domain.packs.immigration import IMMIGRATION

NOW = 1_795_309_200.0  # 2026-11-22T01:00:00Z, a Sunday


def block(type_: str, priority: Priority, words: int, ttl: float = 0.0) -> ContextBlock:
    return tagged_block(type_, priority, ttl, NOW, " ".join(["word"] * words))


def test_fit_keeps_p0_over_budget_and_a_small_block_after_a_large_one_did_not_fit():
    p0, large, small = block("p0", Priority.CRITICAL, 50), block("p1", Priority.IMPORTANT, 400), block(
        "p2", Priority.NICE_TO_HAVE, 5)
    injected, dropped = fit([p0, large, small], budget=p0.estimated_tokens + small.estimated_tokens)
    assert [b.type for b in injected] == ["p0", "p2"] and [b.type for b in dropped] == ["p1"]
    assert fit([p0], budget=0) == ([p0], [])


def test_shed_drops_p2_then_p1_later_first_and_never_p0():
    blocks = [block("p0", Priority.CRITICAL, 50), block("p1a", Priority.IMPORTANT, 50),
              block("p1b", Priority.IMPORTANT, 50), block("p2", Priority.NICE_TO_HAVE, 50)]
    frame = 10
    kept, dropped = shed(blocks, context_tokens(blocks[:2], frame), frame)
    assert [b.type for b in kept] == ["p0", "p1a"] and [b.type for b in dropped] == ["p2", "p1b"]
    kept, dropped = shed(blocks, 0, frame)
    assert [b.type for b in kept] == ["p0"] and len(dropped) == 3
    assert shed(blocks, 10_000, frame) == (blocks, [])


def test_the_pair_placement_leads_with_the_context_and_the_system_placement_adds_one_breakpoint():
    blocks = [block("live", Priority.IMPORTANT, 5), block("stable", Priority.CRITICAL, 5, ttl=60)]
    history = [{"role": "user", "content": "hi"}]
    messages, system = place("pair", None, history, blocks, "en")
    assert [m["role"] for m in messages] == ["user", "assistant", "user"] and system is None
    assert messages[-1] is history[-1]
    messages, system = place("system", "Be kind.", history, blocks, "en")
    assert messages == history and system is not None
    assert [("cache_control" in b, "<stable>" in b["text"], "<live>" in b["text"]) for b in system] == [
        (False, False, False), (True, True, False), (False, False, True)]
    full = [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}] * MAX_CACHE_BREAKPOINTS
    _, system = place("system", full, history, blocks, "en")
    assert system is not None and sum("cache_control" in b for b in system) == MAX_CACHE_BREAKPOINTS


def test_the_current_message_is_appended_joined_to_tool_results_or_left_when_already_there():
    asked = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"}]
    assert with_current_message(asked, "next")[-1] == {"role": "user", "content": "next"}
    tool_turn = [{"role": "user", "content": "q"},
                 {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}]
    joined = with_current_message(tool_turn, "more")
    assert joined[-1]["content"][-1] == {"type": "text", "text": "more"} and len(joined) == 3
    assert with_current_message(tool_turn, " q ") is tool_turn  # the turn's own message, re-sent
    assert user_texts(joined) == ["q", "more"]


def test_request_blocks_are_empty_without_their_part_of_the_request():
    assert collected_info_text(None, IMMIGRATION.assessment, "en") == ""
    assert collected_info_text(ConsultingState(collected_info={"age": 35}), IMMIGRATION.assessment,
                               "en").splitlines()[1] == "- Age: 35"
    device = DeviceInfo(device_type="mobile", timezone="Asia/Shanghai")
    assert "2026-11-22 周日 上午9:00" in device_text(device, now=NOW, turn_number=1, every_turns=5, locale="zh")
    assert device_text(device, now=NOW, turn_number=2, every_turns=5, locale="zh") == ""


def test_a_general_tenants_consulting_state_is_worded_by_its_pack_not_the_immigration_consultation():
    general = pack_named("general").assessment
    state = ConsultingState.model_validate({
        "collectedInfo": {"preferredName": "Lena", "pets": ["cat"], "favouriteBand": "Muse"},
        "assessmentResult": {"recommendedPrograms": ["Couch to 5K"], "suitabilityScore": 80}})

    collected = collected_info_text(state, general, "en")
    assessment = assessment_text(state, general, "zh")

    assert "- name: Lena" in collected and "- pets: cat" in collected and "- favouriteBand: Muse" in collected
    assert collected.endswith("Not collected yet: age, location, job, marital status, children, reply language, "
                              "goals")
    assert "Hong Kong" not in collected and "Annual income" not in collected
    assert assessment.startswith("初步评估结果:") and "¥99" not in assessment and "移民" not in assessment
    assert "用户移民资格初步评估结果:" in assessment_text(state, IMMIGRATION.assessment, "zh")
    assert "¥99" in assessment_text(state, IMMIGRATION.assessment, "zh")
