"""The search-index snapshot codec: what goes in comes back (vectors to float16 precision); damage is detected."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from agent_memory.domain.keys import new_memory_key
from agent_memory.domain.models import Keyword, Memory, MemoryType, NewMemory, ScopeRef, new_memory_version
from agent_memory.domain.search.bm25 import Bm25Index, Bm25State
from agent_memory.domain.search.index_snapshot import (
    MAGIC,
    IndexSnapshot,
    SnapshotCorrupt,
    decode_snapshot,
    encode_snapshot,
)
from agent_memory.domain.text.text import tokenize

USER = ScopeRef(tenant_id="t", user_id="u")
TEXTS = [
    "我今年32岁，浙大计算机硕士毕业，对高才通B类非常感兴趣",
    "Caroline went to the LGBTQ support group on 7 May 2023",
    "用户在杭州做前端开发，年薪大概80万",
    "Melanie painted a sunrise over the lake",
]


def memories() -> list[Memory]:
    found = []
    for i, text in enumerate(TEXTS):
        memory = new_memory_version(USER, NewMemory(
            memory_type=[MemoryType.FACT, MemoryType.PREFERENCE, MemoryType.INTENT][i % 3], content=text,
            category="教育" if i == 0 else None, field="age" if i == 0 else None,
            keywords=[Keyword(term="高才通", weight=0.9), Keyword(term="hk", weight=0.3)] if i == 0 else [],
            metadata={"summary": "硕士", "score": 0.25, "nested": {"list": [1, "二"]}} if i == 0 else {},
            conversation_id="c-1" if i else None, context="上一轮：你多大了？" if i == 2 else None,
            embedding=b"\x00\x3c" * 4, embedding_model="m"), new_memory_key(), None)
        found.append(memory.model_copy(update={"access_count": i, "embedding": None}))
    return found


def unit_rows(n: int, dimension: int = 8, seed: int = 7) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, dimension)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def snapshot(vectors: np.ndarray | None) -> IndexSnapshot:
    found = memories()
    return IndexSnapshot(version=42, access_version=3, analyzer="a1", embedding_model="m" if vectors is not None
                         else None, memories=found, bm25=Bm25Index([m.content for m in found]).state(),
                         vectors=vectors, previous_turns=np.array([-1, 0, -1, 2], dtype=np.int32))


def test_given_chinese_and_english_memories_when_encoded_and_decoded_then_every_field_comes_back():
    original = snapshot(unit_rows(len(TEXTS)))

    decoded = decode_snapshot(encode_snapshot(original))

    assert decoded.memories[2] == original.memories[2]  # one read alone, as a search reads its candidates
    assert list(decoded.memories) == original.memories and len(decoded.memories) == len(TEXTS)
    assert decoded.memories[0].metadata == {"summary": "硕士", "score": 0.25, "nested": {"list": [1, "二"]}}
    assert (decoded.version, decoded.access_version, decoded.analyzer, decoded.embedding_model) == (42, 3, "a1", "m")
    assert decoded.previous_turns.tolist() == [-1, 0, -1, 2]


def test_given_a_decoded_bm25_state_then_it_scores_exactly_as_the_index_it_was_taken_from():
    original = snapshot(None)
    index = Bm25Index([m.content for m in original.memories])

    loaded = Bm25Index.from_state(decode_snapshot(encode_snapshot(original)).bm25)

    for query in ("高才通", "support group", "杭州 前端", "lake sunrise", "nothing matches"):
        assert np.array_equal(loaded.scores(tokenize(query)), index.scores(tokenize(query)))


def test_given_vectors_then_they_come_back_to_float16_precision_and_rank_alike():
    vectors = unit_rows(200, dimension=384)
    original = IndexSnapshot(version=1, access_version=0, analyzer="a", embedding_model="m",
                             memories=memories() * 50, bm25=Bm25Index(TEXTS * 50).state(), vectors=vectors,
                             previous_turns=np.full(200, -1, dtype=np.int32))

    decoded = decode_snapshot(encode_snapshot(original)).vectors

    assert decoded is not None and decoded.dtype == np.float32 and decoded.shape == (200, 384)
    assert np.abs(decoded - vectors).max() < 1e-3
    query = unit_rows(1, dimension=384, seed=3)[0]
    assert np.abs(decoded @ query - vectors @ query).max() < 2e-3
    assert list(np.argsort(-(decoded @ query))[:10]) == list(np.argsort(-(vectors @ query))[:10])


def test_given_no_memories_then_an_empty_snapshot_comes_back():
    empty = IndexSnapshot(version=1, access_version=0, analyzer="a", embedding_model=None, memories=[],
                          bm25=Bm25Index([]).state(), vectors=None, previous_turns=np.zeros(0, dtype=np.int32))

    assert list(decode_snapshot(encode_snapshot(empty)).memories) == []


def test_given_a_snapshot_written_for_another_memory_model_then_it_is_refused():
    payload = encode_snapshot(snapshot(None))
    start = payload.index(b'"memory_schema": "') + len(b'"memory_schema": "')

    with pytest.raises(SnapshotCorrupt, match="another Memory model"):
        decode_snapshot(payload[:start] + b"0" * 16 + payload[start + 16:])


def test_given_no_vectors_then_none_come_back():
    assert decode_snapshot(encode_snapshot(snapshot(None))).vectors is None


def test_given_vectors_then_they_take_less_room_than_float16_compressed_whole():
    vectors = unit_rows(500, dimension=384)
    payload = encode_snapshot(IndexSnapshot(version=1, access_version=0, analyzer="a", embedding_model="m",
                                            memories=[], bm25=Bm25Index([]).state(), vectors=vectors,
                                            previous_turns=np.zeros(0, dtype=np.int32)))

    assert len(payload) < len(zlib.compress(vectors.astype("<f2").tobytes(), 6))


def _damaged() -> dict[str, bytes]:
    payload = encode_snapshot(snapshot(unit_rows(len(TEXTS))))
    header_end = len(MAGIC) + 4 + int.from_bytes(payload[len(MAGIC):len(MAGIC) + 4], "little")
    flipped = bytearray(payload)
    flipped[header_end + 10] ^= 0xFF  # inside the compressed memories
    return {
        "empty": b"",
        "another file": b"PK\x03\x04" + payload[4:],
        "truncated": payload[:-100],
        "trailing bytes": payload + b"\x00",
        "a flipped byte": bytes(flipped),
        "a header that is not JSON": payload[:len(MAGIC) + 4] + b"\xff" + payload[len(MAGIC) + 5:],
        "another format": payload.replace(b'"format": 2', b'"format": 9', 1),
        "a count that disagrees": payload.replace(b'"count": 4', b'"count": 5', 1),
        "a neighbour outside": _with_section(payload, "previous_turns", np.array([-1, 0, -1, 9], dtype="<i4")),
    }


def _with_section(payload: bytes, name: str, values: np.ndarray) -> bytes:
    """The payload with one section's contents replaced (same length, so the header still fits)."""
    header_start = len(MAGIC) + 4
    header_end = header_start + int.from_bytes(payload[len(MAGIC):header_start], "little")
    offset = header_end
    for section, codec, length in json.loads(payload[header_start:header_end])["sections"]:
        if section == name:
            raw = zlib.compress(values.tobytes(), 3) if codec == "zlib" else values.tobytes()
            assert len(raw) == length, "a replacement of another length would need a new header"
            return payload[:offset] + raw + payload[offset + length:]
        offset += length
    raise AssertionError(f"no section {name}")


@pytest.mark.parametrize("damage", sorted(_damaged()))
def test_given_damaged_bytes_then_decoding_says_so_and_never_returns_a_partial_index(damage):
    with pytest.raises(SnapshotCorrupt):
        decode_snapshot(_damaged()[damage])


def test_given_postings_that_name_documents_beyond_the_index_then_the_state_is_refused():
    state = Bm25Index(TEXTS).state()
    broken = Bm25State(terms=state.terms, offsets=state.offsets, docs=state.docs + 100, freqs=state.freqs,
                       lengths=state.lengths)

    with pytest.raises(ValueError):
        Bm25Index.from_state(broken)
