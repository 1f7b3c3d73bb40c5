"""The query cache: a repeated query embedded once in a bounded cache, one embedding per text under way, and
prefetches that searches find."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from agent_memory.adapters.embeddings.query_cache import QueryCachingEmbedder
from agent_memory.errors import EmbeddingUnavailable


class SlowEmbedder:
    """Counts queries; each waits for `release` (set by default), and `fail` makes the next one raise."""

    model_id, dimension = "slow", 3

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.release = threading.Event()
        self.release.set()
        self.started = threading.Event()
        self.fail = False

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 3), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        self.started.set()
        self.release.wait(5)
        if self.fail:
            self.fail = False
            raise EmbeddingUnavailable("the model is down")
        return np.array([len(text), 1, 0], dtype=np.float32)


def test_given_the_same_text_asked_at_once_then_it_is_embedded_once_and_everyone_gets_that_vector():
    inner = SlowEmbedder()
    inner.release.clear()
    embedder = QueryCachingEmbedder(inner)

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(embedder.embed_query, "高才通") for _ in range(4)]
        inner.started.wait(5)
        time.sleep(0.05)  # the other three are waiting on the first
        inner.release.set()
        vectors = [f.result() for f in futures]

    assert inner.queries == ["高才通"]
    assert all(v is vectors[0] for v in vectors) and not vectors[0].flags.writeable


def test_given_the_embedding_fails_then_the_waiters_get_its_error_and_the_next_ask_tries_again():
    inner = SlowEmbedder()
    inner.release.clear()
    inner.fail = True
    embedder = QueryCachingEmbedder(inner)

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(embedder.embed_query, "q")
        inner.started.wait(5)
        second = pool.submit(embedder.embed_query, "q")
        time.sleep(0.05)
        inner.release.set()
        for future in (first, second):
            with pytest.raises(EmbeddingUnavailable):
                future.result()

    assert embedder.embed_query("q")[0] == 1.0
    assert inner.queries == ["q", "q"]


def test_given_a_prefetch_then_the_later_ask_gets_its_vector_without_embedding_again():
    inner = SlowEmbedder()
    inner.release.clear()
    embedder = QueryCachingEmbedder(inner)

    embedder.prefetch("what visa suits me?")
    inner.started.wait(5)
    embedder.prefetch("what visa suits me?")  # under way: nothing more
    threading.Timer(0.05, inner.release.set).start()
    vector = embedder.embed_query("what visa suits me?")  # waits for the prefetch
    embedder.prefetch("what visa suits me?")  # cached: nothing more

    assert vector[0] == len("what visa suits me?")
    assert inner.queries == ["what visa suits me?"]


def test_given_a_prefetch_that_fails_then_nothing_raises_until_the_caller_asks_and_embeds_it_itself():
    inner = SlowEmbedder()
    inner.fail = True
    embedder = QueryCachingEmbedder(inner)

    embedder.prefetch("q")
    assert embedder._prefetcher is not None
    embedder._prefetcher.submit(lambda: None).result(5)  # one thread, in order: the prefetch is over

    assert embedder.embed_query("q")[0] == 1.0  # the failure was not cached
    assert inner.queries == ["q", "q"]


class QueryCountingEmbedder:
    model_id, dimension = "counting", 3

    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 3), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return np.array([len(text), 0, 0], dtype=np.float32)


def test_a_repeated_query_is_embedded_once_and_the_cache_stays_bounded():
    inner = QueryCountingEmbedder()
    embedder = QueryCachingEmbedder(inner, max_queries=2)

    first = embedder.embed_query("高才通")
    again = embedder.embed_query("高才通")
    embedder.embed_query("b")
    embedder.embed_query("c")  # evicts 高才通, the least recently used
    embedder.embed_query("高才通")

    assert inner.queries == ["高才通", "b", "c", "高才通"]
    assert again is first and not first.flags.writeable
    assert embedder.embed_documents(["x"]).shape == (1, 3)
