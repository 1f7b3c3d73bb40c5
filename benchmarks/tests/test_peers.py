"""`make bench-peers`'s pure parts: duplicate turns, what the mem0 worker is sent and answers, the ratio
table. No mem0 needed: the worker's module imports mem0 only when it runs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmarks.datasets import BenchDataset, BenchMemory, BenchQuery, BenchUser
from benchmarks.peers import REFERENCE, format_table, ratios, score_peer, side_summary, worker_payload
from benchmarks.peers_mem0 import group_by_content, memory_config, offline_environment, ranked_source_ids

WHEN = datetime(2023, 5, 8, tzinfo=UTC)


def memory(source_id: str, content: str) -> BenchMemory:
    return BenchMemory(source_id=source_id, content=content, created_at=WHEN)


def dataset() -> BenchDataset:
    user = BenchUser(user_id="conv-1", memories=[memory("D1:1", "A: hi"), memory("D1:2", "B: I paint")],
                     queries=[BenchQuery("conv-1#q0", "What does B paint?", frozenset({"D1:2"}), "single-hop"),
                              BenchQuery("conv-1#q1", "  Who said hi?  ", frozenset({"D1:1"}), "multi-hop")])
    return BenchDataset(name="locomo", language="en", users=[user])


def test_identical_turns_become_one_memory_standing_for_all_their_ids() -> None:
    turns = [{"source_id": "D1:1", "content": "A: hi"}, {"source_id": "D1:2", "content": "B: yo"},
             {"source_id": "D2:7", "content": "A: hi"}, {"source_id": "D2:7", "content": "A: hi"}]

    assert group_by_content(turns) == [("A: hi", ["D1:1", "D2:7"]), ("B: yo", ["D1:2"])]


def test_mem0_results_map_to_their_source_ids_best_first() -> None:
    sources = {"m-1": ["D1:1", "D2:7"], "m-2": ["D1:2"]}
    results = [{"id": "m-2", "score": 0.9}, {"id": "m-1", "score": 0.8}, {"id": "gone", "score": 0.1}]

    assert ranked_source_ids(results, sources) == [["D1:2"], ["D1:1", "D2:7"], []]


def test_mem0_is_configured_local_and_offline(tmp_path: Path) -> None:
    config = memory_config(tmp_path)
    environment = offline_environment(tmp_path)

    assert config["vector_store"]["provider"] == "qdrant"
    assert config["vector_store"]["config"]["path"].startswith(str(tmp_path))
    assert config["history_db_path"].startswith(str(tmp_path))
    assert config["vector_store"]["config"]["embedding_model_dims"] == 384
    assert config["llm"]["config"]["openai_base_url"].startswith("http://127.0.0.1:")
    assert environment["MEM0_TELEMETRY"] == "False" and environment["HF_HUB_OFFLINE"] == "1"


def test_the_worker_gets_turns_and_questions_but_never_the_answers() -> None:
    payload = worker_payload(dataset())

    (user,) = payload["users"]
    assert user["memories"] == [{"source_id": "D1:1", "content": "A: hi"},
                                {"source_id": "D1:2", "content": "B: I paint"}]
    assert [q["text"] for q in user["queries"]] == ["What does B paint?", "Who said hi?"]  # as ours: stripped
    assert "relevant" not in str(payload) and "D1:2" not in str(user["queries"])


def test_the_worker_answer_is_scored_like_ours() -> None:
    answer = {"queries": [
        {"query_id": "conv-1#q0", "latency_ms": 10.0, "ranked": [["D1:1"], ["D1:2"]]},  # hit at rank 2
        {"query_id": "conv-1#q1", "latency_ms": 30.0, "ranked": [["D1:2"]]},  # missed
    ]}

    scored = score_peer(dataset(), answer)

    assert scored["queries"] == 2
    assert (scored["hit@1"], scored["hit@3"], scored["mrr@10"]) == (0.0, 0.5, 0.25)
    assert scored["p50_ms"] == 20.0 and scored["max_ms"] == 30.0
    assert scored["by_category"]["single-hop"]["hit@3"] == 1.0
    assert scored["by_category"]["multi-hop"]["hit@10"] == 0.0


def test_a_question_the_worker_did_not_answer_fails_the_run() -> None:
    answer = {"queries": [{"query_id": "conv-1#q0", "latency_ms": 10.0, "ranked": []}]}

    with pytest.raises(ValueError, match="answered 1 of 2 questions"):
        score_peer(dataset(), answer)


def test_ratios_are_ours_over_theirs_and_skip_what_cannot_divide() -> None:
    ours = {"hit@5": 0.72, "p95_ms": 40.0, "import_s": 100.0}
    theirs = {"hit@5": 0.48, "p95_ms": 160.0, "import_s": 0.0}

    found = ratios(ours, theirs, ["hit@5", "p95_ms", "import_s", "hit@1"])

    assert found == {"hit@5": 1.5, "p95_ms": 0.25, "import_s": None, "hit@1": None}


def test_the_table_has_both_sides_the_ratio_and_the_reference() -> None:
    ours = side_summary({"hit@1": 0.4, "hit@3": 0.6, "hit@5": 0.7, "hit@10": 0.8, "mrr@10": 0.5, "p50_ms": 12.34,
                         "p95_ms": 40.0, "by_category": {}}, import_s=120.0, stored=2700, warm_up_s=1.0)
    mem0 = side_summary({"hit@1": 0.2, "hit@3": 0.3, "hit@5": 0.35, "hit@10": 0.4, "mrr@10": 0.25, "p50_ms": 24.68,
                         "p95_ms": 400.0}, import_s=240.0, stored=2700, warm_up_s=1.0)

    lines = format_table([("ours", ours), ("mem0", mem0)], ratios(ours, mem0)).splitlines()

    assert "by_category" not in ours
    assert lines[0].startswith("| | hit@1 | hit@3 | hit@5 | hit@10 | MRR@10 | p50 ms | p95 ms | import s |")
    assert lines[2] == "| ours | 0.400 | 0.600 | 0.700 | 0.800 | 0.500 | 12.3 | 40.0 | 120 |"
    assert lines[4] == "| **ours / mem0** | 2.00× | 2.00× | 2.00× | 2.00× | 2.00× | 0.50× | 0.10× | 0.50× |"
    assert lines[5].startswith(f"| {REFERENCE['label']} | – | – | 0.404 | 0.505 | – | – | 623 | – |")
