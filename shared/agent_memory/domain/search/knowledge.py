"""A folder of documents as searchable chunks (SOPs, a protocol's knowledge base): pure, no I/O.

A Markdown document is cut at its headings, and a section's paragraphs are packed into chunks of at most
MAX_CHUNK_CHARS (a longer paragraph is cut at sentence ends). Each chunk keeps its file and heading trail,
so an answer can say where it comes from; the heading trail is searched with the text, so a query naming
a section ("学历证明", "translations") finds its paragraphs. Search is the conversation log's: BM25 over the
chunks (the shared CJK-aware analyser) blended with the embedding cosine when there are vectors.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agent_memory.domain.search.bm25 import Bm25Index
from agent_memory.domain.search.hybrid import blend
from agent_memory.domain.text.text import tokenize

MAX_CHUNK_CHARS = 600
HEADING_SEPARATOR = " › "
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BLOCK_LINE = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|>|\|)")  # a list item, a quote, a table row
# Where a long paragraph may be cut: after a sentence's end, Chinese or Latin.
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|(?<=\.)\s")


@dataclass(frozen=True)
class KnowledgeChunk:
    source: str  # the file, relative to the folder
    headings: tuple[str, ...]  # the heading trail, outermost first; empty before the first heading
    text: str

    @property
    def label(self) -> str:
        """Where the chunk comes from: its file, then its heading trail."""
        return HEADING_SEPARATOR.join((self.source, *self.headings))

    @property
    def searchable(self) -> str:
        return "\n".join((*self.headings, self.text))


def chunk_document(source: str, text: str, *, max_chars: int = MAX_CHUNK_CHARS) -> list[KnowledgeChunk]:
    """The document's chunks in reading order. Headings inside fenced code are text; a document without
    headings (plain text) is cut at its paragraphs alone."""
    chunks: list[KnowledgeChunk] = []
    trail: list[tuple[int, str]] = []
    paragraph: list[str] = []
    paragraphs: list[str] = []
    fenced = False

    def end_paragraph() -> None:
        if paragraph:
            verbatim = any(_FENCE.match(line) for line in paragraph)
            paragraphs.append("\n".join(paragraph if verbatim else _unwrap(paragraph)).strip())
            paragraph.clear()

    def end_section() -> None:
        end_paragraph()
        headings = tuple(title for _, title in trail)
        chunks.extend(KnowledgeChunk(source, headings, body) for body in _pack(paragraphs, max_chars))
        paragraphs.clear()

    for line in text.replace("\r\n", "\n").split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading:
            end_section()
            level = len(heading.group(1))
            trail = [(lvl, title) for lvl, title in trail if lvl < level] + [(level, heading.group(2).strip())]
        elif line.strip() or fenced:
            paragraph.append(line.rstrip())
        else:
            end_paragraph()
    end_section()
    return chunks


def _unwrap(lines: Sequence[str]) -> list[str]:
    """A paragraph's hard-wrapped lines joined into one; list items, quotes and table rows stay lines."""
    joined: list[str] = []
    for line in lines:
        text = line.strip()
        if joined and not _BLOCK_LINE.match(line):
            wide = _is_wide(joined[-1][-1]) and _is_wide(text[0])  # CJK runs on without a space
            joined[-1] += text if wide else " " + text
        else:
            joined.append(line.rstrip())
    return joined


def _is_wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def _pack(paragraphs: Sequence[str], max_chars: int) -> list[str]:
    """Consecutive paragraphs joined while they fit in max_chars; a paragraph longer than that alone is cut
    at sentence ends, and a sentence longer than that at max_chars."""
    pieces = [piece for p in paragraphs if p for piece in _split(p, max_chars)]
    packed: list[str] = []
    for piece in pieces:
        if packed and len(packed[-1]) + 2 + len(piece) <= max_chars:
            packed[-1] += "\n\n" + piece
        else:
            packed.append(piece)
    return packed


def _split(paragraph: str, max_chars: int) -> list[str]:
    if len(paragraph) <= max_chars:
        return [paragraph]
    parts: list[str] = []
    current = ""
    for sentence in (s for s in _SENTENCE_END.split(paragraph) if s):
        while len(sentence) > max_chars:
            if current:
                parts.append(current.strip())
                current = ""
            parts.append(sentence[:max_chars].strip())
            sentence = sentence[max_chars:]
        if len(current) + len(sentence) > max_chars:
            parts.append(current.strip())
            current = ""
        current += sentence
    if current.strip():
        parts.append(current.strip())
    return [p for p in parts if p]


@dataclass(frozen=True)
class KnowledgeHit:
    chunk: KnowledgeChunk
    score: float  # in [0, 1]: `hybrid.blend` of the normalised BM25 and the cosine


class KnowledgeIndex:
    """The chunks of one folder, indexed once: BM25 postings, and one embedding per chunk when given."""

    def __init__(self, chunks: Sequence[KnowledgeChunk], vectors: np.ndarray | None = None) -> None:
        if vectors is not None and len(vectors) != len(chunks):
            raise ValueError("one vector per chunk")
        self.chunks = list(chunks)
        self._bm25 = Bm25Index([c.searchable for c in self.chunks])
        self._vectors = vectors

    @property
    def has_vectors(self) -> bool:
        return self._vectors is not None

    def search(self, query: str, limit: int, *, query_vector: np.ndarray | None = None) -> list[KnowledgeHit]:
        """The best `limit` chunks for the query, best first (reading order among equals); a chunk with
        neither a shared term nor a vector never scores."""
        if not self.chunks or limit < 1:
            return []
        vectors = self._vectors if query_vector is not None else None
        scores = blend(self._bm25.scores(tokenize(query)), query_vector=query_vector,
                       vectors=None if vectors is None else list(vectors))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        return [KnowledgeHit(self.chunks[i], min(1.0, scores[i])) for i in order[:limit] if scores[i] > 0]
