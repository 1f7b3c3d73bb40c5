"""Compact vector storage: float16 little-endian bytes (half the size of float32, ample precision for cosine)."""

from __future__ import annotations

import numpy as np


def encode_vector(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f2").tobytes()


def decode_vector(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<f2").astype(np.float32)
