"""Auto-compaction: the three steps, their driver, and a property test over random histories."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.domain.inject.compaction import (
    STEP_EARLY_TURNS,
    STEP_TOOL_RESULTS,
    STEP_TRUNCATE,
    auto_compact,
    compact_tool_results,
    early_turns_span,
    summarize_early_turns,
    truncate_long_messages,
)
from agent_memory.domain.inject.conversation import Message, turn_starts, validate_messages
from agent_memory.domain.inject.summary import (
    SUMMARY_ACK_EN,
    SUMMARY_ACK_ZH,
    SUMMARY_FOOTER_EN,
    SUMMARY_HEADER_EN,
    SUMMARY_HEADER_ZH,
    extractive_summary,
)
from tests.fakes.conversations import (
    assistant,
    chat,
    conversations_with_prefix,
    count_tokens,
    tool_call,
    tool_results,
    user,
)

# --------------------------------------------------------------------------------------------- #
# Step 1: compact_tool_results
# --------------------------------------------------------------------------------------------- #


def test_given_a_tool_result_over_500_chars_when_compacting_then_it_keeps_a_200_char_preview_and_its_ids():
    long_report = "Salary band report for Hong Kong fintech roles. " * 20
    messages = [
        user("What do fintech engineers earn?"),
        tool_call("toolu_c1"),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_c1", "content": long_report,
                                      "is_error": True, "cache_control": {"type": "ephemeral"}}]},
        assistant("Roughly 600k to 900k HKD."),
        user("And in Shenzhen?"),
    ]
    out = compact_tool_results(messages)
    block = out[2]["content"][0]
    assert block["content"] == (
        f"[compacted] {long_report[:200]}... (original length: {len(long_report)} chars)"
    )
    assert block["tool_use_id"] == "toolu_c1" and block["is_error"] is True
    assert block["cache_control"] == {"type": "ephemeral"}
    assert validate_messages(out) == []
    assert messages[2]["content"][0]["content"] == long_report  # input not mutated


@pytest.mark.parametrize("length", [120, 500])
def test_given_a_tool_result_of_at_most_500_chars_when_compacting_then_it_is_untouched(length):
    messages = [user("Look up permit ZX-41"), tool_call("toolu_c2"), tool_results(("toolu_c2", "p" * length)),
                assistant("found it"), user("great")]
    assert compact_tool_results(messages) == messages


def test_given_list_content_when_compacting_then_its_json_is_measured_and_its_text_previewed():
    content = [{"type": "text", "text": "Row 1: 合同编号 HK-2291"}, {"type": "image",
               "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR" * 200}}]
    messages = [user("Read the scanned contract"), tool_call("toolu_c3"), tool_results(("toolu_c3", content)),
                assistant("It is contract HK-2291."), user("When does it expire?")]
    out = compact_tool_results(messages)
    compacted = out[2]["content"][0]["content"]
    n = len(json.dumps(content, ensure_ascii=False))
    assert compacted == f"[compacted] Row 1: 合同编号 HK-2291\n[image]... (original length: {n} chars)"


def test_given_a_chinese_conversation_when_compacting_then_the_marker_is_chinese():
    listing = "九龙塘两房单位，月租三万二千港元，近地铁站。" * 30
    messages = [user("帮我查一下九龙塘的租金"), tool_call("toolu_c4"), tool_results(("toolu_c4", listing)),
                assistant("九龙塘两房大约三万多。"), user("那沙田呢？")]
    out = compact_tool_results(messages)
    assert out[2]["content"][0]["content"] == f"[已压缩] {listing[:200]}... (原始长度: {len(listing)}字符)"


def test_given_a_huge_tool_result_in_the_last_message_or_the_prefix_when_compacting_then_they_are_untouched():
    big = "ledger line 0042; " * 100
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "[context] facts about the user"}]},
        tool_call("toolu_p1"),
        tool_results(("toolu_p1", big)),  # inside the protected prefix
        tool_call("toolu_p2"),
        tool_results(("toolu_p2", big)),  # the current (last) message
    ]
    out = compact_tool_results(messages, protected_prefix=3)
    assert out == messages


# --------------------------------------------------------------------------------------------- #
# Step 2: summarize_early_turns
# --------------------------------------------------------------------------------------------- #


def test_given_14_turns_when_summarizing_then_the_last_10_turns_are_kept_verbatim():
    messages = chat(13, prefix="visa")  # 13 finished turns + the current one = 14 turns
    seen: list[list[Message]] = []

    def summarize(early: list[Message]) -> str:
        seen.append(early)
        return "User asked about four visa cases."

    out = summarize_early_turns(messages, summarize)
    assert seen == [messages[:8]]  # the first 4 turns
    assert out[:2] == [
        user(f"{SUMMARY_HEADER_EN}\nUser asked about four visa cases.\n{SUMMARY_FOOTER_EN}"),
        assistant(SUMMARY_ACK_EN),
    ]
    assert out[2:] == messages[8:]
    assert len(turn_starts(out)) == 11  # the summary turn + 10 kept turns
    assert validate_messages(out) == []


def test_given_at_most_10_turns_when_summarizing_then_nothing_changes_and_summarize_is_not_called():
    messages = chat(9)

    def summarize(early: list[Message]) -> str:
        raise AssertionError("must not be called")

    assert summarize_early_turns(messages, summarize) == messages


def test_given_tool_rounds_when_summarizing_then_the_cut_never_splits_a_tool_use_from_its_result():
    messages = [
        user("Book me a consultation"),
        tool_call("toolu_s1"), tool_results(("toolu_s1", "slot 10:00")),
        tool_call("toolu_s2", "toolu_s3"), tool_results(("toolu_s2", "ok"), ("toolu_s3", "ok")),
        assistant("Booked for 10:00."),
        user("Move it to Friday"),
        tool_call("toolu_s4"), tool_results(("toolu_s4", "moved")),
        assistant("Moved to Friday."),
        user("Thanks, what should I bring?"),
        tool_call("toolu_s5"), tool_results(("toolu_s5", "passport, degree")),
    ]
    out = summarize_early_turns(messages, lambda early: "booked and moved", keep_turns=1)
    assert out[2:] == messages[10:]
    assert validate_messages(out) == []
    out2 = summarize_early_turns(messages, lambda early: "booked", keep_turns=2)
    assert out2[2:] == messages[6:]
    assert validate_messages(out2) == []


def test_given_a_protected_context_pair_when_summarizing_then_it_is_kept_and_not_summarized():
    prefix = [user("[Known about the user] lives in Tai Po; works at HSBC"), assistant("Noted.")]
    messages = prefix + chat(5, prefix="tax")
    seen: list[list[Message]] = []
    out = summarize_early_turns(messages, lambda early: seen.append(early) or "s", keep_turns=2, protected_prefix=2)
    assert out[:2] == prefix
    assert seen[0][0] == messages[2]  # summarization starts right after the prefix
    assert out[2:4] == [user(f"{SUMMARY_HEADER_EN}\ns\n[End of summary; the recent conversation follows]"),
                        assistant(SUMMARY_ACK_EN)]
    assert out[4:] == messages[-3:]  # the last 2 turns
    assert validate_messages(out) == []


def test_given_an_odd_protected_prefix_when_summarizing_then_the_span_starts_at_the_next_turn():
    messages = chat(6, prefix="odd")
    assert early_turns_span(messages, keep_turns=2, protected_prefix=3) == range(4, 10)
    out = summarize_early_turns(messages, lambda early: "s", keep_turns=2, protected_prefix=3)
    assert out[:4] == messages[:4]
    assert validate_messages(out) == []


def test_given_a_chinese_conversation_when_summarizing_then_the_summary_pair_is_chinese():
    messages: list[Message] = []
    for n in range(12):
        messages += [user(f"我第{n}次问：优才计划的打分标准是什么？"), assistant(f"第{n}个回答。")]
    messages.append(user("那我现在可以申请吗？"))
    out = summarize_early_turns(messages, lambda early: "用户反复询问优才打分。")
    assert out[0] == user(f"{SUMMARY_HEADER_ZH}\n用户反复询问优才打分。\n[摘要结束，以下是最近的对话]")
    assert out[1] == assistant(SUMMARY_ACK_ZH)


def test_given_keep_turns_below_one_when_summarizing_then_it_is_rejected():
    with pytest.raises(ValueError, match="keep_turns"):
        summarize_early_turns(chat(3), extractive_summary, keep_turns=0)


# --------------------------------------------------------------------------------------------- #
# Step 3: truncate_long_messages
# --------------------------------------------------------------------------------------------- #


def test_given_long_texts_when_truncating_then_each_is_cut_to_2000_chars_with_a_marker():
    essay = "The applicant founded two startups in Cyberport. " * 80
    messages = [
        user(essay),
        {"role": "assistant", "content": [{"type": "thinking", "thinking": essay, "signature": "s1"},
                                          {"type": "text", "text": essay},
                                          {"type": "tool_use", "id": "toolu_r1", "name": "n", "input": {"e": essay}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_r1", "content": essay},
        ]},
        tool_call("toolu_r2"),
        tool_results(("toolu_r2", [{"type": "text", "text": essay}])),
        assistant("short"),
        user(essay),  # the current message stays as it is
    ]
    out = truncate_long_messages(messages)
    marker = f"…[truncated, original length {len(essay)} chars]"
    expected = essay[: 2000 - len(marker)] + marker
    assert out[0]["content"] == expected and len(expected) == 2000
    assert out[1]["content"][0] == messages[1]["content"][0]  # thinking untouched
    assert out[1]["content"][1]["text"] == expected
    assert out[1]["content"][2] == messages[1]["content"][2]  # tool_use input untouched
    assert out[2]["content"][0]["content"] == expected
    assert out[4]["content"][0]["content"][0]["text"] == expected
    assert out[-1] == messages[-1]
    assert truncate_long_messages(out) == out  # idempotent
    assert validate_messages(out) == []


def test_given_a_chinese_conversation_when_truncating_then_the_marker_is_chinese():
    story = "我在深圳做了八年产品经理，负责跨境支付。" * 120
    out = truncate_long_messages([user(story), assistant("明白。"), user("继续")])
    assert out[0]["content"].endswith(f"…[截断，原始长度 {len(story)} 字符]")
    assert len(out[0]["content"]) == 2000


def test_given_a_protected_prefix_when_truncating_then_the_prefix_is_untouched():
    long_context = "Profile: " + "x" * 3000
    messages = [user(long_context), assistant("ok"), user("y" * 2500), assistant("z"), user("now?")]
    out = truncate_long_messages(messages, protected_prefix=2)
    assert out[:2] == messages[:2]
    assert len(out[2]["content"]) == 2000


# --------------------------------------------------------------------------------------------- #
# auto_compact
# --------------------------------------------------------------------------------------------- #


def test_given_history_under_the_threshold_when_auto_compacting_then_nothing_changes():
    messages = chat(12, prefix="calm")
    tokens = count_tokens(messages)
    result = auto_compact(messages, budget_tokens=tokens * 2, count_tokens=count_tokens)
    assert result.messages == messages and result.messages is not messages
    assert result.steps == ()
    assert result.tokens_before == result.tokens_after == tokens


def _heavy_conversation() -> list[Message]:
    messages: list[Message] = []
    for n in range(12):
        messages += [user(f"Question {n} about the IANG renewal for my case {n}?"), tool_call(f"toolu_h{n}"),
                     tool_results((f"toolu_h{n}", f"policy text {n} " * 150)), assistant(f"Reply {n}: " + "r" * 2500)]
    return [*messages, user("So can I renew in March?")]


def test_given_tool_results_are_enough_when_auto_compacting_then_it_stops_after_the_first_step():
    messages = _heavy_conversation()
    compacted = compact_tool_results(messages)
    budget = int(count_tokens(compacted) / 0.8) + 1

    def summarize(early: list[Message]) -> str:
        raise AssertionError("must not be called")

    result = auto_compact(messages, budget_tokens=budget, count_tokens=count_tokens, summarize=summarize)
    assert result.steps == (STEP_TOOL_RESULTS,)
    assert result.messages == compacted
    assert result.tokens_after == count_tokens(compacted) <= 0.8 * budget < result.tokens_before


def test_given_a_tight_budget_when_auto_compacting_then_all_steps_run_in_order():
    messages = _heavy_conversation()
    calls: list[int] = []
    result = auto_compact(messages, budget_tokens=10, count_tokens=count_tokens,
                          summarize=lambda early: calls.append(len(early)) or "renewal questions", keep_turns=10)
    assert result.steps == (STEP_TOOL_RESULTS, STEP_EARLY_TURNS, STEP_TRUNCATE)
    assert calls == [12]  # 13 turns, 10 kept: the first three (4 messages each) are summarized
    assert result.tokens_after == count_tokens(result.messages) < result.tokens_before
    assert result.messages[-1] == messages[-1]
    assert validate_messages(result.messages) == []
    assert all(len(m["content"]) <= 2000 for m in result.messages if isinstance(m["content"], str))


def test_given_a_summary_longer_than_the_turns_when_auto_compacting_then_that_step_is_skipped():
    messages = [user("a" * 10), assistant("b" * 10), user("c" * 5000), assistant("d"), user("current")]
    result = auto_compact(messages, budget_tokens=10, count_tokens=count_tokens,
                          summarize=lambda early: "an overly long summary " * 20, keep_turns=2)
    assert result.steps == (STEP_TRUNCATE,)
    assert result.messages[:2] == messages[:2]


def test_given_a_protected_prefix_when_auto_compacting_then_the_prefix_and_current_message_are_untouched():
    prefix = [user("[Known about the user] " + "k" * 3000), assistant("Noted.")]
    messages = prefix + _heavy_conversation()
    snapshot = copy.deepcopy(messages)
    result = auto_compact(messages, budget_tokens=50, count_tokens=count_tokens, protected_prefix=2, keep_turns=3)
    assert result.messages[:2] == prefix
    assert result.messages[-1] == messages[-1]
    assert messages == snapshot
    assert validate_messages(result.messages) == []


# --------------------------------------------------------------------------------------------- #
# Property: the output is always a valid Messages array
# --------------------------------------------------------------------------------------------- #


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversation=conversations_with_prefix(), fraction=st.floats(0.02, 1.5),
       keep_turns=st.sampled_from([1, 2, 3, 10]))
def test_property_auto_compact_always_returns_a_valid_array_and_never_touches_the_ends(
    conversation: tuple[list[Message], int], fraction: float, keep_turns: int
):
    messages, prefix = conversation
    assert validate_messages(messages) == []
    snapshot = copy.deepcopy(messages)
    budget = max(1, int(count_tokens(messages) * fraction))

    result = auto_compact(messages, budget_tokens=budget, count_tokens=count_tokens,
                          keep_turns=keep_turns, protected_prefix=prefix)

    assert validate_messages(result.messages) == []
    assert result.messages[-1] == messages[-1]
    assert result.messages[:prefix] == messages[:prefix]
    assert result.tokens_after <= result.tokens_before
    assert result.tokens_after == count_tokens(result.messages)
    assert list(result.steps) == [s for s in (STEP_TOOL_RESULTS, STEP_EARLY_TURNS, STEP_TRUNCATE)
                                  if s in result.steps]
    assert messages == snapshot
    if result.tokens_before <= 0.8 * budget:
        assert result.steps == () and result.messages == messages
