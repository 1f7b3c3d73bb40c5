"""`make run`'s stack over real HTTP: a user exported with `make export` and imported with `make import` into a new
tenant answers the same searches with the same results: English and Chinese memories, a field superseded twice,
the log, hot memory, memory-tool files and the tenant's synonyms."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from agent_memory_client import MemoryClient

from tests.e2e.stack import ROOT, Stack, running_stack, wait_for

pytestmark = pytest.mark.e2e

USER = "u-export"
SAVED = [
    ("FACT", "Lives in Leeds", "residence"), ("FACT", "Lives in York", "residence"),
    ("FACT", "Lives in Bath", "residence"),  # a field superseded twice
    ("FACT", "用户32岁", "age"), ("FACT", "用户33岁", "age"),
    ("PREFERENCE", "喜欢喝绿茶，不加糖", None), ("PREFERENCE", "Prefers short answers by email", None),
    ("FACT", "在深圳做前端开发，工作8年了", None), ("FACT", "Works as a nurse at a hospital in Chengdu", None),
    ("INTENT", "打算明年申请香港高才通计划", None), ("INTENT", "Plans to run a marathon in spring", None),
    ("FACT", "Has a cat called Miso", None), ("FACT", "对花生过敏", None),
]
QUERIES = ["where does the user live", "绿茶", "年龄", "email", "高才通", "TTPS", "marathon", "猫",
           "what is the user's job", "过敏", "Bath", "Leeds"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("stack-data")) as running:
        yield running


def make(action: str, stack: Stack, tenant: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """What `make export` / `make import` run, against this stack's port."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT), str(ROOT / "clients" /
                                                                                             "python")])}
    port = stack.url.rsplit(":", 1)[1]
    return subprocess.run([sys.executable, "-m", "local.export", action, "--tenant", tenant, "--user", USER,
                           "--port", port, *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                          check=True)


def seeded(stack: Stack, tenant: str) -> MemoryClient:
    memory = MemoryClient(stack.url, tenant_id=tenant, max_retries=0)
    for memory_type, content, field in SAVED:
        memory.save(USER, memory_type=memory_type, content=content, field=field)
    now = datetime.now(UTC).replace(microsecond=0)
    memory.log("users", USER, "c-1", [
        {"role": "user", "content": "我想申请高才通，需要准备什么材料？", "message_id": "m-1",
         "created_at": (now - timedelta(minutes=5)).isoformat()},
        {"role": "assistant", "content": "You need your degree certificate and proof of income.", "message_id": "m-2",
         "created_at": (now - timedelta(minutes=4)).isoformat()}])
    memory.set_hot_memory("users", USER, "status", "签证进度", "材料已递交", priority=5)
    memory.memory_tool(USER, {"command": "create", "path": "/memories/客户/偏好.md", "file_text": "喜欢邮件沟通\n"})
    memory.add_synonyms("TTPS", ["高才通"], similarity_score=0.95)
    return memory


def answers(memory: MemoryClient, query: str) -> list[tuple[str, str, float]]:
    results = memory.search(USER, query, limit=5)["results"]
    return [(r["memory_key"], r["content_preview"], round(r["relevance_score"], 3)) for r in results]


def access(memory: MemoryClient) -> dict[str, int]:
    return {m["memory_key"]: m["access_count"] for m in memory.iter_memories(USER)}


def test_given_a_user_exported_and_imported_into_a_new_tenant_then_it_answers_the_same_searches(stack, tmp_path):
    source_tenant, target_tenant = f"src-{uuid.uuid4().hex[:6]}", f"dst-{uuid.uuid4().hex[:6]}"
    source = seeded(stack, source_tenant)
    target = MemoryClient(stack.url, tenant_id=target_tenant, max_retries=0)

    exported = make("export", stack, source_tenant).stdout
    document = json.loads(exported)
    (tmp_path / "u.json").write_text(exported, encoding="utf-8")
    make("import", stack, target_tenant, "--file", str(tmp_path / "u.json"))
    again = make("import", stack, target_tenant, "--file", str(tmp_path / "u.json"))

    assert document["format"] == "agent-memory-export-file" and document["pages"][0]["format"] == "agent-memory-export"
    sections = ["memories", "memory_versions", "log", "hot_memory", "reports", "files", "synonyms"]
    nothing = str(dict.fromkeys(sections, 0))
    assert f"imported {nothing}" in again.stderr  # a second import stores nothing twice
    answered = 0
    for query in QUERIES:  # the same answers, query by query, once both users have recorded the same reads
        expected = answers(source, query)
        assert answers(target, query) == expected, query
        answered += bool(expected)
        assert wait_for(lambda: access(source) == access(target), timeout=20), query
    assert answered >= len(QUERIES) - 2
    residence = next(m for m in target.iter_memories(USER) if m["field"] == "residence")
    history = target.get_memory(USER, residence["memory_key"])["history"]
    assert [h["content"] for h in history] == ["Lives in Leeds", "Lives in York", "Lives in Bath"]
    assert target.load_context(USER, "年龄")["memories"] == source.load_context(USER, "年龄")["memories"]
    assert [r["content"] for r in target.search_conversations("users", USER, "高才通 材料")["results"]] == \
        [r["content"] for r in source.search_conversations("users", USER, "高才通 材料")["results"]]
    assert target.get_hot_memory("users", USER)["entries"] == source.get_hot_memory("users", USER)["entries"]
    assert target.memory_tool(USER, {"command": "view", "path": "/memories/客户/偏好.md"})["content"] == \
        source.memory_tool(USER, {"command": "view", "path": "/memories/客户/偏好.md"})["content"]
    assert target.get_synonyms("高才通")["synonyms"] == source.get_synonyms("高才通")["synonyms"]


def test_an_export_holds_nothing_of_another_tenant_or_user(stack):
    tenant = f"iso-{uuid.uuid4().hex[:6]}"
    mine = MemoryClient(stack.url, tenant_id=tenant, max_retries=0)
    mine.save(USER, memory_type="FACT", content="Mine: lives in Leeds")
    mine.save("someone-else", memory_type="FACT", content="Neighbour's secret")
    MemoryClient(stack.url, tenant_id=f"{tenant}-x", max_retries=0).save(USER, memory_type="FACT",
                                                                        content="Other tenant's secret")

    text = json.dumps(list(mine.iter_export("users", USER)), ensure_ascii=False)

    assert "Mine: lives in Leeds" in text and "secret" not in text


def test_exporting_without_a_user_is_refused_before_anything_is_read() -> None:
    done = subprocess.run(["make", "--no-print-directory", "export", "TENANT=acme"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={k: v for k, v in os.environ.items() if k != "MAKEFLAGS"},
                          check=False)

    assert done.returncode != 0 and "usage: make export" in done.stderr and done.stdout == ""
