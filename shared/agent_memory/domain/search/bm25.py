"""Okapi BM25 over one user's memories, with the shared analyser (pure, in memory).

Postings are kept flat (one array of documents and one of term frequencies, sliced per term), so an
index can be saved as its `Bm25State` and loaded back without tokenising a single document again.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agent_memory.domain.text.text import tokenize

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class Bm25State:
    """Everything scoring needs: term t's postings are docs/freqs[offsets[i]:offsets[i + 1]], i = its
    position in `terms`; `lengths` are the documents' token counts."""

    terms: list[str]
    offsets: np.ndarray  # int64, len(terms) + 1
    docs: np.ndarray  # int32
    freqs: np.ndarray  # float32
    lengths: np.ndarray  # float32, one per document


class Bm25Index:
    def __init__(self, documents: Sequence[str]) -> None:
        lengths = np.zeros(len(documents), dtype=np.float32)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for index, document in enumerate(documents):
            counts = Counter(tokenize(document))
            lengths[index] = sum(counts.values())
            for term, count in counts.items():
                docs, freqs = postings.setdefault(term, ([], []))
                docs.append(index)
                freqs.append(count)
        sizes = np.fromiter((len(docs) for docs, _ in postings.values()), dtype=np.int64, count=len(postings))
        offsets = np.zeros(len(postings) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        self._load(Bm25State(
            terms=list(postings),
            offsets=offsets,
            docs=np.fromiter((d for docs, _ in postings.values() for d in docs), dtype=np.int32, count=offsets[-1]),
            freqs=np.fromiter((f for _, freqs in postings.values() for f in freqs), dtype=np.float32,
                              count=offsets[-1]),
            lengths=lengths,
        ))

    @classmethod
    def from_state(cls, state: Bm25State) -> Bm25Index:
        """The index a state was taken from, without its documents. ValueError if the arrays disagree."""
        if len(state.offsets) != len(state.terms) + 1 or len(state.docs) != len(state.freqs) \
                or (len(state.offsets) and int(state.offsets[-1]) != len(state.docs)):
            raise ValueError("inconsistent BM25 state")
        if len(state.docs) and (int(state.docs.min()) < 0 or int(state.docs.max()) >= len(state.lengths)):
            raise ValueError("BM25 postings name documents the state does not have")
        index = cls.__new__(cls)
        index._load(state)
        return index

    def _load(self, state: Bm25State) -> None:
        self.size = len(state.lengths)
        self._state = state
        self._positions = {term: i for i, term in enumerate(state.terms)}
        average = float(state.lengths.mean()) if self.size else 0.0
        self._norm = (K1 * (1 - B + B * state.lengths / average) if average
                      else np.full(self.size, K1, dtype=np.float32))

    def state(self) -> Bm25State:
        return self._state

    def rearranged(self, order: np.ndarray, added: Sequence[str]) -> Bm25Index:
        """The index `Bm25Index(documents)` would build of the documents in `order`, tokenising only the added
        ones: `order[i]` is the row here of the document that becomes row i, or -(j + 1) for `added[j]`. Rows
        `order` leaves out are dropped. Equal to a build from scratch: same postings, lengths and statistics."""
        state = self._state
        order = np.asarray(order, dtype=np.int64)
        kept = order >= 0
        new_row = np.full(self.size, -1, dtype=np.int64)
        new_row[order[kept]] = np.flatnonzero(kept)
        sizes = np.diff(state.offsets)
        term_of = np.repeat(np.arange(len(state.terms), dtype=np.int64), sizes)
        docs = new_row[state.docs] if len(state.docs) else np.zeros(0, dtype=np.int64)
        live = docs >= 0
        terms = list(state.terms)
        positions = dict(self._positions)
        lengths = np.zeros(len(order), dtype=np.float32)
        lengths[kept] = state.lengths[order[kept]]
        added_terms: list[int] = []
        added_docs: list[int] = []
        added_freqs: list[int] = []
        for row in np.flatnonzero(~kept).tolist():
            counts = Counter(tokenize(added[-int(order[row]) - 1]))
            lengths[row] = sum(counts.values())
            for term, count in counts.items():
                position = positions.get(term)
                if position is None:
                    position = positions[term] = len(terms)
                    terms.append(term)
                added_terms.append(position)
                added_docs.append(row)
                added_freqs.append(count)
        kept_terms = term_of[live]  # still in term order
        by_term = np.argsort(np.asarray(added_terms, dtype=np.int64), kind="stable")  # the few added, in term order
        new_terms = np.asarray(added_terms, dtype=np.int64)[by_term]
        at = np.searchsorted(kept_terms, new_terms, side="right")  # each added posting after its term's others
        all_terms = np.insert(kept_terms, at, new_terms)
        all_docs = np.insert(docs[live], at, np.asarray(added_docs, dtype=np.int64)[by_term])
        all_freqs = np.insert(state.freqs[live], at, np.asarray(added_freqs, dtype=np.float32)[by_term])
        postings = np.bincount(all_terms, minlength=len(terms))
        present = postings > 0  # a term whose every document left is dropped, as a build would never see it
        offsets = np.zeros(int(present.sum()) + 1, dtype=np.int64)
        np.cumsum(postings[present], out=offsets[1:])
        return Bm25Index.from_state(Bm25State(
            terms=[term for term, here in zip(terms, present.tolist(), strict=True) if here],
            offsets=offsets, docs=all_docs.astype(np.int32), freqs=all_freqs.astype(np.float32),
            lengths=lengths))

    def among(self, mask: np.ndarray) -> Bm25Subset:
        """The statistics an index of just the documents in `mask` (a boolean mask over them) would score with:
        made once and reused by every query over the same subset."""
        size = int(mask.sum())
        average = float(self._state.lengths[mask].mean()) if size else 0.0
        norm = (K1 * (1 - B + B * self._state.lengths / average) if average
                else np.full(self.size, K1, dtype=np.float32))
        return Bm25Subset(mask, size, norm)

    def scores(self, terms: Sequence[str], among: np.ndarray | Bm25Subset | None = None) -> np.ndarray:
        """Each document's BM25 score for the terms. `among` (a boolean mask over the documents, or its subset's
        statistics): score as an index of just those documents would (their count, document frequencies and
        average length), 0 for the rest."""
        result = np.zeros(self.size, dtype=np.float32)
        state = self._state
        size, norm, mask = self.size, self._norm, None
        if among is not None:
            subset = among if isinstance(among, Bm25Subset) else self.among(among)
            size, norm, mask = subset.size, subset.norm, subset.mask
        for term in set(terms):
            position = self._positions.get(term)
            if position is None:
                continue
            start, end = int(state.offsets[position]), int(state.offsets[position + 1])
            docs, freqs = state.docs[start:end], state.freqs[start:end]
            if mask is not None:
                kept = mask[docs]
                docs, freqs = docs[kept], freqs[kept]
                if not len(docs):
                    continue
            idf = math.log(1 + (size - len(docs) + 0.5) / (len(docs) + 0.5))
            result[docs] += idf * freqs * (K1 + 1) / (freqs + norm[docs])
        return result


@dataclass(frozen=True)
class Bm25Subset:
    """A subset of an index's documents and the statistics it is scored with (see Bm25Index.among)."""

    mask: np.ndarray  # bool, one per document of the index
    size: int
    norm: np.ndarray  # float32, each document's length normalisation within the subset
