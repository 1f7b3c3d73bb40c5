"""A user's search index as bytes: what a cold container loads instead of reading and indexing every memory.

Layout: MAGIC, the header's length (4 bytes, little-endian), the header (JSON), then its sections back to
back. The memories (a JSON array, without embeddings, with each row's offset) and the BM25 postings are
zlib-compressed. Vectors are float16 split into two planes: the high bytes (sign, exponent, top of the
mantissa) compress to ~a third, the low bytes are noise and are stored raw: ~15% smaller than compressing
them whole, at no cost in time.

Decoding checks every section and array shape, and that the snapshot was written for this code's Memory
model; anything inconsistent is SnapshotCorrupt, never a half-loaded index. A memory is validated when it is
first read: a search ranks a few hundred of them, so at 10,000 memories it skips ~0.1 s of validation.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, overload

import numpy as np
from pydantic import BaseModel, TypeAdapter, ValidationError

from agent_memory.domain.models import Memory
from agent_memory.domain.search.bm25 import Bm25State

MAGIC = b"AMIDX\x00"
FORMAT = 2  # 2: the conversation neighbours (previous_turns)
_LEVEL = 3  # measured at 10,000 memories: level 6 is 3% smaller and takes half again as long to write


class SnapshotCorrupt(Exception):
    """The bytes are not a snapshot this code wrote (truncated, damaged, another format)."""


@dataclass(frozen=True)
class IndexSnapshot:
    version: int  # the user's content version the index was built at
    access_version: int  # the access statistics' version the memories carry
    analyzer: str  # fingerprint of the text analysis the postings were made with
    embedding_model: str | None  # None: no vectors
    memories: Sequence[Memory]  # current memories, in index order, embeddings left out
    bm25: Bm25State
    vectors: np.ndarray | None  # (n, dimension) float32, rows L2-normalised (float16 precision)
    previous_turns: np.ndarray  # (n,) int32: each memory's conversation neighbour before it, or -1
    generation: str = ""  # the version counter's generation (domain/models.StoreVersions)
    # What applying changes to the index needs of every row without reading it (None: not saved, as in
    # snapshots written before them): each row's turn links (neighbours.turn_links) and expiry (epoch seconds,
    # inf for none).
    links: np.ndarray | None = None
    expires: np.ndarray | None = None


@cache
def _memories_adapter() -> TypeAdapter[list[Memory]]:
    return TypeAdapter(list[Memory])


@cache
def memory_schema() -> str:
    """A fingerprint of the Memory model: a snapshot written for another one is not read."""
    return hashlib.sha256(json.dumps(Memory.model_json_schema(), sort_keys=True).encode()).hexdigest()[:16]


class RowOutline(BaseModel):
    """What the as-of index reads of every row: its validity, and what finds its conversation neighbours."""

    valid_from: datetime
    superseded_at: datetime | None = None
    conversation_id: str | None = None
    content: str
    context: str | None = None


@cache
def _outlines_adapter() -> TypeAdapter[list[RowOutline]]:
    return TypeAdapter(list[RowOutline])


class _Rows(Sequence[Memory]):
    """A sequence of memories read one row at a time (`_at`), a slice row by row."""

    def _at(self, index: int) -> Memory:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Memory: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Memory]: ...

    def __getitem__(self, index: int | slice) -> Memory | Sequence[Memory]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(len(self)))]
        return self._at(index)


class StoredMemories(_Rows):
    """A snapshot's memories, each validated when first read; iterating validates them all at once."""

    def __init__(self, array: bytes, offsets: list[int], keys: list[str]) -> None:
        self._array = array  # the JSON array of the memories; row i is array[offsets[i]:offsets[i + 1] - 1]
        self._offsets = offsets
        self.keys = keys  # row i's memory_key, known without validating the row
        self._loaded: list[Memory | None] = [None] * (len(offsets) - 1)
        self._complete = False
        self._outlines: list[RowOutline] | None = None

    def replaced(self, rows: dict[int, Memory]) -> StoredMemories:
        """A copy with these rows replaced (new access statistics), the others still read on demand."""
        copy = StoredMemories(self._array, self._offsets, self.keys)
        copy._loaded = list(self._loaded)
        for index, memory in rows.items():
            copy._loaded[index] = memory
        copy._complete = self._complete
        return copy

    def __len__(self) -> int:
        return len(self._loaded)

    def _at(self, index: int) -> Memory:
        memory = self._loaded[index]
        if memory is None:
            start, end = self._offsets[index], self._offsets[index + 1] - 1  # less the separator
            memory = self._loaded[index] = Memory.model_validate_json(self._array[start:end])
        return memory

    def __iter__(self) -> Iterator[Memory]:
        return iter(self.all())

    def outlines(self) -> list[RowOutline]:
        """Every row's outline, read from the JSON without validating the memories (a quarter of the time); read
        once, as the rows never change."""
        if self._outlines is None:
            self._outlines = _outlines_adapter().validate_json(self._array)
        return self._outlines

    def all(self) -> list[Memory]:
        if not self._complete:
            self._loaded = [known or fresh for known, fresh in zip(
                self._loaded, _memories_adapter().validate_json(self._array), strict=True)]
            self._complete = True
        return [m for m in self._loaded if m is not None]


class MergedMemories(_Rows):
    """An index's memories after changes were applied to it: row i is `parts[part[i]][row[i]]`, so the rows of
    a snapshot stay unvalidated until read and nothing is copied but two arrays."""

    def __init__(self, parts: list[Sequence[Memory]], part: np.ndarray, row: np.ndarray, keys: list[str]) -> None:
        self._parts = parts
        self._part = part
        self._row = row
        self.keys = keys

    @classmethod
    def of(cls, memories: Sequence[Memory], keys: list[str]) -> MergedMemories:
        if isinstance(memories, MergedMemories):
            return memories
        return cls([memories], np.zeros(len(memories), dtype=np.int32), np.arange(len(memories), dtype=np.int32),
                   keys)

    def arranged(self, order: np.ndarray, added: list[Memory], keys: list[str]) -> MergedMemories:
        """Rows in `order`: entry i is a row here, or -(j + 1) for `added[j]`."""
        parts = list(self._parts)
        old = np.maximum(order, 0)
        part = np.where(order >= 0, self._part[old] if len(self._part) else 0, len(parts)).astype(np.int32)
        row = np.where(order >= 0, self._row[old] if len(self._row) else 0, -order - 1).astype(np.int32)
        if added:
            parts.append(added)
        used = np.unique(part)
        if len(used) < len(parts):  # parts no row refers to any more are let go
            renumber = np.full(len(parts), -1, dtype=np.int32)
            renumber[used] = np.arange(len(used), dtype=np.int32)
            parts, part = [parts[i] for i in used.tolist()], renumber[part]
        return MergedMemories(parts, part, row, keys)

    def replaced(self, rows: dict[int, Memory]) -> MergedMemories:
        """A copy with these rows replaced (new access statistics), the others as they were."""
        order = np.arange(len(self), dtype=np.int64)
        changed = sorted(rows)
        order[changed] = -(np.arange(len(changed)) + 1)
        return self.arranged(order, [rows[i] for i in changed], self.keys)

    def __len__(self) -> int:
        return len(self._part)

    def _at(self, index: int) -> Memory:
        return self._parts[int(self._part[index])][int(self._row[index])]

    def outlines(self) -> list[RowOutline | Memory]:
        """Every row's outline: a snapshot's rows outlined without validating them, added memories as they are."""
        outlined = [part.outlines() if isinstance(part, StoredMemories) else part for part in self._parts]
        return [outlined[p][r] for p, r in zip(self._part.tolist(), self._row.tolist(), strict=True)]

    def __iter__(self) -> Iterator[Memory]:
        # A snapshot's rows validated at once, not one by one; the rows read from plain lists, not numpy scalars.
        parts = [part.all() if isinstance(part, StoredMemories) else part for part in self._parts]
        return iter([parts[p][r] for p, r in zip(self._part.tolist(), self._row.tolist(), strict=True)])


def memory_keys(memories: Sequence[Memory]) -> list[str]:
    """Every row's memory key, without validating a snapshot's rows."""
    if isinstance(memories, StoredMemories | MergedMemories):
        return memories.keys
    return [m.memory_key for m in memories]


def _compressed(data: bytes) -> tuple[str, bytes]:
    return "zlib", zlib.compress(data, _LEVEL)


def encode_snapshot(snapshot: IndexSnapshot) -> bytes:
    rows = [m.model_dump_json(exclude_none=True, exclude_defaults=True).encode() for m in snapshot.memories]
    starts = np.zeros(len(rows) + 1, dtype="<u4")
    np.cumsum([len(row) + 1 for row in rows], out=starts[1:])  # each row and its separator (, or ])
    bm25 = snapshot.bm25
    sections: list[tuple[str, str, bytes]] = [
        ("memories", *_compressed(b"[" + b",".join(rows) + b"]")),
        ("memory_offsets", *_compressed((starts + 1).tobytes())),
        ("memory_keys", *_compressed(json.dumps([m.memory_key for m in snapshot.memories]).encode())),
        ("terms", *_compressed(json.dumps(bm25.terms, ensure_ascii=False, separators=(",", ":")).encode())),
        ("sizes", *_compressed(np.diff(bm25.offsets).astype("<u4").tobytes())),
        ("docs", *_compressed(bm25.docs.astype("<i4").tobytes())),
        ("freqs", *_compressed(bm25.freqs.astype("<f4").tobytes())),
        ("lengths", *_compressed(bm25.lengths.astype("<f4").tobytes())),
        ("previous_turns", *_compressed(np.asarray(snapshot.previous_turns, dtype="<i4").tobytes())),
    ]
    if snapshot.links is not None and snapshot.expires is not None:
        sections.append(("links", *_compressed(np.ascontiguousarray(snapshot.links, dtype="<u8").tobytes())))
        sections.append(("expires", *_compressed(np.asarray(snapshot.expires, dtype="<f8").tobytes())))
    dimension = 0
    if snapshot.vectors is not None:
        dimension = int(snapshot.vectors.shape[1])
        planes = np.ascontiguousarray(snapshot.vectors, dtype="<f2").view(np.uint8).reshape(-1, 2)
        sections.append(("vectors_high", *_compressed(planes[:, 1].tobytes())))
        sections.append(("vectors_low", "raw", planes[:, 0].tobytes()))
    header = json.dumps({
        "format": FORMAT, "memory_schema": memory_schema(), "version": snapshot.version,
        "generation": snapshot.generation,
        "access_version": snapshot.access_version, "analyzer": snapshot.analyzer,
        "embedding_model": snapshot.embedding_model, "dimension": dimension,
        "count": len(snapshot.memories), "sections": [[name, codec, len(data)] for name, codec, data in sections],
    }, ensure_ascii=False).encode()
    return b"".join([MAGIC, len(header).to_bytes(4, "little"), header, *(data for _, _, data in sections)])


def decode_snapshot(data: bytes) -> IndexSnapshot:
    """The snapshot `encode_snapshot` wrote, or SnapshotCorrupt."""
    try:
        return _decode(memoryview(data))
    except SnapshotCorrupt:
        raise
    except (ValueError, TypeError, KeyError, IndexError, zlib.error, ValidationError) as error:
        raise SnapshotCorrupt(f"unreadable snapshot: {type(error).__name__}") from error


def _decode(data: memoryview) -> IndexSnapshot:
    if bytes(data[:len(MAGIC)]) != MAGIC:
        raise SnapshotCorrupt("not a snapshot")
    start = len(MAGIC) + 4
    header_length = int.from_bytes(data[len(MAGIC):start], "little")
    header: dict[str, Any] = json.loads(bytes(data[start:start + header_length]))
    if header.get("format") != FORMAT:
        raise SnapshotCorrupt(f"snapshot format {header.get('format')}, this code reads {FORMAT}")
    if header.get("memory_schema") != memory_schema():
        raise SnapshotCorrupt("snapshot written for another Memory model")
    sections: dict[str, bytes] = {}
    offset = start + header_length
    for name, codec, length in header["sections"]:
        raw = bytes(data[offset:offset + length])
        if len(raw) != length:
            raise SnapshotCorrupt("snapshot truncated")
        sections[name] = zlib.decompress(raw) if codec == "zlib" else raw
        offset += length
    if offset != len(data):
        raise SnapshotCorrupt("trailing bytes after the last section")
    count, dimension = int(header["count"]), int(header["dimension"])
    memories = _memories(sections["memories"], _array(sections["memory_offsets"], "<u4"),
                         json.loads(sections["memory_keys"]))
    sizes = _array(sections["sizes"], "<u4")
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    bm25 = Bm25State(terms=json.loads(sections["terms"]), offsets=offsets, docs=_array(sections["docs"], "<i4"),
                     freqs=_array(sections["freqs"], "<f4"), lengths=_array(sections["lengths"], "<f4"))
    vectors = _vectors(sections, count, dimension) if header["embedding_model"] is not None else None
    previous = _array(sections["previous_turns"], "<i4")
    if (len(memories) != count or len(bm25.lengths) != count or len(previous) != count
            or not all(isinstance(t, str) for t in bm25.terms)):
        raise SnapshotCorrupt("snapshot sections disagree on the number of memories")
    if len(previous) and (previous.min() < -1 or previous.max() >= count):
        raise SnapshotCorrupt("a conversation neighbour outside the snapshot")
    links = expires = None
    if "links" in sections and "expires" in sections:
        links, expires = _array(sections["links"], "<u8"), _array(sections["expires"], "<f8")
        if len(links) != 2 * count or len(expires) != count:
            raise SnapshotCorrupt("snapshot sections disagree on the number of memories")
        links = links.reshape(count, 2)
    return IndexSnapshot(version=int(header["version"]), access_version=int(header["access_version"]),
                         analyzer=str(header["analyzer"]), embedding_model=header["embedding_model"],
                         memories=memories, bm25=bm25, vectors=vectors, previous_turns=previous.astype(np.int32),
                         generation=str(header.get("generation", "")), links=links, expires=expires)


def _memories(array: bytes, offsets: np.ndarray, keys: list[str]) -> StoredMemories:
    """Row i is array[offsets[i]:offsets[i + 1] - 1]: the first starts after '[', each ends before its ','
    and the last before ']'."""
    rows = len(offsets) - 1
    if rows < 0 or offsets[0] != 1 or array[:1] != b"[" or array[-1:] != b"]" \
            or offsets[-1] != (len(array) if rows else 1) or np.any(np.diff(offsets) < 2) \
            or np.any(np.frombuffer(array, dtype=np.uint8)[offsets[1:-1].astype(np.int64) - 1] != ord(",")):
        raise SnapshotCorrupt("memory offsets do not match the memories")
    if not isinstance(keys, list) or len(keys) != rows or not all(isinstance(k, str) for k in keys):
        raise SnapshotCorrupt("memory keys do not match the memories")
    memories = StoredMemories(array, offsets.tolist(), keys)
    if rows and memories[0].memory_key != keys[0]:  # one row validated now: a damaged array fails here
        raise SnapshotCorrupt("memory keys do not match the memories")
    return memories


def _array(data: bytes, dtype: str) -> np.ndarray:
    """A little-endian array as a native one."""
    return np.frombuffer(data, dtype=dtype).astype(dtype.lstrip("<"))


def _vectors(sections: dict[str, bytes], count: int, dimension: int) -> np.ndarray:
    high, low = sections["vectors_high"], sections["vectors_low"]
    if dimension <= 0 or len(high) != count * dimension or len(low) != len(high):
        raise SnapshotCorrupt("vector planes do not match the number of memories")
    planes = np.empty((len(high), 2), dtype=np.uint8)
    planes[:, 0] = np.frombuffer(low, dtype=np.uint8)
    planes[:, 1] = np.frombuffer(high, dtype=np.uint8)
    return planes.view("<f2").reshape(count, dimension).astype(np.float32)
