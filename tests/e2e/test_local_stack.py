"""`make run`'s stack over real HTTP: extract, supersede, load and tenant isolation, end to end."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator

import pytest
from agent_memory_client import MemoryClient, NotFoundError, ValidationError

from tests.e2e.quickstart import assert_quickstart_answers, quickstart_calls, run_calls
from tests.e2e.stack import ROOT, Stack, http, running_stack, start_stack, wait_for

pytestmark = pytest.mark.e2e

SELF_INTRODUCTION = "我今年32岁，浙大计算机硕士毕业的，现在在杭州做前端开发，工作8年了，年薪大概80万"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("stack-data")) as running:
        yield running


def client(stack: Stack, tenant: str | None = None) -> MemoryClient:
    return MemoryClient(stack.url, tenant_id=tenant, max_retries=0)


def test_extract_supersede_load_and_isolate_tenants_over_http(stack):
    memory = client(stack)
    info = memory.extract("u1", SELF_INTRODUCTION)["extracted_info"]
    assert (info["age"], info["education"], info["major"]) == (32, "硕士", "计算机")
    assert info["currentJobTitle"] == "前端开发"
    assert (info["totalYearsOfExperience"], info["annualIncome"], info["currentLocation"]) == (8, 800000, "杭州")
    assert info["university"] in ("浙江大学", "浙大")

    memory.extract("u1", "我今年33岁")

    contents = [m["content"] for m in memory.load_context("u1", "年龄")["memories"]]
    assert any("33岁" in c for c in contents) and not any("32岁" in c for c in contents)

    age = next(m for m in memory.list_memories("u1", limit=100)["items"] if m["field"] == "age")
    assert [h["content"] for h in memory.get_memory("u1", age["memory_key"])["history"]] == ["用户32岁", "用户33岁"]

    assert client(stack, tenant="another-tenant").list_memories("u1")["items"] == []


def test_the_stack_says_its_steps_answers_health_with_every_part_and_prints_one_line_per_request(stack):
    status, health = http(stack, "GET", "/v1/health")
    public = http(stack, "GET", "/health")
    http(stack, "GET", "/v1/tools")

    assert public == (200, {"status": "ok"})
    assert status == 200 and health["status"] == "ok"
    assert health["tables"]["MemoryTable"]["status"] == "ok" and health["workers"] == {"status": "ok", "alive": True}
    assert {"LogExtractionQueue", "AccessStatsQueue", "RollupQueue"} <= set(health["queues"])
    printed = wait_for(lambda: "".join(stack.output) if "GET /v1/tools 200" in "".join(stack.output) else "")
    steps = re.findall(r"^\[ *\d+\.\ds\] (.+)$", printed, re.MULTILINE)
    assert steps[0].startswith("starting DynamoDB Local") and steps[-1] == (
        f"API ready on {stack.url} (UI /ui, docs /docs, health /health)"), steps
    assert re.search(r"^GET /v1/tools 200 \d+ ms$", printed, re.MULTILINE)
    assert '"_aws"' not in printed  # the metric lines went to the data dir
    assert '"route":"GET /v1/tools"' in (stack.data_dir / "metrics.log").read_text(encoding="utf-8")


def test_bad_input_and_unknown_routes_over_http(stack):
    status, body = http(stack, "POST", "/v1/users/u2/memories", raw=b"{oops")
    assert status == 400 and body["error"]["code"] == "invalid_json"
    memory = client(stack)
    with pytest.raises(ValidationError) as refused:
        memory.save_batch("u2", [{"memoryType": "FACT", "content": "ok"}, {"memoryType": "NOPE", "content": "x"}])
    assert refused.value.details[0]["field"] == "memories.1.memoryType"
    assert memory.list_memories("u2")["items"] == []
    with pytest.raises(NotFoundError):
        memory.get_memory("u2", "mem_0123456789abcdefghjkmnpqrs")
    status, body = http(stack, "GET", "/v2/whatever")
    assert status == 404 and body["error"]["code"] == "route_not_found"


def test_given_the_tenant_header_twice_then_422_names_it_and_nothing_is_read(stack):
    import http.client

    connection = http.client.HTTPConnection(stack.url.removeprefix("http://"), timeout=10)
    connection.putrequest("GET", "/v1/users/u1/memories")
    connection.putheader("X-Tenant-Id", "tenant-a")
    connection.putheader("X-Tenant-Id", "tenant-b")
    connection.endheaders()
    response = connection.getresponse()
    body = json.loads(response.read())
    assert response.status == 422
    assert body["error"]["details"][0] == {"field": "X-Tenant-Id", "message": "must be sent once", "type": "duplicate"}


def readme_walkthrough() -> str:
    readme = (ROOT / "docs" / "walkthroughs.md").read_text(encoding="utf-8")
    block = readme.split("<!-- walkthrough:begin -->", 1)[1].split("<!-- walkthrough:end -->", 1)[0]
    return block.split("```bash", 1)[1].rsplit("```", 1)[0]


def test_the_readme_walkthrough_saves_summarizes_and_injects(stack):
    """The save → summarize → inject walk-through (docs/walkthroughs.md), run verbatim against the stack."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the walk-through uses it")
    script = readme_walkthrough().replace("localhost:3000", stack.url.removeprefix("http://"))
    # Each curl prints one JSON document; collect them in order.
    wrapped = "\n".join(line + ("; echo" if line.strip().endswith("}'") or line.strip().endswith("summarize")
                                else "") for line in script.splitlines())
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", wrapped], capture_output=True, text=True, timeout=60,
                         check=True)
    outputs = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    first, second, summary, injected = outputs

    assert first["saved_count"] >= 5 and second["saved_count"] == 2
    assert summary["completeness"]["score"] > 0 and "浙江大学" in summary["narrative_summary"]
    assert injected["injected_contexts"][:2] == ["user_memory", "collected_info"]
    context = injected["messages"][0]["content"]
    assert "<user_memory>" in context and "对高才通B类感兴趣" in context
    assert injected["messages"][-1] == {"role": "user", "content": "我适合高才通吗？需要准备哪些材料？"}


def test_the_readme_layers_walkthrough_logs_rolls_up_searches_and_injects(stack):
    """The log → rollup → report search → inject walk-through (docs/walkthroughs.md), verbatim."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the walk-through uses it")
    readme = (ROOT / "docs" / "walkthroughs.md").read_text(encoding="utf-8")
    script = readme.split("<!-- walkthrough-layers:begin -->", 1)[1].split("<!-- walkthrough-layers:end -->", 1)[0]
    script = script.split("```bash", 1)[1].rsplit("```", 1)[0]
    port = stack.url.rsplit(":", 1)[1]
    script = script.replace("localhost:3000", f"127.0.0.1:{port}").replace("PORT=3000", f"PORT={port}")
    # Each curl prints one JSON document (and `make rollup` its plan and a line): one per line.
    script = "\n".join(f"{line}; echo" if line.startswith("curl") and line.rstrip().endswith("'") else line
                       for line in script.splitlines())
    script = script.replace("\nJSON\n", "\nJSON\necho\n")
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr
    outputs = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    logged = [o for o in outputs if "stored_count" in o]
    reports = next(o for o in outputs if "reports" in o)["reports"]
    injected = outputs[-1]

    assert [o["stored_count"] for o in logged] == [2, 3]
    assert len(reports) == 1 and reports[0]["metrics"]
    assert "访视" in reports[0]["summary"] + " ".join(reports[0]["key_events"])
    assert injected["injected_contexts"][0] == "hot_memory"
    context = injected["messages"][0]["content"]
    assert '- name: "高血压III期临床研究"' in context and "<intent_context>" in context


def test_given_a_stopped_stack_when_it_starts_again_then_every_kind_of_data_is_there(tmp_path):
    from datetime import date, timedelta

    monday = date.today() - timedelta(days=date.today().weekday() + 7)
    first = start_stack(tmp_path)
    try:  # one of each: a memory, a synonym, a hot-memory entry, a log message, a report
        memory = client(first)
        assert memory.save("u1", memory_type="FACT", content="我住在杭州")["outcome"] == "created"
        memory.add_synonyms("网球", ["tennis"])
        memory.set_hot_memory("projects", "p1", "meta", "name", "高血压研究", priority=10)
        memory.log("projects", "p1", "c1", [{"role": "user", "content": "本周新入组3例受试者",
                                             "created_at": f"{monday}T09:00:00+08:00"}])
        # The weekly rollup, through the queue and the workers' process, writes last week's report.
        status, _ = http(first, "POST", "/_local/invoke/RollupFunction",
                         {"source": "aws.scheduler", "time": f"{monday + timedelta(days=7)}T01:00:00Z"})
        assert status == 200, _
        assert wait_for(lambda: memory.list_reports("projects", "p1")["reports"])
    finally:
        printed = first.stop()
    assert first.process.returncode == 0, printed
    assert "stopped" in printed

    second = start_stack(tmp_path)
    try:
        memory = client(second)
        assert [m["content"] for m in memory.list_memories("u1")["items"]] == ["我住在杭州"]
        assert "tennis" in json.dumps(memory.get_synonyms("网球"), ensure_ascii=False)
        assert "高血压研究" in json.dumps(memory.get_hot_memory("projects", "p1"), ensure_ascii=False)
        found = memory.search_conversations("projects", "p1", "入组")
        assert "本周新入组3例受试者" in json.dumps(found, ensure_ascii=False)
        assert len(memory.list_reports("projects", "p1")["reports"]) == 1
    finally:
        second.stop()


def test_the_readme_quickstart_calls_answer_as_it_says(stack):
    """The README's five calls, verbatim: extract, supersede, save in English, search, inject."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the quickstart uses it")
    calls = quickstart_calls(stack, "u-quickstart")
    assert len(calls) == 5
    assert_quickstart_answers(run_calls(calls))


def test_as_of_reads_answer_what_was_known_on_each_date_over_http(stack):
    """Three statements of a field in Chinese and three in English, a memory deleted since: search, load_context and
    the profile as of each date answer the version known then; every version shows how it came (no token here)."""
    memory = client(stack, tenant="asof-e2e")
    user = "u-asof"
    for content, field, when in [("我住在杭州", "location", "2024-01-01"), ("我搬到了上海", "location", "2024-06-01"),
                                 ("我现在住在深圳", "location", "2025-01-01"),
                                 ("I work at Siemens as an engineer", "company", "2024-02-01"),
                                 ("I work at SAP as an engineer", "company", "2024-07-01"),
                                 ("I work at Zalando as an engineer", "company", "2025-02-01")]:
        memory.save(user, memory_type="FACT", content=content, field=field, created_at=f"{when}T00:00:00Z")
    parrot = memory.save(user, memory_type="FACT", content="I keep a parrot called Kiwi",
                         created_at="2024-03-01T00:00:00Z")["memory"]
    memory.delete_memory(user, parrot["memory_key"])

    def known(as_of: str | None) -> set[str]:
        found = memory.search(user, "住在 杭州 上海 深圳 work Siemens SAP Zalando parrot Kiwi", search_mode="hybrid",
                              limit=20, min_relevance_score=0, as_of=as_of)
        return {r["content_preview"] for r in found["results"]}

    assert known("2023-12-01T00:00:00Z") == set()
    assert known("2024-04-01T00:00:00Z") == {"我住在杭州", "I work at Siemens as an engineer",
                                             "I keep a parrot called Kiwi"}
    assert known("2024-09-01T00:00:00Z") == {"我搬到了上海", "I work at SAP as an engineer",
                                             "I keep a parrot called Kiwi"}
    assert known("2025-06-01T00:00:00Z") == {"我现在住在深圳", "I work at Zalando as an engineer",
                                             "I keep a parrot called Kiwi"}
    assert known(None) == {"我现在住在深圳", "I work at Zalando as an engineer"}

    loaded = memory.load_context(user, "", as_of="2024-09-01T00:00:00Z")
    assert {m["content"] for m in loaded["memories"]} == {"我搬到了上海", "I work at SAP as an engineer",
                                                          "I keep a parrot called Kiwi"}
    assert memory.summarize(user, as_of="2024-04-01T00:00:00Z")["user_profile"]["basic"]["location"] == "我住在杭州"
    assert memory.summarize(user)["user_profile"]["basic"]["location"] == "我现在住在深圳"

    current = next(m for m in memory.list_memories(user)["items"] if m["field"] == "location")
    history = memory.get_memory(user, current["memory_key"])["history"]
    assert [(h["version"], h["origin"], h["written_by"]) for h in history] == [
        (1, "direct_save", None), (2, "direct_save", None), (3, "direct_save", None)]
    with pytest.raises(ValidationError) as refused:
        memory.search(user, "杭州", as_of="2999-01-01T00:00:00Z")
    assert refused.value.details[0]["field"] == "as_of"


def test_an_erased_user_leaves_nothing_over_http_even_with_an_extraction_still_queued(stack):
    """DynamoDB Local, the local queues and workers: the user's log is still being extracted by the workers when
    the erasure comes; once they are done, nothing of the user answers, and the receipt says every store is
    clean."""
    user, base = "u-erase-e2e", "/v1/users/u-erase-e2e"
    assert http(stack, "POST", f"{base}/memories", {"memory_type": "FACT", "content": "养了一只叫团子的猫",
                                                    "field": "pet"})[0] == 201
    assert http(stack, "POST", f"{base}/memories", {"memory_type": "FACT", "content": "Lives in Porto"})[0] == 201
    assert http(stack, "PUT", f"{base}/hot-memory/status/move", {"value": "packing"})[0] == 200
    assert http(stack, "POST", f"{base}/memory-tool", {"command": "create", "path": "/memories/n.md",
                                                       "file_text": "团子怕吵\n"})[0] == 200
    assert http(stack, "POST", f"{base}/memories/search", {"query": "团子"})[0] == 200
    status, logged = http(stack, "POST", f"{base}/conversations/c-1/messages", {"messages": [
        {"role": "user", "content": "我今年45岁，在里斯本做药剂师"}], "extract": True})
    assert status == 201 and logged["queued_extractions"], logged

    status, receipt = http(stack, "DELETE", base)  # the extraction may not have run yet: the tombstone drops it

    assert status == 200 and receipt["status"] == "complete" and receipt["verified"], receipt
    assert {s["store"] for s in receipt["stores"] if s["found"]} >= {
        "memories", "memory_keys", "version_counter", "conversation_log", "hot_memory", "memory_files"}
    wait_for(lambda: http(stack, "GET", "/v1/health")[1]["queues"]["LogExtractionQueue"]["depth"] == 0
             and not http(stack, "GET", "/v1/health")[1]["queues"]["LogExtractionQueue"]["in_flight"], timeout=60)
    assert http(stack, "GET", f"{base}/memories")[1]["items"] == []
    assert http(stack, "POST", f"{base}/memories/search", {"query": "团子 猫 Porto 药剂师",
                                                          "min_relevance_score": 0})[1]["results"] == []
    assert http(stack, "POST", f"{base}/context/load", {"query": "猫"})[1]["memories"] == []
    assert http(stack, "POST", f"{base}/conversations/search", {"query": "药剂师"})[1]["results"] == []
    assert http(stack, "GET", f"{base}/hot-memory")[1]["entries"] == []
    assert "n.md" not in http(stack, "POST", f"{base}/memory-tool", {"command": "view", "path": "/memories"})[1][
        "content"]
    status, again = http(stack, "GET", f"/v1/erasures/{receipt['erasure_id']}")
    assert status == 200 and again == receipt
    assert user == receipt["scope_id"]
