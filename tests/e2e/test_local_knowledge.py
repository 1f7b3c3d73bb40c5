"""`make run` over real HTTP: the intent context reads the shipped sample SOPs and protocol Q&A
(local/knowledge/) with no knowledge service configured."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.stack import Stack, running_stack

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("knowledge-stack")) as running:
        yield running


def intent_context(stack: Stack, message: str, intent: dict[str, str]) -> str:
    body = json.dumps({"user_id": "u-knowledge", "conversation_id": "c-1", "current_user_message": message,
                       "intent": intent}).encode()
    request = urllib.request.Request(f"{stack.url}/v1/context/inject", data=body, method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        result: dict[str, Any] = json.loads(response.read())
    found = re.search(r"<intent_context>\n(.*?)\n</intent_context>", result["messages"][0]["content"], re.S)
    assert found, result["messages"][0]["content"]
    return found.group(1)


def test_given_a_qc_task_then_inject_over_http_adds_the_sample_sop_section(stack):
    block = intent_context(stack, "帮我质控这份高才通档案", {"type": "QC_TASK", "query": "学历证明和翻译件"})

    assert block.startswith("## 相关SOP\n- [visa-file-qc-checklist.md › 签证申请档案质控清单（QC） › 二、学历证明] "
                            "- [ ] 毕业证和学位证扫描件齐全")
    assert "  - [ ] 非中英文证书附经认证的英文翻译件" in block


def test_given_protocol_questions_then_each_gets_its_own_answer_from_the_sample_protocol_qa(stack):
    eligibility = intent_context(stack, "高才通B类需要什么条件？", {"type": "PROTOCOL_QA"})
    dependants = intent_context(stack, "Can my wife extend her stay together with me?", {"type": "PROTOCOL_QA"})

    assert eligibility.startswith("## 方案知识库\n- [service-protocol-qa.md › 服务方案问答（高才通 / 优才） › "
                                  "高才通计划的申请条件是什么？] A类：申请前一年全年收入达到港币250万元或以上。")
    assert dependants.startswith("## Protocol knowledge base\n- [renewal-protocol-qa.md › Protocol Q&A: extensions "
                                 "of stay and dependants › Can dependants extend with the main applicant?] Yes. The "
                                 "spouse and unmarried children under 18 extend together with the main applicant; "
                                 "submit their applications in the same batch")
