"""The local-stack benchmark's pure parts: RSS summed over a process tree, distinct texts, verdicts."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.local_stack import (
    RssProbe,
    distinct_texts,
    measured_values,
    process_tree,
    rss_by_part,
    same_endpoint,
    summary_table,
    tree_rss_kib,
    verdicts,
)


def fake_process(proc: Path, pid: int, ppid: int, comm: str = "python", rss_kib: int | None = 1000) -> None:
    directory = proc / str(pid)
    directory.mkdir(parents=True)
    (directory / "stat").write_text(f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 0 0\n")
    rss = f"VmRSS:\t    {rss_kib} kB\n" if rss_kib is not None else ""
    (directory / "status").write_text(f"Name:\t{comm}\nPid:\t{pid}\nPPid:\t{ppid}\n{rss}Threads:\t1\n")


def fake_proc(tmp_path: Path) -> Path:
    proc = tmp_path / "proc"
    fake_process(proc, 1, 0, "init", 5000)
    fake_process(proc, 100, 1, "python", 200_000)  # the supervisor
    fake_process(proc, 101, 100, "java", 600_000)  # DynamoDB Local
    fake_process(proc, 102, 100, "python3 (worker) x", 150_000)  # spaces and parentheses in comm
    fake_process(proc, 103, 102, "sh", 2_000)  # a grandchild
    fake_process(proc, 200, 1, "unrelated", 999_999)
    fake_process(proc, 2, 0, "kthreadd", None)  # kernel threads have no VmRSS
    (proc / "self").mkdir()
    (proc / "meminfo").write_text("MemTotal: 1 kB\n")
    return proc


def test_process_tree_walks_every_descendant(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path)
    assert sorted(process_tree(100, proc)) == [100, 101, 102, 103]
    assert process_tree(103, proc) == [103]


def test_tree_rss_sums_the_supervisor_and_its_descendants_only(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path)
    assert tree_rss_kib(100, proc) == (200_000 + 600_000 + 150_000 + 2_000, 4)
    assert tree_rss_kib(2, proc) == (0, 0)
    assert tree_rss_kib(4242, proc) is None


def test_tree_rss_skips_a_child_that_exited_meanwhile(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path)
    (proc / "101" / "status").unlink()
    assert tree_rss_kib(100, proc) == (200_000 + 150_000 + 2_000, 3)


def test_rss_by_part_counts_the_supervisor_alone_and_each_part_with_its_children(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path)
    parts = {"supervisor": 100, "dynamodb-local": 101, "api": 102, "workers": None, "gone": 4242}
    assert rss_by_part(parts, 100, proc) == {"supervisor": round(200_000 / 1024, 1),
                                             "dynamodb-local": round(600_000 / 1024, 1),
                                             "api": round(152_000 / 1024, 1)}


def test_rss_probe_reads_stack_json_and_notes_when_absent(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    probe = RssProbe(data_dir=data, url="http://localhost:3000", proc=proc)
    assert probe.sample() is None
    assert probe.note is not None and "stack.json not found" in probe.note

    (data / "stack.json").write_text(json.dumps({"pid": 100, "url": "http://127.0.0.1:3000", "store": "ddb"}))
    assert probe.sample() == round(952_000 / 1024, 1)
    assert probe.note is None and probe.processes == 4 and probe.stack == {
        "pid": 100, "url": "http://127.0.0.1:3000", "store": "ddb"}
    assert probe.parts_at_max == {}

    (data / "stack.json").write_text(json.dumps({"pid": 100, "url": "http://127.0.0.1:4000"}))
    assert probe.sample() is None and "not http://localhost:3000" in (probe.note or "")
    assert probe.max_mib == round(952_000 / 1024, 1)


def test_same_endpoint_treats_loopback_names_alike() -> None:
    assert same_endpoint("http://localhost:3000/", "http://127.0.0.1:3000")
    assert not same_endpoint("http://127.0.0.1:3000", "http://127.0.0.1:3001")


def test_distinct_texts_never_repeats() -> None:
    assert distinct_texts(["a", "b", "a", " ", "c"], 3) == ["a", "b", "c"]
    texts = distinct_texts(["a", "b"], 5)
    assert texts == ["a", "b", "a (round 2)", "b (round 2)", "a (round 3)"]
    assert len(set(texts)) == 5


def test_distinct_texts_skips_what_the_service_counts_as_the_same_content() -> None:
    texts = distinct_texts(["Thanks, Nate!", "thanks nate", "ＴＨＡＮＫＳ  Nate.", "Bye"], 3)
    assert texts == ["Thanks, Nate!", "Bye", "Thanks, Nate! (round 2)"]


def batch_rows(first: float, tenth: float) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [
        {"user": "user-1", "batch": n, "size": 100, "seconds": first if n == 1 else (tenth if n == 10 else 2.0)}
        for n in range(1, 11)]
    rows += [{"user": "user-2", "batch": n, "size": 100, "seconds": 1.0} for n in range(1, 4)]
    return rows


def test_measured_values_and_verdicts_all_met() -> None:
    values = measured_values(batch_rows(2.0, 2.9), 1200.0, 80.0, "user-1")
    assert values == {"batch_growth": 1.45, "rss_max_mib": 1200.0, "search_p95_ms": 80.0,
                      "import_per_s": round(1300 / (2.0 + 8 * 2.0 + 2.9 + 3.0), 2)}
    assert verdicts(values) == {"batch_growth": True, "rss_max_mib": True, "search_p95_ms": True,
                                "import_per_s": True}


def test_verdicts_missed_and_unmeasured() -> None:
    values = measured_values(batch_rows(1.0, 1.6), None, 100.0, "user-1")
    results = verdicts(values)
    assert results == {"batch_growth": False, "rss_max_mib": None, "search_p95_ms": True, "import_per_s": True}
    table = summary_table(values, results)
    assert "| user-1 batch 10 / batch 1 | 1.6 | ≤ 1.5× | ✗ |" in table
    assert "| whole-stack RSS max, MiB | - | ≤ 1536 | - |" in table
    slow = measured_values([{"user": "user-1", "batch": 1, "size": 100, "seconds": 10.0}], 2000.0, 150.0, "user-1")
    assert slow["batch_growth"] is None
    assert verdicts(slow) == {"batch_growth": None, "rss_max_mib": False, "search_p95_ms": False,
                              "import_per_s": False}
