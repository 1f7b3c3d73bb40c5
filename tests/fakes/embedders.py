"""Embedders that need no model: deterministic vectors from the text."""

from __future__ import annotations

import hashlib
import re

import numpy as np


class HashingEmbedder:
    """Bag-of-words vectors (each word hashed to one of `dimension` dimensions): texts sharing words are
    similar. Records the queries it embeds."""

    model_id = "hashing-test"

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension
        self.queries: list[str] = []

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
        return vector / max(float(np.linalg.norm(vector)), 1.0)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self._vector(text)


class HashEmbedder:
    """Deterministic stand-in for the Embedder port: same text, same unit vector."""

    model_id = "test-hash-v1"
    dimension = 8

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def _vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
        vector = np.random.default_rng(seed).normal(size=self.dimension).astype(np.float32)
        return vector / np.linalg.norm(vector)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.embedded.extend(texts)
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


class FixedEmbedder:
    """Queries embed to the first axis; documents are never embedded (every memory carries its vector)."""

    def __init__(self, model_id: str = "model-a", dimension: int = 8) -> None:
        self.model_id, self.dimension = model_id, dimension

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        raise AssertionError(f"documents were embedded: {texts}")

    def embed_query(self, text: str) -> np.ndarray:
        return np.eye(self.dimension, dtype=np.float32)[0]
