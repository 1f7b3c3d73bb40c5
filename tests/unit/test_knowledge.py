"""A folder of documents as the intent context's SOPs or protocol knowledge base: chunking, search, and the
folder retriever (read once, read again when a document changes, bounded in size, embedded off the request)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent_memory.adapters.knowledge_folder import FolderRetriever
from agent_memory.adapters.retrievers import build_retriever
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.search.knowledge import KnowledgeChunk, KnowledgeIndex, chunk_document
from agent_memory.settings import Settings
from tests.fakes import embedders

ROOT = Path(__file__).resolve().parents[2]
WHO = ScopeRef(tenant_id="t-knowledge", user_id="u-knowledge")

QC_CHECKLIST = """# 签证档案质控清单

> 示例。

## 学历证明

- [ ] 毕业证和学位证扫描件齐全
- [ ] 非中英文证书附经认证的英文翻译件

## 工作经验证明

- [ ] 在职证明有签字和公司盖章
- [ ] 工作年限按申请前五年内累计计算

### 自雇

营业执照和股权结构。
"""

REVIEW_SOP = """# Document review

## Translations

Any document not in Chinese or English needs a certified English translation, signed on every page.

## Sign-off

A second reviewer signs off the file before submission.
"""


class CountingEmbedder(embedders.HashingEmbedder):
    """Records every text it embeds as a document."""

    def __init__(self) -> None:
        super().__init__()
        self.documents: list[str] = []

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.documents.extend(texts)
        return super().embed_documents(texts)


# ---- chunking ----

def test_given_a_markdown_document_then_each_section_is_a_chunk_with_its_file_and_heading_trail():
    chunks = chunk_document("sop/qc.md", QC_CHECKLIST)
    assert [c.headings for c in chunks] == [
        ("签证档案质控清单",), ("签证档案质控清单", "学历证明"), ("签证档案质控清单", "工作经验证明"),
        ("签证档案质控清单", "工作经验证明", "自雇")]
    assert chunks[1].text == "- [ ] 毕业证和学位证扫描件齐全\n- [ ] 非中英文证书附经认证的英文翻译件"
    assert chunks[3].label == "sop/qc.md › 签证档案质控清单 › 工作经验证明 › 自雇"
    assert chunks[3].searchable.startswith("签证档案质控清单\n工作经验证明\n自雇\n")


def test_given_a_deeper_heading_then_a_sibling_heading_replaces_it_in_the_trail():
    chunks = chunk_document("a.md", "# A\n## B\n### C\nc\n## D\nd\n")
    assert [(c.headings, c.text) for c in chunks] == [(("A", "B", "C"), "c"), (("A", "D"), "d")]


def test_given_paragraphs_under_one_heading_then_they_are_packed_up_to_the_chunk_size():
    paragraphs = "\n\n".join(f"第{i}段。" + "内容" * 40 for i in range(6))
    chunks = chunk_document("a.md", f"# T\n\n{paragraphs}\n", max_chars=200)
    assert all(len(c.text) <= 200 for c in chunks)
    assert len(chunks) == 3 and chunks[0].text.count("\n\n") == 1  # two ~85-character paragraphs a chunk


def test_given_a_paragraph_longer_than_a_chunk_then_it_is_cut_at_sentence_ends():
    sentences = ["这是一句很长的说明" * 5 + "。" for _ in range(6)]
    chunks = chunk_document("a.txt", "".join(sentences), max_chars=100)
    assert all(len(c.text) <= 100 for c in chunks) and len(chunks) == 3
    assert all(c.text.endswith("。") for c in chunks)
    assert "".join(c.text for c in chunks) == "".join(sentences)


def test_given_a_sentence_longer_than_a_chunk_then_it_is_cut_at_the_chunk_size():
    chunks = chunk_document("a.txt", "x" * 250, max_chars=100)
    assert [len(c.text) for c in chunks] == [100, 100, 50]


def test_given_plain_text_or_a_heading_inside_fenced_code_then_no_heading_is_made():
    assert [c.headings for c in chunk_document("a.txt", "one\n\ntwo\n")] == [()]
    chunks = chunk_document("a.md", "# T\n\n```\n# not a heading\n\nstill code\n```\n")
    assert [c.headings for c in chunks] == [("T",)] and "# not a heading" in chunks[0].text


def test_given_an_empty_document_then_it_has_no_chunks():
    assert chunk_document("a.md", "") == [] and chunk_document("a.md", "# Only a title\n\n\n") == []


# ---- search ----

def index_of(*documents: tuple[str, str]) -> KnowledgeIndex:
    return KnowledgeIndex([c for source, text in documents for c in chunk_document(source, text)])


def test_given_a_chinese_question_then_the_section_that_answers_it_comes_first():
    index = index_of(("qc.md", QC_CHECKLIST), ("review.md", REVIEW_SOP))
    hits = index.search("核对工作年限", 3)
    assert hits[0].chunk.headings[-1] == "工作经验证明" and hits[0].score == 1.0
    assert index.search("学历证明要查什么", 1)[0].chunk.headings[-1] == "学历证明"  # the heading is searched


def test_given_an_english_question_then_stemmed_words_find_the_section():
    hits = index_of(("qc.md", QC_CHECKLIST), ("review.md", REVIEW_SOP)).search("translated documents signing", 2)
    assert hits[0].chunk.label == "review.md › Document review › Translations"


def test_given_no_shared_word_and_no_vectors_then_nothing_is_found():
    assert index_of(("review.md", REVIEW_SOP)).search("天气", 3) == []
    assert KnowledgeIndex([]).search("anything", 3) == []


def test_given_vectors_then_a_chunk_without_a_shared_word_can_still_be_found():
    chunks = [KnowledgeChunk("a.md", ("A",), "alpha"), KnowledgeChunk("b.md", ("B",), "beta")]
    index = KnowledgeIndex(chunks, np.eye(2, dtype=np.float32))
    hits = index.search("gamma", 2, query_vector=np.array([0.0, 1.0], dtype=np.float32))
    assert [h.chunk.source for h in hits] == ["b.md"] and hits[0].score == 0.5
    with pytest.raises(ValueError, match="one vector per chunk"):
        KnowledgeIndex(chunks, np.eye(3, dtype=np.float32))


# ---- the folder retriever ----

def write(path: Path, text: str, mtime_ns: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def test_given_a_folder_then_items_carry_the_content_its_file_and_heading_and_a_similarity(tmp_path):
    write(tmp_path / "qc.md", QC_CHECKLIST)
    write(tmp_path / "nested" / "review.md", REVIEW_SOP)
    write(tmp_path / "notes.json", '{"学历证明": 1}')  # not a document
    write(tmp_path / ".hidden.md", "# 学历证明\n学历证明")
    items = FolderRetriever(tmp_path, max_bytes=100_000).retrieve(WHO, "学历证明", 5)
    assert items[0] == {"content": "- [ ] 毕业证和学位证扫描件齐全\n- [ ] 非中英文证书附经认证的英文翻译件",
                        "source": "qc.md › 签证档案质控清单 › 学历证明", "similarity": 1.0}
    assert {i["source"].split(" › ")[0] for i in items} <= {"qc.md", "nested/review.md"}
    sources = {c.source for c in FolderRetriever(tmp_path, max_bytes=100_000).index().chunks}
    assert sources == {"qc.md", "nested/review.md"}


def test_given_a_changed_added_or_removed_document_then_the_next_question_reads_the_folder_again(tmp_path):
    write(tmp_path / "qc.md", "# 质控\n\n护照有效期不少于6个月。", mtime_ns=1_000_000_000)
    retriever = FolderRetriever(tmp_path, max_bytes=100_000)
    first = retriever.index()
    assert retriever.index() is first  # unchanged: not read again
    write(tmp_path / "qc.md", "# 质控\n\n护照有效期不少于12个月。", mtime_ns=2_000_000_000)
    assert retriever.retrieve(WHO, "护照有效期", 1)[0]["content"] == "护照有效期不少于12个月。"
    write(tmp_path / "extra.md", "# 补件\n\n补件须在通知期限内提交。")
    assert retriever.retrieve(WHO, "补件期限", 1)[0]["source"] == "extra.md › 补件"
    (tmp_path / "extra.md").unlink()
    assert retriever.retrieve(WHO, "补件期限", 1) == []


def test_given_documents_past_the_size_limit_then_they_are_left_out_in_path_order(tmp_path):
    write(tmp_path / "a.md", "# A\n\n" + "甲" * 300)  # 905 bytes
    write(tmp_path / "b.md", "# B\n\n" + "乙" * 300)
    write(tmp_path / "c.md", "# C\n\n丙丙")
    retriever = FolderRetriever(tmp_path, max_bytes=1_000)
    assert sorted({c.source for c in retriever.index().chunks}) == ["a.md", "c.md"]


def test_given_no_folder_then_nothing_is_found_until_it_appears(tmp_path):
    retriever = FolderRetriever(tmp_path / "missing", max_bytes=1_000)
    assert retriever.retrieve(WHO, "护照", 3) == []
    write(tmp_path / "missing" / "qc.md", "# 质控\n\n护照有效期。")
    assert retriever.retrieve(WHO, "护照", 3)[0]["source"] == "qc.md › 质控"


def test_given_an_embedder_then_the_chunks_are_embedded_off_the_request_and_only_new_ones_again(tmp_path):
    write(tmp_path / "qc.md", QC_CHECKLIST, mtime_ns=1_000_000_000)
    embedder = CountingEmbedder()
    retriever = FolderRetriever(tmp_path, max_bytes=100_000, embedder=lambda: embedder)
    assert retriever.retrieve(WHO, "学历证明", 1)[0]["source"].endswith("学历证明")  # keyword search meanwhile
    assert retriever.wait_for_embeddings(timeout=10) and retriever.index().has_vectors
    assert len(embedder.documents) == 4
    retriever.retrieve(WHO, "学历证明", 1)
    assert embedder.queries == ["学历证明"]  # the question is embedded once the chunks are
    write(tmp_path / "qc.md", QC_CHECKLIST + "\n## 申请表格\n\n声明页亲笔签名。\n", mtime_ns=2_000_000_000)
    assert not retriever.index().has_vectors  # the new chunk has none yet
    assert retriever.wait_for_embeddings(timeout=10) and retriever.index().has_vectors
    assert embedder.documents[4:] == ["签证档案质控清单\n申请表格\n声明页亲笔签名。"]


def test_given_an_embedder_that_fails_then_keyword_search_goes_on(tmp_path):
    class Failing(CountingEmbedder):
        def embed_documents(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("model unavailable")

    write(tmp_path / "qc.md", QC_CHECKLIST)
    retriever = FolderRetriever(tmp_path, max_bytes=100_000, embedder=lambda: Failing())
    retriever.index()
    assert retriever.wait_for_embeddings(timeout=10) and not retriever.index().has_vectors
    assert retriever.retrieve(WHO, "盖章", 1)[0]["source"].endswith("工作经验证明")


def test_given_a_url_and_a_folder_then_the_url_wins_and_without_either_there_is_no_retriever(tmp_path):
    from agent_memory.adapters.retriever_http import HttpRetriever

    settings = Settings(context_knowledge_dir_max_bytes=5_000)
    assert isinstance(build_retriever(settings, url="http://kb.invalid/sop", directory=str(tmp_path)), HttpRetriever)
    assert isinstance(build_retriever(settings, url="", directory=str(tmp_path)), FolderRetriever)
    assert build_retriever(settings, url="", directory="") is None


def test_the_shipped_samples_answer_a_qc_task_and_a_protocol_question():
    sop = FolderRetriever(ROOT / "local" / "knowledge" / "sop", max_bytes=1_000_000)
    protocol = FolderRetriever(ROOT / "local" / "knowledge" / "protocol", max_bytes=1_000_000)
    assert sop.retrieve(WHO, "核对工作经验证明", 1)[0]["source"] == \
        "visa-file-qc-checklist.md › 签证申请档案质控清单（QC） › 三、工作经验证明"
    assert protocol.retrieve(WHO, "高才通B类的申请条件", 1)[0]["source"] == \
        "service-protocol-qa.md › 服务方案问答（高才通 / 优才） › 高才通计划的申请条件是什么？"


def intent_service(retrievers: dict[str, Any]) -> Any:
    """Inject with only the intent_context block, over memory layers holding nothing."""
    from concurrent.futures import ThreadPoolExecutor

    from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache
    from agent_memory.domain.inject.summary import extractive_summary
    from agent_memory.services.blocks.memory_layers import IntentContextSource
    from agent_memory.services.inject import InjectLimits, InjectService
    from tests.fakes.inject import NOW, empty_layers

    source = IntentContextSource(layers=empty_layers(retrievers))
    return InjectService(sources=[source], cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                         executor=ThreadPoolExecutor(1), summarizer=lambda: extractive_summary,
                         limits=InjectLimits(), clock=lambda: NOW)


def test_given_a_qc_task_then_the_intent_block_lists_the_folder_chunk_with_its_lines_kept(tmp_path):
    from agent_memory.api.inject import inject_context
    from tests.fakes.inject import context_text, request

    write(tmp_path / "qc.md", QC_CHECKLIST)
    service = intent_service({"sop": FolderRetriever(tmp_path, max_bytes=100_000)})
    result = inject_context(service, WHO, request(user_id=WHO.user_id, current_user_message="质控这份档案",
                                                  intent={"type": "QC_TASK", "query": "翻译件"}))
    assert ("## 相关SOP\n- [qc.md › 签证档案质控清单 › 学历证明] - [ ] 毕业证和学位证扫描件齐全\n"
            "  - [ ] 非中英文证书附经认证的英文翻译件\n") in context_text(result)


def test_given_hard_wrapped_lines_then_a_paragraph_is_one_line_and_list_items_stay_lines():
    text = ("# T\n\nA second reviewer signs off\nthe file before submission.\n\n"
            "材料齐全后约2至4周完成\n文件准备。\n\n- one item\n  continued\n- two\n\n```\nkeep\nthese lines\n```\n")
    assert chunk_document("a.md", text) == [KnowledgeChunk("a.md", ("T",), (
        "A second reviewer signs off the file before submission.\n\n材料齐全后约2至4周完成文件准备。\n\n"
        "- one item continued\n- two\n\n```\nkeep\nthese lines\n```"))]
