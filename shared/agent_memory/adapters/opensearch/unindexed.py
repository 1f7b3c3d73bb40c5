"""BM25 scores of texts the index does not hold yet, as the index will give them once it holds them.

A memory written a moment ago is searched before the stream has indexed it (adapters/fresh_writes.py); its BM25
score must be on the scale of the index's own, or the ranking, which scales BM25 to the best score, would read it
as no match. OpenSearch analyses an artificial document with the index's own analyser and returns the index's term
and field statistics for its terms (`_mtermvectors` with `term_statistics`); the score is then BM25 over them as
the `text` field's term queries give it (OpenSearch's default, Lucene's LegacyBM25Similarity): per query term in
the text, idf x tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)), idf = ln(1 + (N - df + 0.5) / (df + 0.5)), N and
avgdl the field's, dl the text's length as Lucene's norm stores it (exact below 24 terms, past it kept to 4
significant bits). On an index of one shard this is the score a search gives the text once indexed, to float
precision; on several, the statistics are those of the shard the request lands on, as a search's own
query_then_fetch scores each shard's documents by that shard's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

K1 = 1.2  # Lucene's BM25Similarity defaults, the index's similarity
B = 0.75
_FREE_VALUES = 24  # lengths Lucene's norm stores exactly (SmallFloat.intToByte4)


def _int4_round_trip(value: int) -> int:
    """SmallFloat's longToInt4 then int4ToLong: the value kept to its 4 leading bits."""
    bits = value.bit_length()
    if bits < 4:
        return value
    shift = bits - 4
    return ((value >> shift) & 0x07 | 0x08) << shift


def stored_length(length: int) -> int:
    """A field's length as Lucene's norm keeps it (intToByte4, then byte4ToInt)."""
    if length < _FREE_VALUES:
        return length
    return _FREE_VALUES + _int4_round_trip(length - _FREE_VALUES)


def bm25(query_terms: Sequence[str], vector: dict[str, Any]) -> float:
    """The `text` field's score for the query's distinct terms, from one `_termvectors` answer of the field: the
    statistics are the index's without the text, so they are taken as they will be with it (one more document,
    its terms' frequencies one more, its length in the total)."""
    field_stats = vector.get("field_statistics") or {}
    terms = vector.get("terms") or {}
    if not terms:
        return 0.0
    length = sum(int(t.get("term_freq", 0)) for t in terms.values())
    documents = int(field_stats.get("doc_count", 0)) + 1
    average = (float(field_stats.get("sum_ttf", 0)) + length) / documents
    norm = K1 * ((1 - B) + B * stored_length(length) / average)
    score = 0.0
    for term in dict.fromkeys(query_terms):
        found = terms.get(term)
        if not found:
            continue
        frequency, df = int(found.get("term_freq", 0)), int(found.get("doc_freq", 0)) + 1
        idf = math.log(1 + (documents - df + 0.5) / (df + 0.5))
        score += idf * frequency * (K1 + 1) / (frequency + norm)
    return score


def termvectors_request(texts: Sequence[str]) -> dict[str, Any]:
    """One `_mtermvectors` body: each text as an artificial document of the `text` field."""
    return {"docs": [{"doc": {"text": text}, "fields": ["text"], "term_statistics": True, "field_statistics": True,
                      "positions": False, "offsets": False, "payloads": False} for text in texts]}


def unindexed_scores(client: Any, index: str, terms: Sequence[str], texts: Sequence[str], *,
                     on_error: Callable[[Exception], NoReturn]) -> list[float | None]:
    """Each text's score for the query terms in one `_mtermvectors` request (None: no term in it); `on_error`
    raises what the client raised as the tier's error."""
    if not texts or not terms:
        return [None] * len(texts)
    try:
        response = client.mtermvectors(index=index, body=termvectors_request(texts))
    except Exception as error:  # opensearch-py errors: translated (or re-raised) by the tier
        on_error(error)
    return [bm25(terms, (doc.get("term_vectors") or {}).get("text") or {}) or None for doc in response["docs"]]
