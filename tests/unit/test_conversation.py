"""Messages arrays: validity and turns."""

from __future__ import annotations

import pytest

from agent_memory.domain.inject.conversation import is_valid, turn_starts, validate_messages
from tests.fakes.conversations import assistant, tool_call, tool_results, user

# --------------------------------------------------------------------------------------------- #
# validate_messages
# --------------------------------------------------------------------------------------------- #


def test_given_a_conversation_with_a_tool_round_trip_when_validated_then_it_has_no_problems():
    messages = [
        user("Which visa fits a data engineer?"),
        tool_call("toolu_a1", "toolu_a2", text="Let me check two schemes."),
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a1", "content": "TTPS: top universities"},
            {"type": "tool_result", "tool_use_id": "toolu_a2", "content": [{"type": "text", "text": "QMAS"}],
             "is_error": False},
            {"type": "text", "text": "(also consider my age, 34)"},
        ]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
                                          {"type": "text", "text": "TTPS looks best."}]},
        {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                                     {"type": "text", "text": "Here is my degree."}]},
    ]
    assert validate_messages(messages) == []
    assert is_valid(messages)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ("not a list", "messages: must be a list"),
        ([], "messages: must contain at least one message"),
        ([assistant("hi"), user("hello")], "messages[0]: the first message must have role 'user'"),
        ([user("a"), user("b")], "messages[1]: role 'user' repeats the previous message's role"),
        ([user("a"), {"role": "system", "content": "x"}], "messages[1]: role must be 'user' or 'assistant'"),
        ([user("a"), tool_call("toolu_9"), user("no result")],
         "messages[1]: tool_use toolu_9 has no tool_result in the next message"),
        ([user("a"), tool_call("toolu_8")], "messages[1]: tool_use toolu_8 has no tool_result in the next message"),
        ([user("a"), assistant("b"), tool_results(("toolu_7", "x"))],
         "messages[2]: tool_result toolu_7 does not match a tool_use in the previous message"),
        ([user("a"), tool_call("toolu_6"), tool_results(("toolu_6", "x")), assistant("b"),
          tool_results(("toolu_6", "again"))],
         "messages[4]: tool_result toolu_6 does not match a tool_use in the previous message"),
        ([user("a"), tool_call("toolu_5"), tool_results(("toolu_5", "x")), tool_call("toolu_5"),
          tool_results(("toolu_5", "y"))], "messages[3]: tool_use id toolu_5 is used more than once"),
        ([user("a"), tool_call("toolu_4"), tool_results(("toolu_4", "x"), ("toolu_4", "y"))],
         "messages[2]: tool_result toolu_4 appears more than once"),
        ([user("a"), tool_call("toolu_3"),
          {"role": "user", "content": [{"type": "text", "text": "first"},
                                       {"type": "tool_result", "tool_use_id": "toolu_3", "content": "x"}]}],
         "messages[2]: tool_result blocks must come before any other content"),
        ([{"role": "user", "content": [{"type": "tool_use", "id": "toolu_2", "name": "n", "input": {}}]}],
         "messages[0].content[0]: tool_use blocks may only appear in assistant messages"),
        ([user("a"), {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "input": {}}]},
          tool_results(("toolu_1", "x"))], "messages[1].content[0]: tool_use block needs a non-empty string 'name'"),
        ([user("   ")], "messages[0]: content must not be empty"),
        ([{"role": "user", "content": []}], "messages[0]: content must not be an empty list"),
        ([{"role": "user", "content": 42}], "messages[0]: content must be a string or a list"),
        ([{"role": "user", "content": [{"text": "no type"}]}], "messages[0].content[0]: a content block must be"),
        ([{"role": "user", "content": [{"type": "text", "text": ""}]}], "text block must contain non-whitespace"),
        ([{"role": "user", "content": [{"type": "image"}]}], "image block needs a 'source' object"),
        ([user("a"), tool_call("toolu_0"),
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "is_error": "yes"}]}],
         "messages[2].content[0]: tool_result 'is_error' must be a boolean"),
        (["just text"], "messages[0]: must be an object"),
    ],
)
def test_given_an_invalid_array_when_validated_then_the_problem_names_the_message(messages, expected):
    problems = validate_messages(messages)
    assert any(expected in p for p in problems), problems
    assert not is_valid(messages)


def test_given_a_final_empty_assistant_prefill_when_validated_then_it_is_allowed():
    assert validate_messages([user("Write a haiku about Kowloon"), assistant("")]) == []


# --------------------------------------------------------------------------------------------- #
# turn_starts
# --------------------------------------------------------------------------------------------- #


def test_given_tool_result_messages_when_finding_turn_starts_then_only_human_input_starts_a_turn():
    messages = [
        user("Compare GEP and IANG"),                                   # 0 turn
        tool_call("toolu_t1"),
        tool_results(("toolu_t1", "GEP needs an offer")),              # tool_result only: same turn
        tool_call("toolu_t2"),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_t2", "content": "IANG"},
                                     {"type": "text", "text": "also mind my timeline"}]},  # mixed: same turn
        assistant("IANG is for graduates."),
        {"role": "user", "content": [{"type": "text", "text": "thanks, and CIES?"}]},  # 6 turn
    ]
    assert turn_starts(messages) == [0, 6]
