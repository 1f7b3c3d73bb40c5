"""The inject benchmark's pure helpers: token arithmetic, hit rates, sampling, transcripts, matching."""

from __future__ import annotations

import pytest

from benchmarks.inject import (
    TARGETS,
    agent_loop_messages,
    block_section,
    completed_turn,
    evidence_found,
    format_latency_table,
    format_token_table,
    hit_rate,
    hit_rate_bound,
    latency_row,
    percentile,
    sample_evenly,
    token_figures,
    transcript_messages,
    unique_texts,
    verdict,
)


def test_token_figures_ratio_and_window_share() -> None:
    figures = token_figures(20_000, 500, window=200_000)
    assert figures == {"full_history_tokens": 20_000, "injected_tokens": 500, "injected_over_full": 0.025,
                       "share_of_window": 0.0025, "full_history_share_of_window": 0.1}


def test_token_figures_empty_history_has_no_ratio() -> None:
    assert token_figures(0, 120)["injected_over_full"] is None
    with pytest.raises(ValueError):
        token_figures(-1, 10)
    with pytest.raises(ValueError):
        token_figures(10, 10, window=0)


def test_hit_rate_and_its_bound() -> None:
    assert hit_rate(2, 3) == 0.6667
    assert hit_rate(0, 0) is None
    with pytest.raises(ValueError):
        hit_rate(4, 3)
    assert hit_rate_bound(3) == 0.6667
    assert hit_rate_bound(1) == 0.0
    assert hit_rate_bound(4) == 0.75
    with pytest.raises(ValueError):
        hit_rate_bound(0)


def test_percentile_and_latency_row() -> None:
    samples = [float(i) for i in range(1, 101)]
    assert percentile(samples, 0.5) == 51.0  # nearest rank, as benchmarks/run.py
    assert percentile(samples, 0.95) == 95.0
    assert latency_row([3.0, 1.0, 2.0]) == {"runs": 3, "p50_ms": 2.0, "p95_ms": 3.0, "max_ms": 3.0}
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_unique_texts_cycles_and_disambiguates() -> None:
    assert unique_texts(["a", "b"], 5) == ["a", "b", "a (#1)", "b (#1)", "a (#2)"]
    assert unique_texts(["a", "a", "b"], 3, start=1) == ["a", "b", "a (#1)"]
    with pytest.raises(ValueError):
        unique_texts([], 1)


def test_sample_evenly() -> None:
    assert sample_evenly(list(range(10)), 3) == [0, 3, 6]
    assert sample_evenly([1, 2], 5) == [1, 2]
    assert sample_evenly([1, 2], 0) == []


def test_transcript_messages_alternate_and_merge() -> None:
    lines = [("Ann", "hi"), ("Ann", "you there?"), ("Bob", "yes"), ("Ann", " "), ("Ann", "good")]
    assert transcript_messages(lines) == [
        {"role": "user", "content": "hi\nyou there?"},
        {"role": "assistant", "content": "yes"},
        {"role": "user", "content": "good"},
    ]
    assert transcript_messages([]) == []


def test_block_section_and_evidence_matching() -> None:
    context = ("=== header ===\n\n<user_memory>\nWhat we know:\n- [fact] Ann: I paint (importance: 5)\n"
               "- [fact] Bob: I paint lakes (importance: 5)\n</user_memory>\n\n<device_context>\nx\n</device_context>")
    block = block_section(context, "user_memory")
    assert "Ann: I paint" in block and "device_context" not in block
    assert block_section(context, "relevant_knowledge") == ""
    assert evidence_found(block, ["Ann: I paint"]) == (True, True)
    assert evidence_found(block, ["Ann: I paint", "Ann: I sing"]) == (True, False)
    # A memory is matched as a whole line's content, not as a prefix of another memory.
    assert evidence_found(block, ["Bob: I paint"]) == (False, False)
    assert evidence_found(block, ["ANN: I PAINT"], normalize=str.title) == (False, False)
    with pytest.raises(ValueError):
        evidence_found(block, [])


def test_agent_loop_messages_end_with_the_turns_tool_results() -> None:
    done = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "ok"}]
    assert agent_loop_messages(done, 0, "hello", 0) == done
    second = agent_loop_messages(done, 0, "hello", 2)
    assert second[2] == {"role": "user", "content": "hello"}
    assert [m["role"] for m in second[2:]] == ["user", "assistant", "user", "assistant", "user"]
    assert second[-1]["content"][0]["type"] == "tool_result"
    after = completed_turn(done, 0, "hello", 3)
    assert after[:len(second)] == second and after[-1]["role"] == "assistant"
    assert [m["role"] for m in completed_turn(done, 1, "next", 1)[2:]] == ["user", "assistant"]


def test_verdict_and_tables() -> None:
    assert verdict(8.0, TARGETS["hit"]) == "yes"
    assert verdict(12.0, TARGETS["hit"]) == "NO"
    assert verdict(0.667, TARGETS["hit_rate"]) == "NO"
    assert verdict(0.002, TARGETS["context_share"]) == "NO"
    assert verdict(None, TARGETS["hit"]) == "-"
    latency = format_latency_table({"hit": {"runs": 3, "p50_ms": 1.0, "p95_ms": 2.0, "max_ms": 3.0},
                                    "agent loop (1 turns x 3 calls)": {"runs": 3, "p50_ms": 1.0, "p95_ms": 2.0,
                                                                       "max_ms": 3.0}})
    assert "| hit | 3 | 1.0 | 2.0 | 3.0 | 10.0 | yes |" in latency
    assert "| agent loop (1 turns x 3 calls) | 3 | 1.0 | 2.0 | 3.0 | - | - |" in latency
    row = {"memories": 10, "questions": 2, **token_figures(1000, 100), "evidence_any": 0.5, "evidence_all": 0.25,
           "p50_ms": 12.34}
    assert "| c1 | 10 | 2 | 1000 | 100 | 10.0% | 0.05% | 50.0% | 25.0% | 12.3 |" in format_token_table({"c1": row})
