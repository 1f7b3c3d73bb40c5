"""The retrieval benchmark's loaders and metrics: hand-made cases always, the real data when present."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.datasets import (
    BenchDataset,
    BenchMemory,
    BenchQuery,
    BenchUser,
    data_dir,
    dialogue_turn_text,
    load,
    load_locomo,
    load_madial,
    locomo_memory_content,
    madial_query,
    normalize_evidence,
    parse_locomo_datetime,
    parse_madial_date,
)
from benchmarks.retrieval import (
    fit_query,
    format_table,
    import_memories,
    latency_summary,
    mean_metrics,
    percentile,
    ranking_metrics,
)

# --- hand-made cases: parsing ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("12:28 am on 8 November, 2023", datetime(2023, 11, 8, 0, 28, tzinfo=UTC)),
    ("12:05 pm on 1 January, 2022", datetime(2022, 1, 1, 12, 5, tzinfo=UTC)),
    ("10:37 AM on 27 June, 2023", datetime(2023, 6, 27, 10, 37, tzinfo=UTC)),
    ("9:00 pm on 3 Sept, 2023", datetime(2023, 9, 3, 21, 0, tzinfo=UTC)),
])
def test_locomo_session_dates_parse_as_utc(text, expected):
    assert parse_locomo_datetime(text) == expected


@pytest.mark.parametrize("text", ["", "8 May 2023", "1:56 pm on 8 Mayo, 2023"])
def test_unparseable_locomo_dates_are_refused(text):
    with pytest.raises(ValueError):
        parse_locomo_datetime(text)


@pytest.mark.parametrize(("raw", "expected"), [
    (["D1:3"], ["D1:3"]),
    (["D8:6; D9:17"], ["D8:6", "D9:17"]),
    (["D:11:26"], ["D11:26"]),
    (["D30:05"], ["D30:5"]),
    (["D"], []),
    (["D1:3", "D1:3", "D2:1 D2:4"], ["D1:3", "D2:1", "D2:4"]),
    ("D4:2", ["D4:2"]),
    (None, []),
])
def test_malformed_evidence_is_normalised(raw, expected):
    assert normalize_evidence(raw) == expected


def test_locomo_content_carries_the_speaker_and_any_image_caption():
    assert locomo_memory_content({"speaker": "Mel", "text": "Hi!"}) == "Mel: Hi!"
    turn = {"speaker": "Mel", "text": "Look", "blip_caption": "a photo of a dog"}
    assert locomo_memory_content(turn) == "Mel: Look [image: a photo of a dog]"
    assert locomo_memory_content({"speaker": "Mel", "text": "Look", "blip_caption": ""}) == "Mel: Look"


def test_madial_turns_and_query():
    assert dialogue_turn_text('<Bart>:"今天真开心！"\n') == ("Bart", "今天真开心！")
    assert dialogue_turn_text(' <Assistant>: "好的"\n') == ("Assistant", "好的")
    assert dialogue_turn_text("<BOD>\n") is None
    assert dialogue_turn_text("<EOD>") is None
    dialogue = ["<BOD>\n", '<Bart>:"一"\n', '<Assistant>:"二"\n', '<Bart>:"三"\n', '<Assistant>:"四"\n', "<EOD>\n"]
    assert madial_query(dialogue, [4, 2]) == "一"  # up to, not including, the first test turn
    assert madial_query(dialogue, [4]) == "一\n二\n三"
    assert parse_madial_date("2023-12-25") == datetime(2023, 12, 25, tzinfo=UTC)


# --- hand-made cases: metrics ---------------------------------------------------------------------


def test_ranking_metrics_first_hit_at_rank_three():
    ranked = [{"a"}, {"b"}, {"r1"}, {"c"}, {"r2"}]
    m = ranking_metrics(ranked, {"r1", "r2"})
    assert (m["hit@1"], m["hit@3"], m["hit@5"], m["hit@10"]) == (0.0, 1.0, 1.0, 1.0)
    assert m["full@10"] == 1.0
    assert m["mrr@10"] == pytest.approx(1 / 3)


def test_ranking_metrics_partial_and_missing():
    partial = ranking_metrics([{"r1"}, {"x"}], {"r1", "r2"})
    assert partial["hit@1"] == 1.0 and partial["full@10"] == 0.0 and partial["mrr@10"] == 1.0
    miss = ranking_metrics([{"x"}, {"y"}], {"r"})
    assert all(value == 0.0 for value in miss.values())
    assert ranking_metrics([], {"r"})["mrr@10"] == 0.0


def test_ranking_metrics_stop_at_depth_ten():
    ranked = [{f"x{i}"} for i in range(10)] + [{"r"}]
    m = ranking_metrics(ranked, {"r"})
    assert m["hit@10"] == 0.0 and m["mrr@10"] == 0.0 and m["full@10"] == 0.0
    m = ranking_metrics(ranked[1:], {"r"})  # now at rank 10
    assert m["hit@5"] == 0.0 and m["hit@10"] == 1.0 and m["mrr@10"] == pytest.approx(0.1)


def test_a_memory_stored_once_for_several_turns_hits_when_any_is_relevant():
    m = ranking_metrics([{"x"}, {"D1:2", "D7:4"}], {"D7:4"})
    assert m["hit@1"] == 0.0 and m["hit@3"] == 1.0 and m["mrr@10"] == 0.5 and m["full@10"] == 1.0
    both = ranking_metrics([{"D1:2", "D7:4"}], {"D1:2", "D7:4"})
    assert both["full@10"] == 1.0


def test_ranking_metrics_refuse_bad_input():
    with pytest.raises(ValueError):
        ranking_metrics([{"a"}], set())
    with pytest.raises(ValueError):
        ranking_metrics([{"a"}], {"a"}, ks=(11,))


def test_means_percentiles_and_latency():
    rows = [{"hit@1": 1.0, "mrr@10": 1.0}, {"hit@1": 0.0, "mrr@10": 0.5}]
    assert mean_metrics(rows) == {"hit@1": 0.5, "mrr@10": 0.75}
    assert mean_metrics([]) == {}
    samples = [float(i) for i in range(1, 101)]
    assert percentile(samples, 0.5) == 51.0 and percentile(samples, 0.95) == 95.0
    assert percentile([3.0], 0.95) == 3.0
    summary = latency_summary([1.0, 2.0, 3.0, 100.0])
    assert summary["p50_ms"] == 2.5 and summary["p95_ms"] == 100.0 and summary["max_ms"] == 100.0
    assert latency_summary([]) == {}


def test_long_queries_keep_their_end():
    assert fit_query("  short ") == "short"
    long = "a" * 10 + "b" * 2000
    assert fit_query(long) == "b" * 2000


def test_format_table_prints_modes_and_reference_rows():
    result = {"sizes": {"users": 1, "memories": 3, "memories_stored": 3, "queries": 2}, "import_s": 0.1,
              "warm_up_s": 0.2, "modes": {"keyword": {"hit@1": 0.5, "mrr@10": 0.5, "p50_ms": 1.0}}}
    table = format_table("locomo", result)
    assert "keyword (BM25)" in table and "reference: BM25 (all 10 convs)" in table
    assert "reference" not in format_table("madial_zh", result)


# --- loaders on hand-made files -------------------------------------------------------------------


def _write_locomo(root: Path) -> None:
    (root / "locomo").mkdir(parents=True)
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a dog."},
                          {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a puppy"}],
            "session_2_date_time": "9:00 am on 9 May, 2023",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Hi"}],
            "session_3_date_time": "9:00 am on 10 May, 2023",  # a date without turns, as in LoCoMo
        },
        "qa": [
            {"question": "What did Ann adopt?", "answer": "a dog", "evidence": ["D1:1"], "category": 4},
            {"question": "When?", "answer": "May", "evidence": ["D1:1; D2:01"], "category": 2},
            {"question": "Trick?", "adversarial_answer": "x", "evidence": ["D1:2"], "category": 5},
            {"question": "No evidence", "answer": "?", "evidence": [], "category": 3},
            {"question": "Unknown turn", "answer": "?", "evidence": ["D9:9", "D"], "category": 1},
        ],
    }
    (root / "locomo" / "locomo_dev.json").write_text(json.dumps([sample, {**sample, "sample_id": "conv-y"}]))


def test_locomo_loader_on_a_hand_made_file(tmp_path):
    _write_locomo(tmp_path)
    dataset = load_locomo(tmp_path)
    assert [u.user_id for u in dataset.users] == ["conv-x", "conv-y"]
    user = dataset.users[0]
    assert [m.source_id for m in user.memories] == ["D1:1", "D1:2", "D2:1"]
    assert user.memories[1] == BenchMemory(
        source_id="D1:2", content="Bob: Nice! [image: a puppy]", created_at=datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
        conversation_id="conv-x-s1", metadata={"dia_id": "D1:2", "session": 1})
    assert user.memories[2].conversation_id == "conv-x-s2" and user.memories[2].metadata["session"] == 2
    assert [(q.text, set(q.relevant), q.category) for q in user.queries] == [
        ("What did Ann adopt?", {"D1:1"}, "single-hop"), ("When?", {"D1:1", "D2:1"}, "temporal")]
    assert dataset.notes["questions_adversarial_excluded"] == 2
    assert dataset.notes["questions_without_evidence"] == 4
    assert dataset.notes["evidence_ids_unknown"] == 2
    assert load("locomo", tmp_path, limit_conversations=1).query_count == 2


def test_madial_loader_on_hand_made_files(tmp_path):
    (tmp_path / "madial_zh").mkdir()
    memories = [{"2": {"time": "2023-05-15", "event": "Bart吃了冰淇淋。", "user-id": 1, "id": "2"}},
                {"1": {"time": "2023-12-25", "event": "Bart跳舞。", "user-id": 1, "id": "1"}},
                {"3": {"time": "2023-01-01", "event": "Lisa画画。", "user-id": 2, "id": "3"}}]
    dialogues = [
        {"dialogue": ["<BOD>\n", '<Bart>:"冰淇淋"\n', '<Assistant>:"记得吗"\n', "<EOD>\n"], "test-turn": [2],
         "relevant-id": [2], "user-id": 1, "id": 0},
        {"dialogue": ["<BOD>\n", '<Lisa>:"画"\n', '<Assistant>:"好"\n'], "test-turn": [2],
         "relevant-id": [3, 1], "user-id": 2, "id": 2},  # memory 1 is another user's: dropped
    ]
    (tmp_path / "madial_zh" / "memory.jsonl").write_text("\n".join(json.dumps(m, ensure_ascii=False) for m in memories))
    (tmp_path / "madial_zh" / "dialogue_dev.jsonl").write_text(
        "\n".join(json.dumps(d, ensure_ascii=False) for d in dialogues) + "\n")
    dataset = load_madial(tmp_path)
    assert [u.user_id for u in dataset.users] == ["1", "2"]
    assert [m.source_id for m in dataset.users[0].memories] == ["1", "2"]
    assert dataset.users[0].memories[0].content == "Bart跳舞。"
    assert dataset.users[0].memories[0].created_at == datetime(2023, 12, 25, tzinfo=UTC)
    assert dataset.users[0].queries == [BenchQuery(query_id="dialogue-0", text="冰淇淋", relevant=frozenset({"2"}))]
    assert dataset.users[1].queries[0].relevant == frozenset({"3"})
    assert dataset.notes["relevant_ids_unknown"] == 1
    assert [u.user_id for u in load("madial_zh", tmp_path, limit_conversations=1).users] == ["1"]


def test_import_maps_duplicates_to_the_existing_memory():
    from agent_memory.domain.models import ScopeRef
    from agent_memory.services.save import SaveService
    from tests.fakes.store import InMemoryMemoryStore

    services = SimpleNamespace(save=SaveService(store=InMemoryMemoryStore(), extractor=lambda: None))
    when = datetime(2023, 5, 8, tzinfo=UTC)
    memories = [BenchMemory(f"D1:{i}", text, when, "c-s1", {"dia_id": f"D1:{i}"})
                for i, text in enumerate(["Ann: Hi!", "Ann: bye", "ann: hi", "Bob: ok"], start=1)]
    sources, duplicates = import_memories(services, ScopeRef(tenant_id="bench", user_id="u"), memories, chunk=3)
    assert duplicates == 1
    assert sorted(sorted(ids) for ids in sources.values()) == [["D1:1", "D1:3"], ["D1:2"], ["D1:4"]]


def test_run_dataset_scores_what_search_returns():
    pytest.importorskip("agent_memory.services.search")
    from agent_memory.domain.search.ranking import ScoreBreakdown
    from agent_memory.domain.search.search import SearchHit, SearchOutcome
    from agent_memory.services.save import SaveService
    from benchmarks.retrieval import run_dataset
    from tests.fakes.store import InMemoryMemoryStore

    store = InMemoryMemoryStore()

    breakdown = ScoreBreakdown(keyword=0, text=0, lexical=0, vector=0, time_decay=0, relevance=0.4, interaction=0,
                               type_priority=0, final=0.5, matched_keywords=[])

    class ReverseSearch:  # newest first: a fixed, query-blind ranking
        def search(self, user, request):
            memories = list(reversed(store.all_current(user)))[: request.limit]
            hits = [SearchHit(memory=m, relevance_score=0.5, score_breakdown=breakdown, recall_round="precise")
                    for m in memories]
            return SearchOutcome(hits=hits, total_found=len(memories), strategy="reverse", expanded_keywords=None,
                                 rounds_executed=1)

    services = SimpleNamespace(save=SaveService(store=store, extractor=lambda: None), search=ReverseSearch())
    when = datetime(2023, 5, 8, tzinfo=UTC)
    user = BenchUser("u", memories=[BenchMemory(f"m{i}", f"memory {i}", when) for i in range(12)],
                     queries=[BenchQuery("q1", "newest?", frozenset({"m11"}), "single-hop"),
                              BenchQuery("q2", "oldest?", frozenset({"m0"}), "single-hop")])
    result = run_dataset(services, BenchDataset("toy", "en", [user]), ["keyword", "hybrid"])
    for mode in ("keyword", "hybrid"):
        row = result["modes"][mode]
        assert row["queries"] == 2 and row["hit@1"] == 0.5 and row["hit@10"] == 0.5 and row["mrr@10"] == 0.5
        assert row["p50_ms"] >= 0 and row["by_category"]["single-hop"]["queries"] == 2
    assert result["sizes"]["memories_stored"] == 12


# --- the real data, when ../shared/bench is there -------------------------------------------------

needs_data = pytest.mark.skipif(not (data_dir() / "locomo" / "locomo_dev.json").is_file()
                                or not (data_dir() / "madial_zh" / "memory.jsonl").is_file(),
                                reason=f"benchmark data not found at {data_dir()}")


@needs_data
def test_locomo_dev_data_loads_consistently():
    dataset = load_locomo()
    assert len(dataset.users) == 5 and dataset.query_count > 500 and dataset.memory_count > 2000
    for user in dataset.users:
        ids = [m.source_id for m in user.memories]
        assert len(ids) == len(set(ids))
        assert all(m.created_at.tzinfo is not None for m in user.memories)
        assert all(m.conversation_id == f"{user.user_id}-s{m.metadata['session']}" for m in user.memories)
        assert all(q.relevant and q.relevant <= set(ids) for q in user.queries)
        assert {q.category for q in user.queries} <= {"multi-hop", "temporal", "open-domain", "single-hop"}
    conv26 = next(u for u in dataset.users if u.user_id == "conv-26")
    assert any(q.relevant >= {"D8:6", "D9:17"} for q in conv26.queries)  # from "D8:6; D9:17"
    assert conv26.memories[0].created_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert len(load_locomo(limit_conversations=1).users) == 1


@needs_data
def test_madial_dev_data_loads_consistently():
    dataset = load_madial()
    assert dataset.memory_count == 171 and dataset.query_count == 80 and len(dataset.users) == 2
    for user in dataset.users:
        ids = {m.source_id for m in user.memories}
        assert all(q.relevant and q.relevant <= ids for q in user.queries)
        assert all(q.text and "<" not in q.text for q in user.queries)
        assert all(m.content for m in user.memories)


def test_a_relevance_floor_is_chosen_on_one_half_of_the_users_and_reported_on_the_other():
    from benchmarks.retrieval import choose_floor, cross_validate_floor, hit_with_floor

    def row(user, *ranked):
        return {"user": user, "ranked": list(ranked)}

    # every answer scores 0.5 or more; the noise above the answers scores 0.3
    rows = [row(f"u{i}", (False, 0.3), (True, 0.5 + i / 100)) for i in range(6)]
    assert hit_with_floor(rows, 0.0, k=1) == 0.0 and hit_with_floor(rows, 0.4, k=1) == 1.0
    assert hit_with_floor(rows, 0.6, k=5) == 0.0
    assert choose_floor({"d": rows}) == 0.5  # the highest that keeps hit@5: no answer scores under 0.5
    result = cross_validate_floor({"d": rows})
    assert [f["floor"] for f in result["folds"]] == [0.5, 0.5] and result["default"] == 0.5
    assert all(f["held_out"]["d"]["hit@5 at floor"] == 1.0 for f in result["folds"])


def _short_facts_file(tmp_path: Path, answers: list[str]) -> Path:
    (tmp_path / "dev.json").write_text(json.dumps({
        "split": "dev",
        "users": [{"user_id": "u1", "pack": "general", "language": "zh",
                   "memories": [{"id": "m1", "memory_type": "FACT", "content": "住在成都"},
                                {"id": "m2", "memory_type": "PREFERENCE", "content": "早上喝茶"}],
                   "questions": [{"id": "q1", "en": "where does he live", "zh": "他住哪", "answers": answers}],
                   "never_mentioned": [{"en": "what car does he drive", "zh": "他开什么车"}]}],
        "out_of_domain": ["notes on the Krebs cycle"],
    }, ensure_ascii=False), encoding="utf-8")
    return tmp_path


def test_short_facts_ask_each_question_in_both_languages_and_keep_the_memory_types(tmp_path: Path) -> None:
    from benchmarks.datasets import load_short_facts

    dataset = load_short_facts(_short_facts_file(tmp_path, ["m1"]), split="dev")
    (user,) = dataset.users
    assert [(m.source_id, m.memory_type) for m in user.memories] == [("m1", "FACT"), ("m2", "PREFERENCE")]
    assert user.group == "general/zh"
    assert user.memories[0].created_at < user.memories[1].created_at
    assert [(q.query_id, q.text, q.category, q.relevant) for q in user.queries] == [
        ("q1:en", "where does he live", "cross_language", frozenset({"m1"})),
        ("q1:zh", "他住哪", "same_language", frozenset({"m1"}))]
    assert [(q.text, q.category) for q in user.unanswerable] == [
        ("what car does he drive", "never_mentioned"), ("他开什么车", "never_mentioned"),
        ("notes on the Krebs cycle", "out_of_domain")]


def test_a_short_fact_question_naming_an_unknown_memory_is_refused(tmp_path: Path) -> None:
    from benchmarks.datasets import load_short_facts

    with pytest.raises(ValueError, match="u1/q1"):
        load_short_facts(_short_facts_file(tmp_path, ["m9"]), split="dev")


def test_the_committed_short_fact_sets_load_with_answers_for_every_question() -> None:
    from benchmarks.datasets import SHORT_FACTS_DIR, load_short_facts

    for split in sorted(p.stem for p in SHORT_FACTS_DIR.glob("*.json")):
        dataset = load_short_facts(split=split)
        assert len(dataset.users) >= 10
        assert all(q.relevant for u in dataset.users for q in u.queries)
        assert {q.category for u in dataset.users for q in u.unanswerable} == {"never_mentioned", "out_of_domain"}
