"""SOPs or a protocol's knowledge base from a folder of Markdown and text files, behind the retriever port
the HTTP retriever implements: the intent context of a stack without a knowledge service (`make run`).

The folder is read and indexed on the first question rather than at start (a function that never asks
pays nothing), and again when a document is added, removed or changed: their paths, sizes and mtimes are
compared at each question, and unchanged chunks keep their embeddings. At most `max_bytes` of documents
are read, in path order; a document past the limit is left out, with a warning naming it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agent_memory.domain.models import JsonObject, ScopeRef
from agent_memory.domain.search.knowledge import KnowledgeChunk, KnowledgeIndex, chunk_document
from agent_memory.observability import logger
from agent_memory.ports import Embedder

DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt")
EMBED_BATCH = 16  # chunks per embedding call: the lock is free between calls, for a re-read of the folder
# path relative to the folder, mtime in ns, size in bytes; None = the folder is not there
Signature = tuple[tuple[str, int, int], ...] | None


class FolderRetriever:
    def __init__(self, directory: str | Path, *, max_bytes: int,
                 embedder: Callable[[], Embedder | None] | None = None) -> None:
        self._directory = Path(directory)
        self._max_bytes = max_bytes
        self._embedder = embedder
        self._lock = threading.Lock()
        self._signature: Signature | bool = False  # False: never read
        self._index = KnowledgeIndex([])
        self._vectors: dict[str, np.ndarray] = {}  # by chunk text (headings included), across re-reads
        self._worker: threading.Thread | None = None
        self._embedding = False  # a worker is embedding (set and cleared under the lock)

    def retrieve(self, user: ScopeRef, query: str, limit: int) -> list[JsonObject]:
        index = self.index()
        if not query.strip() or not index.chunks:
            return []
        embedder = self._embedder() if self._embedder and index.has_vectors else None
        vector = embedder.embed_query(query) if embedder else None
        return [{"content": hit.chunk.text, "source": hit.chunk.label, "similarity": round(hit.score, 4)}
                for hit in index.search(query, limit, query_vector=vector)]

    def index(self) -> KnowledgeIndex:
        """The folder's index as the folder is now (read again when it changed)."""
        signature = self._read_signature()
        with self._lock:
            if signature != self._signature:
                self._index = self._build(signature)
                self._signature = signature
            return self._index

    def _read_signature(self) -> Signature:
        if not self._directory.is_dir():
            return None
        found = []
        for folder, dirs, files in os.walk(self._directory):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in files:
                if name.startswith(".") or not name.lower().endswith(DOCUMENT_SUFFIXES):
                    continue
                path = Path(folder, name)
                try:
                    stat = path.stat()
                except OSError:
                    continue  # removed while listed
                found.append((path.relative_to(self._directory).as_posix(), stat.st_mtime_ns, stat.st_size))
        return tuple(sorted(found))

    def _build(self, signature: Signature) -> KnowledgeIndex:
        if signature is None:
            logger.warning("knowledge folder not found", directory=str(self._directory))
            return KnowledgeIndex([])
        chunks: list[KnowledgeChunk] = []
        total, left_out = 0, []
        for relative, _, size in signature:
            if total + size > self._max_bytes:
                left_out.append(relative)
                continue
            try:
                text = (self._directory / relative).read_text(encoding="utf-8", errors="replace")
            except OSError as error:
                logger.warning("knowledge document unreadable", file=relative, error=type(error).__name__)
                continue
            total += size
            chunks.extend(chunk_document(relative, text))
        if left_out:
            logger.warning("knowledge documents past the size limit left out", directory=str(self._directory),
                           max_bytes=self._max_bytes, left_out=left_out[:20], left_out_count=len(left_out))
        logger.info("knowledge folder indexed", directory=str(self._directory), documents=len(signature),
                    chunks=len(chunks), bytes=total)
        index = self._with_vectors(chunks)
        if index is None:  # some chunks have no embedding yet: keyword search until they have
            self._embed_later()
            return KnowledgeIndex(chunks)
        return index

    def _with_vectors(self, chunks: list[KnowledgeChunk]) -> KnowledgeIndex | None:
        """The chunks' index with their embeddings, when every one has its embedding; None otherwise."""
        texts = [c.searchable for c in chunks]
        if self._embedder is None or not chunks or not self._vectors.keys() >= set(texts):
            return None
        return KnowledgeIndex(chunks, np.stack([self._vectors[t] for t in texts]))

    def _embed_later(self) -> None:
        """Embeds the chunks on a thread of its own, a batch at a time, then swaps in the index with vectors:
        embedding takes far longer than reading (~460 chunks of 144 KB took over two minutes on 2 busy cores,
        keyword indexing 0.3 s), and no question should wait for it. Called under the lock."""
        if self._embedder is None or self._embedding:
            return
        self._embedding = True
        self._worker = threading.Thread(target=self._embed_pending, name="knowledge-embed", daemon=True)
        self._worker.start()

    def _embed_pending(self) -> None:
        assert self._embedder is not None
        try:
            embedder = self._embedder()
            while True:
                with self._lock:  # the folder may have been read again meanwhile: embed what it holds now
                    chunks = self._index.chunks
                    wanted = {c.searchable for c in chunks}
                    pending = sorted(wanted - self._vectors.keys())[:EMBED_BATCH] if embedder else []
                    if not pending:
                        self._vectors = {t: v for t, v in self._vectors.items() if t in wanted}
                        self._index = self._with_vectors(chunks) or self._index
                        self._embedding = False
                        return
                assert embedder is not None
                vectors = embedder.embed_documents(pending)
                with self._lock:
                    self._vectors.update(zip(pending, vectors, strict=True))
        except Exception as error:  # the keyword index stays; the next change of the folder tries again
            with self._lock:
                self._embedding = False
            logger.warning("knowledge embedding failed", directory=str(self._directory), error=type(error).__name__)

    def wait_for_embeddings(self, timeout: float | None = None) -> bool:
        """Waits for the embedding thread, if one runs; True when none runs any more."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return worker is None or not worker.is_alive()
