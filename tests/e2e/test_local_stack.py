"""`make run`'s stack over real HTTP: extract, supersede, load and tenant isolation, end to end."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

SELF_INTRODUCTION = "我今年32岁，浙大计算机硕士毕业的，现在在杭州做前端开发，工作8年了，年薪大概80万"


ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Stack:
    url: str
    process: subprocess.Popen[str]
    data_dir: Path

    def stop(self) -> str:
        """A normal stop (SIGTERM, as a supervisor sends it); returns what the stack printed."""
        self.process.terminate()
        out, _ = self.process.communicate(timeout=120)
        return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_stack(data_dir: Path, port: int | None = None) -> Stack:
    """`make run` in a child process (`python -m local.stack`) on a free port, its data in `data_dir`."""
    from local.dynamodb_local import available

    if not available():
        pytest.skip("DynamoDB Local not installed (make dynamodb-local) or no java")
    port = port or free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LLM_", "ANTHROPIC_", "LOCAL_"))}
    env["PYTHONPATH"] = f"{ROOT / 'shared'}:{ROOT}"
    process = subprocess.Popen([sys.executable, "-m", "local.stack", "--port", str(port), "--data-dir", str(data_dir)],
                               cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(url + "/health-probe", timeout=1)
        except urllib.error.HTTPError:
            return Stack(url, process, data_dir)  # the stack answered (a JSON 404): it is up
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"local stack did not start:\n{process.communicate()[0]}") from None
            time.sleep(0.2)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = start_stack(tmp_path_factory.mktemp("stack-data"))
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.stop()


def http(stack: Stack, method: str, path: str, body: Any = None, tenant: str | None = None,
         raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(stack.url + path, data=data, method=method,
                                     headers={"content-type": "application/json"})
    if tenant:
        request.add_header("X-Tenant-Id", tenant)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_extract_supersede_load_and_isolate_tenants_over_http(stack):
    status, saved = http(stack, "POST", "/v1/users/u1/memories/extract", {"user_message": SELF_INTRODUCTION})
    assert status == 200
    info = saved["extracted_info"]
    assert (info["age"], info["education"], info["major"]) == (32, "硕士", "计算机")
    assert info["currentJobTitle"] == "前端开发"
    assert (info["totalYearsOfExperience"], info["annualIncome"], info["currentLocation"]) == (8, 800000, "杭州")
    assert info["university"] in ("浙江大学", "浙大")

    status, _ = http(stack, "POST", "/v1/users/u1/memories/extract", {"user_message": "我今年33岁"})
    assert status == 200

    status, loaded = http(stack, "POST", "/v1/users/u1/context/load", {"query": "年龄"})
    contents = [m["content"] for m in loaded["memories"]]
    assert any("33岁" in c for c in contents) and not any("32岁" in c for c in contents)

    _, listing = http(stack, "GET", "/v1/users/u1/memories?limit=100")
    age = next(m for m in listing["items"] if m["field"] == "age")
    _, detail = http(stack, "GET", f"/v1/users/u1/memories/{age['memory_key']}")
    assert [h["content"] for h in detail["history"]] == ["用户32岁", "用户33岁"]

    _, other = http(stack, "GET", "/v1/users/u1/memories", tenant="another-tenant")
    assert other["items"] == []


def test_bad_input_and_unknown_routes_over_http(stack):
    status, body = http(stack, "POST", "/v1/users/u2/memories", raw=b"{oops")
    assert status == 400 and body["error"]["code"] == "invalid_json"
    status, body = http(stack, "POST", "/v1/users/u2/memories/batch",
                        {"memories": [{"memoryType": "FACT", "content": "ok"},
                                      {"memoryType": "NOPE", "content": "x"}]})
    assert status == 422 and body["error"]["details"][0]["field"] == "memories.1.memoryType"
    _, listing = http(stack, "GET", "/v1/users/u2/memories")
    assert listing["items"] == []
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
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- walkthrough:begin -->", 1)[1].split("<!-- walkthrough:end -->", 1)[0]
    return block.split("```bash", 1)[1].rsplit("```", 1)[0]


def test_the_readme_walkthrough_saves_summarizes_and_injects(stack):
    """The README's save → summarize → inject script, run verbatim against the stack."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the README walk-through uses it")
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
    """The README's log → rollup → report search → inject script, verbatim, against the stack."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed: the README walk-through uses it")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
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


def wait_for(check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_given_a_stopped_stack_when_it_starts_again_then_every_kind_of_data_is_there(tmp_path):
    from datetime import date, timedelta

    monday = date.today() - timedelta(days=date.today().weekday() + 7)
    first = start_stack(tmp_path)
    try:  # one of each: a memory, a synonym, a hot-memory entry, a log message, a report
        assert http(first, "POST", "/v1/users/u1/memories", {"memory_type": "FACT", "content": "我住在杭州"})[0] == 201
        assert http(first, "POST", "/v1/synonyms", {"keyword": "网球", "synonyms": ["tennis"]})[0] in (200, 201)
        hot = {"value": "高血压研究", "priority": 10}
        assert http(first, "PUT", "/v1/projects/p1/hot-memory/meta/name", hot)[0] < 300
        status, _ = http(first, "POST", "/v1/projects/p1/conversations/c1/messages", {"messages": [
            {"role": "user", "content": "本周新入组3例受试者", "created_at": f"{monday}T09:00:00+08:00"}]})
        assert status < 300
        # The weekly rollup, through the queue and the workers' process, writes last week's report.
        status, _ = http(first, "POST", "/_local/invoke/RollupFunction",
                         {"source": "aws.scheduler", "time": f"{monday + timedelta(days=7)}T01:00:00Z"})
        assert status == 200, _
        assert wait_for(lambda: http(first, "GET", "/v1/projects/p1/reports")[1]["reports"])
    finally:
        printed = first.stop()
    assert first.process.returncode == 0, printed
    assert "stopped" in printed

    second = start_stack(tmp_path)
    try:
        _, memories = http(second, "GET", "/v1/users/u1/memories")
        assert [m["content"] for m in memories["items"]] == ["我住在杭州"]
        _, synonyms = http(second, "GET", "/v1/synonyms?keyword=%E7%BD%91%E7%90%83")
        assert "tennis" in json.dumps(synonyms, ensure_ascii=False)
        _, hot = http(second, "GET", "/v1/projects/p1/hot-memory")
        assert "高血压研究" in json.dumps(hot, ensure_ascii=False)
        _, found = http(second, "POST", "/v1/projects/p1/conversations/search", {"query": "入组"})
        assert "本周新入组3例受试者" in json.dumps(found, ensure_ascii=False)
        _, reports = http(second, "GET", "/v1/projects/p1/reports")
        assert len(reports["reports"]) == 1
    finally:
        second.stop()
