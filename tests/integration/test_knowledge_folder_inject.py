"""POST /v1/context/inject through the Lambda handler on moto, with the SOPs and the protocol knowledge base
read from local folders (CONTEXT_SOP_DIR, CONTEXT_PROTOCOL_DIR) instead of a knowledge service."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import reset_containers

INJECT = "/v1/context/inject"

QC_CHECKLIST = """# 签证档案质控清单

## 身份文件

- [ ] 护照有效期自递交日起不少于6个月

## 学历证明

- [ ] 毕业证和学位证扫描件齐全，学校名称与申请表一致
- [ ] 非中英文证书附经认证的英文翻译件
"""
REVIEW_SOP = """# Document review SOP

## Sign-off

A second reviewer signs off the file in the case tracker before submission.
"""
PROTOCOL_QA = """# 服务方案问答

## 高才通B类的申请条件是什么？

持有全球百强大学学士学位，并在申请前五年内累积至少三年工作经验。

## 入境处要求补件怎么办？

经办顾问在1个工作日内通知客户，列明所需文件和截止日期。
"""


@pytest.fixture
def folders(api: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    for relative, text in (("sop/qc.md", QC_CHECKLIST), ("sop/review.md", REVIEW_SOP),
                           ("protocol/qa.md", PROTOCOL_QA)):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    monkeypatch.setenv("CONTEXT_SOP_DIR", str(tmp_path / "sop"))
    monkeypatch.setenv("CONTEXT_PROTOCOL_DIR", str(tmp_path / "protocol"))
    reset_containers()
    return api


def intent_block(body: dict[str, Any]) -> str:
    """The intent_context block's text in the injected context (the pair placement's first message)."""
    found = re.search(r"<intent_context>\n(.*?)\n</intent_context>", body["messages"][0]["content"], re.S)
    assert found, body["messages"][0]["content"]
    return found.group(1)


def ask(message: str, intent: dict[str, str]) -> dict[str, Any]:
    return {"user_id": "u-knowledge", "conversation_id": "c-1", "current_user_message": message, "intent": intent}


def test_given_a_qc_task_then_inject_adds_the_sop_section_it_is_about(folders):
    qc_task = {"type": "QC_TASK", "query": "学历证明和翻译件"}
    response = folders.call("POST", INJECT, ask("帮我质控一下这份档案", qc_task))

    assert response.status == 200, response.body
    block = intent_block(response.body)
    assert block.startswith("## 相关SOP\n- [qc.md › 签证档案质控清单 › 学历证明] - [ ] 毕业证和学位证扫描件齐全，"
                            "学校名称与申请表一致\n  - [ ] 非中英文证书附经认证的英文翻译件")
    assert "方案知识库" not in block


def test_given_a_protocol_question_then_inject_adds_the_answer_from_the_protocol_folder(folders):
    response = folders.call("POST", INJECT, ask("高才通B类需要什么条件？", {"type": "PROTOCOL_QA"}))

    assert response.status == 200, response.body
    block = intent_block(response.body)
    assert block.startswith("## 方案知识库\n- [qa.md › 服务方案问答 › 高才通B类的申请条件是什么？] "
                            "持有全球百强大学学士学位")
    assert "相关SOP" not in block


def test_given_a_knowledge_service_url_then_it_wins_over_the_folder(folders, monkeypatch):
    from tests.fakes.retriever_service import RetrieverService

    with RetrieverService(lambda path, body: [{"content": "SOP from the service", "source": "kb"}]) as service:
        monkeypatch.setenv("CONTEXT_SOP_URL", f"{service.url}/sop")
        reset_containers()
        response = folders.call("POST", INJECT, ask("质控", {"type": "QC_TASK", "query": "学历证明"}))

    assert intent_block(response.body) == "## 相关SOP\n- [kb] SOP from the service"


def test_given_the_question_as_the_last_user_turn_of_messages_then_every_block_reads_it(folders):
    folders.call("POST", "/v1/users/u-knowledge/memories", {"memoryType": "FACT", "content": "用户的学历证明是英文版"})
    body = {"user_id": "u-knowledge", "conversation_id": "c-2", "intent": {"type": "PROTOCOL_QA"},
            "messages": [{"role": "user", "content": [{"type": "text", "text": "高才通B类需要什么条件？"}]}]}

    response = folders.call("POST", INJECT, body)

    assert response.status == 200, response.body
    answer = "## 方案知识库\n- [qa.md › 服务方案问答 › 高才通B类的申请条件是什么？]"
    assert intent_block(response.body).startswith(answer)
    turns = [m for m in response.body["messages"] if m["role"] == "user"]
    assert sum("高才通B类需要什么条件" in str(m["content"]) for m in turns) == 1  # the question is not sent twice


def test_given_the_intent_context_route_then_a_qc_task_gets_hot_memory_and_the_sops(folders):
    project = "/v1/projects/p-knowledge"
    assert folders.call("PUT", f"{project}/hot-memory/status/enrolled",
                        {"value": "已入组12例", "priority": 5}).status in (200, 201)

    response = folders.call("POST", f"{project}/context/intent",
                            {"intent": {"type": "QC_TASK", "query": "学历证明和翻译件"}})

    assert response.status == 200, response.body
    assert [p["layer"] for p in response.body["parts"]] == ["hot_memory", "sop"]
    assert "## 相关SOP\n- [qc.md › 签证档案质控清单 › 学历证明]" in response.body["context"]


def test_given_the_intent_context_route_then_a_protocol_question_gets_the_protocol_knowledge_base(folders):
    response = folders.call("POST", "/v1/users/u-knowledge/context/intent",
                            {"intent": {"type": "PROTOCOL_QA", "query": "高才通B类需要什么条件？"}})

    assert response.status == 200, response.body
    assert [p["layer"] for p in response.body["parts"]] == ["protocol"]
    assert "持有全球百强大学学士学位" in response.body["context"]


def test_given_a_policy_question_and_no_knowledge_service_then_relevant_knowledge_comes_from_the_protocol_folder(
        folders):
    response = folders.call("POST", INJECT, {"user_id": "u-knowledge", "conversation_id": "c-3",
                                             "current_user_message": "高才通B类的申请条件是什么？"})

    assert response.status == 200, response.body
    assert "relevant_knowledge" in response.body["injected_contexts"]
    assert "持有全球百强大学学士学位" in response.body["messages"][0]["content"]


def test_given_a_protocol_question_then_the_protocol_folder_is_shown_once(folders):
    response = folders.call("POST", INJECT, ask("高才通B类的申请条件是什么？", {"type": "PROTOCOL_QA"}))

    assert response.status == 200, response.body
    assert "relevant_knowledge" not in response.body["injected_contexts"]
    assert response.body["messages"][0]["content"].count("持有全球百强大学学士学位") == 1
