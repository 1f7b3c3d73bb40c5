"""The HTTP retrieval benchmark's pure parts: what each save mode sends, metrics per user and pooled,
stability across passes, the injected-context summary, the tables."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from benchmarks.datasets import BenchMemory
from benchmarks.http_retrieval import (
    SavedItem,
    first_hit,
    format_quality,
    format_stability,
    injected_pair,
    memory_item,
    previous_in_session,
    stability,
    stored_contents,
    summarize,
    summarize_inject,
    user_id,
)

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def turn(source_id: str, content: str, session: str | None) -> BenchMemory:
    return BenchMemory(source_id=source_id, content=content, created_at=WHEN, conversation_id=session)


TURNS = [turn("D1:1", "A: hi", "c-s1"), turn("D1:2", "B: hello", "c-s1"), turn("D2:1", "A: back", "c-s2"),
         turn("D2:2", "B: welcome", "c-s2")]


def test_given_two_sessions_when_previous_turns_are_taken_then_each_session_starts_without_one() -> None:
    assert previous_in_session(TURNS) == [None, "A: hi", None, "A: back"]
    assert previous_in_session([turn("1", "an event", None), turn("2", "another", None)]) == [None, None]


def test_given_each_mode_when_a_turn_is_saved_then_it_sends_only_that_modes_fields() -> None:
    base = {"memoryType": "FACT", "content": "B: hello", "createdAt": "2023-05-08T13:56:00+00:00"}
    assert memory_item(TURNS[1], "plain", "A: hi") == base
    assert memory_item(TURNS[1], "context", "A: hi") == {**base, "context": "A: hi"}
    assert memory_item(TURNS[1], "conversation_context", "A: hi") == {**base, "context": "A: hi",
                                                                      "conversationId": "c-s1"}
    assert memory_item(TURNS[1], "conversation", "A: hi") == {**base, "conversationId": "c-s1"}
    assert "context" not in memory_item(TURNS[0], "context", None)  # a session's first turn
    with pytest.raises(ValueError):
        memory_item(TURNS[0], "log", None)


def test_user_ids_avoid_the_underscore_user_ids_do_not_allow() -> None:
    assert user_id("conversation_context", "conv-26") == "conversation-context-conv-26"


def test_first_hit_is_the_rank_of_the_first_answering_result() -> None:
    assert first_hit([{"D1:1"}, {"D1:2", "D2:2"}, {"D2:1"}], {"D2:2", "D2:1"}) == 2
    assert first_hit([{"D1:1"}], {"D9:9"}) is None


def metrics(hit1: float, mrr: float) -> dict[str, float]:
    return {"hit@1": hit1, "mrr@10": mrr}


def test_summaries_pool_questions_average_users_and_give_their_spread() -> None:
    summary = summarize({"a": [metrics(1, 1), metrics(0, 0.5), metrics(0, 0)], "b": [metrics(1, 1)], "c": []})
    assert summary["questions"] == 4
    assert summary["mean"] == {"hit@1": 0.5, "mrr@10": 0.625}  # over the 4 questions
    assert summary["conversation_mean"] == {"hit@1": 0.6667, "mrr@10": 0.75}  # (1/3 + 1) / 2, (0.5 + 1) / 2
    assert summary["min"] == {"hit@1": 0.3333, "mrr@10": 0.5} and summary["max"] == {"hit@1": 1.0, "mrr@10": 1.0}
    assert set(summary["per_conversation"]) == {"a", "b"}  # a user without questions has no figures
    assert summary["per_conversation"]["a"]["questions"] == 3
    assert summarize({"a": []}) == {}


def test_stability_counts_changed_sets_and_changed_orders_per_pair_of_passes() -> None:
    tops = {
        1: {"q1": ["a", "b", "c"], "q2": ["a", "b"], "q3": ["x", "y"]},
        2: {"q1": ["b", "a", "c"], "q2": ["a", "b"], "q3": ["x", "z"]},  # q1 reordered, q3 a new member
        3: {"q1": ["b", "a", "c"], "q2": ["a", "b"], "q3": ["x", "y"]},  # q3 back as in pass 1
    }
    found = stability(tops)
    assert found["1->2"] == {"questions": 3, "set_changed": 1, "order_changed": 2}
    assert found["2->3"] == {"questions": 3, "set_changed": 1, "order_changed": 1}
    assert found["1->3"] == {"questions": 3, "set_changed": 0, "order_changed": 1}
    assert found["any"] == {"questions": 3, "set_changed": 1, "order_changed": 2}


def test_stability_looks_at_the_top_k_only() -> None:
    tops = {1: {"q": ["a", "b", "c"]}, 2: {"q": ["a", "b", "d"]}}
    assert stability(tops, k=2)["1->2"]["set_changed"] == 0
    assert stability(tops, k=3)["1->2"]["set_changed"] == 1
    assert "1->3" not in stability(tops)  # two passes: one pair


def inject_record(hit: bool, tokens: int, chars: int, cached: bool = False) -> dict[str, Any]:
    return {"any": hit, "all": False, "injected_tokens": tokens, "injected_chars": chars,
            "history_tokens": 10_000, "history_chars": 40_000, "cached": cached}


def test_inject_summary_averages_the_per_question_ratios_in_both_units() -> None:
    summary = summarize_inject([inject_record(True, 500, 2_000, cached=True), inject_record(False, 300, 800)])
    assert summary["questions"] == 2 and summary["evidence_in_context"] == 0.5 and summary["full_evidence"] == 0
    assert summary["injected_tokens"] == 400 and summary["injected_over_history"] == 0.04
    assert summary["injected_over_history_chars"] == 0.035 and summary["user_memory_cached"] == 0.5
    assert summarize_inject([]) == {}


def test_the_injected_context_is_the_pair_before_the_history() -> None:
    answer = {"injected_contexts": ["user_memory"], "messages": [
        {"role": "user", "content": "<user_memory>\n- [FACT] A: hi (importance: 50)\n</user_memory>"},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
        {"role": "user", "content": "what did A say?"}]}
    assert injected_pair(answer) == "<user_memory>\n- [FACT] A: hi (importance: 50)\n</user_memory>\nNoted."
    assert injected_pair({"injected_contexts": [], "messages": [{"role": "user", "content": "q"}]}) == ""


def test_tables_show_the_mean_with_the_spread_over_users() -> None:
    row = {"questions": 2, "mean": {"hit@1": 0.5, "hit@3": 0.5, "hit@5": 1.0, "hit@10": 1.0, "mrr@10": 0.75},
           "min": {"hit@1": 0.0, "hit@3": 0.0, "hit@5": 1.0, "hit@10": 1.0, "mrr@10": 0.5},
           "max": {"hit@1": 1.0, "hit@3": 1.0, "hit@5": 1.0, "hit@10": 1.0, "mrr@10": 1.0}}
    table = format_quality("locomo", {"plain": {"fresh": row, "long_standing": row}})
    assert "| plain | fresh | 2 | 0.500 [0.00-1.00] |" in table and "| plain | long-standing |" in table
    counts = {"questions": 2, "set_changed": 1, "order_changed": 2}
    stable = format_stability("locomo", {"plain": {"stability": {"1->2": counts, "any": counts}}})
    assert "| plain | 2 | 1 / 1 | 2 / 2 |" in stable


def test_a_turn_stored_once_already_is_found_by_the_content_of_the_memory_kept() -> None:
    turns = {"D1:1": "A: I love jazz", "D1:2": "A: i love jazz!", "D1:3": "B: nice", "D1:4": "A: I love jazz"}
    items = [SavedItem("D1:1", "k1", "created"), SavedItem("D1:2", "k1", "merged"),
             SavedItem("D1:3", "k2", "created"), SavedItem("D1:4", "k1", "duplicate")]
    assert stored_contents(items, turns) == {"D1:1": "A: I love jazz", "D1:2": "A: I love jazz", "D1:3": "B: nice",
                                             "D1:4": "A: I love jazz"}
    # the answer of a single save carries the kept memory's content; a key seen only as kept before: the turn's own
    answered = [SavedItem("D1:2", "k9", "merged", content="A: I love jazz"), SavedItem("D1:3", "k8", "duplicate")]
    assert stored_contents(answered, turns) == {"D1:2": "A: I love jazz", "D1:3": "B: nice"}
