"""Okapi BM25 over one user's memories, with the shared analyser (pure, in memory)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from agent_memory.domain.text import tokenize

K1 = 1.2
B = 0.75


class Bm25Index:
    def __init__(self, documents: Sequence[str]) -> None:
        self.size = len(documents)
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        lengths = np.zeros(self.size, dtype=np.float32)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for index, document in enumerate(documents):
            counts = Counter(tokenize(document))
            lengths[index] = sum(counts.values())
            for term, count in counts.items():
                docs, freqs = postings.setdefault(term, ([], []))
                docs.append(index)
                freqs.append(count)
        average = float(lengths.mean()) if self.size else 0.0
        self._norm = K1 * (1 - B + B * lengths / average) if average else np.full(self.size, K1, dtype=np.float32)
        for term, (docs, freqs) in postings.items():
            self._postings[term] = (np.asarray(docs, dtype=np.int32), np.asarray(freqs, dtype=np.float32))

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        result = np.zeros(self.size, dtype=np.float32)
        for term in set(terms):
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs, freqs = posting
            idf = math.log(1 + (self.size - len(docs) + 0.5) / (len(docs) + 0.5))
            result[docs] += idf * freqs * (K1 + 1) / (freqs + self._norm[docs])
        return result
