"""Placeholders, the recall decision, keyword extraction and BM25."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.domain.bm25 import Bm25Index
from agent_memory.domain.keywords import extract_keywords
from agent_memory.domain.models import Memory, MemoryType
from agent_memory.domain.placeholders import find_placeholders, resolve
from agent_memory.domain.text import tokenize
from agent_memory.services.recall import IntentType, RecallRequest, analyze
from agent_memory.services.search import summary_of

T = datetime(2026, 2, 5, tzinfo=UTC)
CMD = Memory(memory_key="mem_01kf0000000000000000000001", tenant_id="t", user_id="u", memory_type=MemoryType.FACT,
             content="python train.py --epochs 100", importance=70, content_hash="h", created_at=T, updated_at=T,
             valid_from=T, metadata={"summary": "训练命令", "epochs": 100, "host": "gpu-1"})


def lookup(keys):
    return {k: CMD for k in keys if k == CMD.memory_key}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"run [memory:{CMD.memory_key}]", "run 训练命令"),
        (f"run [memory:{CMD.memory_key}:summary]", "run 训练命令"),
        (f"[memory:{CMD.memory_key}:full] now", "python train.py --epochs 100 now"),
        (f"host=[memory:{CMD.memory_key}:meta:host] epochs=[memory:{CMD.memory_key}:meta:epochs]",
         "host=gpu-1 epochs=100"),
        (f"[memory:{CMD.memory_key}:meta:nope]", "[ERROR: Metadata field nope not found]"),
        ("[memory:mem_missing]", "[ERROR: Memory mem_missing not found]"),
        ("no placeholders [memory:] here", "no placeholders [memory:] here"),
    ],
)
def test_placeholders_resolve_or_say_what_is_missing(text, expected):
    resolved, _, _ = resolve(text, lookup, summary_of)
    assert resolved == expected


def test_missing_keys_are_reported():
    _, found, missing = resolve("[memory:a-1] [memory:b-2:full]", lookup, summary_of)
    assert [p.key for p in found] == ["a-1", "b-2"] and missing == ["a-1", "b-2"]
    assert find_placeholders("[memory:k:meta:f]")[0].metafield == "f"


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("还是按之前的方案处理吧", IntentType.TASK_CONTINUATION),
        ("let's do it as before", IntentType.TASK_CONTINUATION),
        ("重新执行上次的训练命令", IntentType.COMMAND_EXECUTION),
        ("我上次说的那个配置是什么?", IntentType.INFORMATION_SEEKING),
        ("What did I tell you about my sister last time?", IntentType.INFORMATION_SEEKING),
        ("按我的习惯来安排", IntentType.PREFERENCE_BASED),
        ("I usually prefer morning flights", IntentType.PREFERENCE_BASED),
        ("今天天气不错", IntentType.GENERAL_CHAT),
        ("hello there", IntentType.GENERAL_CHAT),
    ],
)
def test_recall_decision_reads_the_cues(message, intent):
    decision = analyze(RecallRequest(message=message))
    assert decision.intent_type is intent
    assert decision.needs_recall is (intent is not IntentType.GENERAL_CHAT)


def test_recall_at_conversation_start_always_loads_and_queries_drop_cue_words():
    assert analyze(RecallRequest(message="hello", context_type="initialization")).needs_recall
    decision = analyze(RecallRequest(message="还是按之前说的高才通方案吧"))
    assert "高才通方案" in decision.keywords
    assert all("之前" not in q for q in decision.search_queries)


def test_keywords_are_whole_units_with_weights():
    terms = {k.term: k.weight for k in extract_keywords("对高才通B类非常感兴趣")}
    assert "高才通b类" in terms and max(terms.values()) == 1.0
    assert [k.term for k in extract_keywords("the and of")] == []


def test_bm25_prefers_rarer_terms_and_shorter_documents():
    index = Bm25Index(["caroline went to the support group", "melanie painted a lake",
                       "caroline painted", "a very long text about painting lakes and lakes and more lakes"])
    scores = index.scores(tokenize("support group"))
    assert scores.argmax() == 0 and scores[1] == 0
    assert index.scores(tokenize("painted"))[2] > index.scores(tokenize("painted"))[3]


def test_recall_reads_urgency_and_complexity():
    assert analyze(RecallRequest(message="马上按上次的配置重新部署")).urgency == "high"
    assert analyze(RecallRequest(message="rerun the training script", context_type="command")).urgency == "high"
    assert analyze(RecallRequest(message="今天天气不错")).urgency == "low"
    long = ("Last time we discussed the visa, the budget and the schools; what did I say about the budget, "
            "which school did I prefer, and when did I plan to move?")
    assert analyze(RecallRequest(message=long)).is_complex_query
    assert not analyze(RecallRequest(message="what did I say about tennis?")).is_complex_query


def test_a_dialogue_query_is_embedded_by_its_last_lines_when_configured():
    from agent_memory.services.search import last_lines

    dialogue = "你好\n\n最近怎么样？\n我上周去了杭州\n还记得我们聊过的那家餐厅吗"

    assert last_lines(dialogue, 2) == "我上周去了杭州\n还记得我们聊过的那家餐厅吗"
    assert last_lines(dialogue, 0) == dialogue
    assert last_lines("one line", 2) == "one line"


def test_prefetch_starts_the_text_the_search_embeds_and_nothing_for_a_keyword_search():
    from agent_memory.bootstrap import build_services
    from agent_memory.services.search import SearchRequest
    from agent_memory.settings import Settings
    from tests.fakes.store import InMemoryMemoryStore

    class Embedder:
        model_id, dimension = "recording", 2

        def __init__(self) -> None:
            self.prefetched: list[str] = []

        def prefetch(self, text: str) -> None:
            self.prefetched.append(text)

    embedder = Embedder()
    search = build_services(Settings(memory_search_query_vector_lines=2), store=InMemoryMemoryStore(),
                            embedder=embedder, synonyms=None).search

    search.prefetch(SearchRequest(query="user: hi\nassistant: hello\nuser: which visa fits me?"))
    search.prefetch(SearchRequest(query="which visa", search_mode="keyword"))

    assert embedder.prefetched == ["assistant: hello\nuser: which visa fits me?"]


def test_a_search_starts_its_query_embedding_before_the_index_reads_and_waits_for_it_last():
    import numpy as np

    from agent_memory.bootstrap import build_services
    from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
    from agent_memory.domain.vectors import encode_vector
    from agent_memory.services.search import SearchRequest
    from agent_memory.settings import Settings
    from tests.fakes.store import InMemoryMemoryStore

    events: list[str] = []

    class Store(InMemoryMemoryStore):
        def versions(self, user: ScopeRef):  # type: ignore[no-untyped-def]
            events.append("index reads the version")
            return super().versions(user)

    class Embedder:
        model_id, dimension = "recording", 2

        def prefetch(self, text: str) -> None:
            events.append(f"prefetch {text}")

        def embed_documents(self, texts: list[str]) -> np.ndarray:
            return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))

        def embed_query(self, text: str) -> np.ndarray:
            events.append(f"embed {text}")
            return np.array([1.0, 0.0], dtype=np.float32)

    store, user = Store(), ScopeRef(tenant_id="t", user_id="u")
    services = build_services(Settings(), store=store, embedder=Embedder(), synonyms=None)
    store.save_many(user, [NewMemory(memory_type=MemoryType.FACT, content="Caroline went hiking",
                                     embedding=encode_vector(np.array([1.0, 0.0], dtype=np.float32)),
                                     embedding_model="recording")])
    events.clear()

    found = services.search.search(user, SearchRequest(query="hiking", search_mode="hybrid", min_relevance_score=0))

    assert [r.content_preview for r in found.results] == ["Caroline went hiking"]
    assert events[0] == "prefetch hiking" and events[-1] == "embed hiking"
    assert "index reads the version" in events[1:-1]
