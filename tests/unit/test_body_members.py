"""A body's top-level members read one at a time: the same result and errors as json.loads, and a named
member's check runs before any later member is read."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.api.body_members import read_checking_members


class Refused(Exception):
    pass


def refuse_bob(value: object) -> None:
    if value == "bob":
        raise Refused


def read(text: str, checks: dict | None = None) -> object:
    return read_checking_members(text, json.JSONDecoder(), checks or {})


def outcome(reader, text: str) -> tuple[str, object]:
    try:
        return "value", reader(text)
    except json.JSONDecodeError as error:
        return "error", (error.msg, error.pos)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@given(json_values, st.sampled_from(["", " ", "\n\t "]))
def test_given_any_json_document_then_it_reads_as_json_loads_reads_it(value, padding):
    text = padding + json.dumps(value, separators=(", ", ": ")) + padding
    assert read(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1,}',
        '{"a" 1}',
        '{"a": 1 "b": 2}',
        "{a: 1}",
        '{"a": }',
        '{"a": 1} x',
        '{"a": 1',
        "{",
        '{"a',
        "",
        "[1, 2",
        '{"a": "\x01"}',
        '{"a": [1, 2}',
    ],
)
def test_given_malformed_json_then_the_error_is_json_loads_error(text):
    assert outcome(read, text) == outcome(json.loads, text)


def test_given_a_refused_member_then_nothing_after_it_is_read():
    # The tail is not JSON: reading it would raise JSONDecodeError, not the check's refusal.
    text = '{"user_id": "bob", "messages": [' + "not json " * 1000

    with pytest.raises(Refused):
        read(text, {"user_id": refuse_bob})


def test_given_a_repeated_name_then_each_value_is_checked_and_the_last_is_kept():
    seen: list[object] = []

    members = read('{"user_id": "alice", "n": 1, "user_id": "carol"}', {"user_id": seen.append})

    assert seen == ["alice", "carol"] and members == {"user_id": "carol", "n": 1}
    with pytest.raises(Refused):
        read('{"user_id": "alice", "user_id": "bob"}', {"user_id": refuse_bob})


def test_given_a_nested_member_of_the_name_then_it_is_not_checked():
    members = read('{"messages": [{"user_id": "bob"}], "user_id": "alice"}', {"user_id": refuse_bob})

    assert members == {"messages": [{"user_id": "bob"}], "user_id": "alice"}
