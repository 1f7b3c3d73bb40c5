"""Export and import of a scope's data, page by page (the format: domain/lifecycle/portable.py).

An export page is built from the scope's partition section by section (memories, log, hot memory, reports,
memory-tool files) until the next record would pass a page's budget; the cursor says where the next page starts.
A memory is exported as its chain of versions, found from its last version (the current one, or history whose
successor was deleted) by the `supersedes` links, so every version appears once, with its chain.

An import writes a page whole or not at all (one transaction). Items the scope holds already are left as they
are, so a page sent twice stores nothing the second time; a memory key the scope holds with other content, or a
current memory whose field or content is current under another key, is a conflict (409) naming the item.
Embeddings are computed again, by the embedder saves use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from agent_memory.domain.lifecycle.portable import (
    IMPORT_MAX_BYTES,
    IMPORT_MAX_WRITES,
    PAGE_MAX_BYTES,
    PAGE_MAX_EMBEDDED_TOKENS,
    PAGE_MAX_WRITES,
    SECTIONS,
    ExportCursor,
    ExportedFile,
    ExportedHotEntry,
    ExportedLogMessage,
    ExportedMemory,
    ExportedReport,
    ExportedScope,
    ExportedSynonym,
    ExportedVersion,
    ExportPage,
    ImportBatch,
    ImportPage,
    LeftOut,
    embedded_texts,
    embedded_tokens,
    memory_writes,
    page_bytes,
    page_writes,
    record_bytes,
    report_text,
)
from agent_memory.domain.lifecycle.retention import RetentionPolicy
from agent_memory.domain.memory_tool.memory_files import MemoryDirectory, MemoryFile
from agent_memory.domain.memory_tool.memory_paths import ancestors
from agent_memory.domain.models import Memory, Origin, ScopeRef, content_hash, utcnow
from agent_memory.domain.requests import TOO_DEEP, nests_too_deep
from agent_memory.domain.search.embedding_budget import check_embedding_budget
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.domain.text.keywords import normalize_keyword
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, LogMessage, WeeklyReport, scope_label
from agent_memory.errors import Conflict, InvalidInput, PayloadTooLarge
from agent_memory.observability import logger
from agent_memory.ports import Embedder, ScopeArchive, SynonymStore


@dataclass
class ImportCounts:
    memories: int = 0  # records (version chains), as an export page lists them
    memory_versions: int = 0
    log: int = 0
    hot_memory: int = 0
    reports: int = 0
    files: int = 0
    synonyms: int = 0


@dataclass
class Imported:
    """What an import wrote, and what it left as it was (present already, or a log message expired since)."""

    written: ImportCounts = field(default_factory=ImportCounts)
    skipped: ImportCounts = field(default_factory=ImportCounts)


@dataclass
class _Budget:
    writes: int = PAGE_MAX_WRITES
    bytes: int = PAGE_MAX_BYTES
    tokens: int = PAGE_MAX_EMBEDDED_TOKENS

    def take(self, writes: int, size: int, tokens: int) -> bool:
        if writes > self.writes or size > self.bytes or tokens > self.tokens:
            return False
        self.writes, self.bytes, self.tokens = self.writes - writes, self.bytes - size, self.tokens - tokens
        return True


class PortabilityService:
    def __init__(self, *, archive: Callable[[], ScopeArchive], synonyms: SynonymStore,
                 embedder: Callable[[], Embedder | None], max_embedded_tokens: int = 0,
                 retention: Callable[[str], RetentionPolicy] | None = None) -> None:
        """`retention`: a tenant's policy: an expired version is not exported, an imported one gets its expiry."""
        self._retention = retention
        self._archive = archive  # a provider: the table's client is made on first use
        self._synonyms = synonyms
        self._embedder = embedder
        self._max_embedded_tokens = max_embedded_tokens

    # ---- export ----------------------------------------------------------------------------------

    def export_page(self, scope: ScopeRef, cursor: str | None = None, *, now: datetime | None = None) -> ExportPage:
        """One page of the scope's data from `cursor` (None: the first page)."""
        position = ExportCursor.decode(cursor)
        now = now or utcnow()
        label = scope_label(scope)
        page = ExportPage(source_tenant_id=scope.tenant_id, exported_at=now,
                          scope=ExportedScope(type="project" if label["type"] == "project" else "user", id=label["id"]))
        budget = _Budget(bytes=PAGE_MAX_BYTES - page_bytes(page) - 200)  # 200: the cursor
        tenant_synonyms: dict[str, dict[str, float]] | None = None
        names = [name for name, _ in SECTIONS]
        for section, prefix in SECTIONS[names.index(position.section):]:
            after = position.after if section == position.section else None
            skip = position.skip if section == position.section else 0
            for sort_key, record in self._records(scope, section, prefix, after, now):
                if isinstance(record, ExportedMemory):
                    if tenant_synonyms is None:
                        tenant_synonyms = self._synonyms.pairs(scope.tenant_id)
                    if skip >= len(record.versions):  # a cursor this API wrote stops inside the chain
                        raise InvalidInput("cursor: not a cursor this API returned", details=[{"field": "cursor"}])
                    if skip:
                        record = ExportedMemory(versions=record.versions[skip:])
                    taken = self._add_memory(page, record, budget, tenant_synonyms)
                    if taken < len(record.versions):
                        resume = ExportCursor(section=section, after=after, skip=skip + taken) if taken else \
                            ExportCursor(section=section, after=after, skip=skip)
                        page.next_cursor = resume.encode()
                        return page
                    skip = 0
                elif isinstance(record, LeftOut):
                    page.left_out.append(record)
                    logger.warning("export left a record out", section=record.section, reason=record.reason)
                elif not budget.take(1, record_bytes(record), embedded_tokens(record)):
                    page.next_cursor = ExportCursor(section=section, after=after).encode()
                    return page
                else:
                    getattr(page, section).append(record)
                after = sort_key
        return page

    def _add_memory(self, page: ExportPage, record: ExportedMemory, budget: _Budget,
                    tenant_synonyms: dict[str, dict[str, float]]) -> int:
        """Add the chain, or as many of its first versions as fit when it is longer than a whole page: how many."""
        synonyms = [s for s in _synonyms_used(record, tenant_synonyms) if s not in page.synonyms]
        if budget.take(memory_writes(record) + len(synonyms), record_bytes(record) + sum(map(record_bytes, synonyms)),
                       embedded_tokens(record)):
            page.memories.append(record)
            page.synonyms.extend(synonyms)
            return len(record.versions)
        if page.memories or page.log or page.hot_memory or page.reports or page.files:
            return 0  # the next page starts with it
        for count in range(len(record.versions) - 1, 0, -1):  # a chain longer than a page: its oldest part
            part = ExportedMemory(versions=record.versions[:count])
            if budget.take(memory_writes(part), record_bytes(part), embedded_tokens(part)):
                page.memories.append(part)
                return count
        raise ValueError(f"memory {record.versions[0].memory_key} does not fit an empty page")

    def _records(self, scope: ScopeRef, section: str, prefix: str, after: str | None, now: datetime
                 ) -> Iterator[tuple[str, BaseModel]]:
        archive = self._archive()
        if section == "memories":
            yield from self._memory_records(scope, after)
            return
        for sort_key, entry in archive.entries_after(scope, prefix, after):
            if isinstance(entry, LogMessage):
                if entry.expires_at > now:
                    yield sort_key, ExportedLogMessage.model_validate(entry.model_dump(exclude={"embedding",
                                                                                               "embedding_model"}))
            elif isinstance(entry, HotMemoryEntry):
                if nests_too_deep(entry.value):
                    yield sort_key, LeftOut(section="hot_memory", key=f"{entry.type.value}/{entry.key}",
                                            reason=f"the value {TOO_DEEP}")
                else:
                    yield sort_key, ExportedHotEntry.model_validate(entry.model_dump())
            elif isinstance(entry, WeeklyReport):
                yield sort_key, ExportedReport.model_validate(entry.model_dump(exclude={"embedding",
                                                                                       "embedding_model"}))
            elif isinstance(entry, MemoryFile):
                yield sort_key, ExportedFile(path=entry.path, text=entry.text, created_at=entry.created_at,
                                             updated_at=entry.updated_at, version=entry.version)
            elif isinstance(entry, MemoryDirectory):
                yield sort_key, ExportedFile(path=entry.path, is_directory=True, created_at=entry.created_at)

    def _memory_records(self, scope: ScopeRef, after: str | None, batch: int = 50
                        ) -> Iterator[tuple[str, ExportedMemory]]:
        """Each chain at its last version's sort key: the memories are read in key order, a batch at a time; a
        version whose successor is there is passed over (its chain comes with that successor, later in key order,
        as a successor is always saved after what it retires)."""
        archive = self._archive()
        pending: list[tuple[str, Memory]] = []
        for item in archive.memories_after(scope, after):
            pending.append(item)
            if len(pending) == batch:
                yield from self._chains(scope, pending)
                pending = []
        yield from self._chains(scope, pending)

    def _chains(self, scope: ScopeRef, memories: list[tuple[str, Memory]]) -> Iterator[tuple[str, ExportedMemory]]:
        if not memories:
            return
        archive = self._archive()
        successors = archive.memories(scope, [m.superseded_by for _, m in memories if m.superseded_by])
        lasts = [(sk, m) for sk, m in memories if m.superseded_by is None or not _retires(successors.get(
            m.superseded_by), m)]
        chains = {m.memory_key: [m] for _, m in lasts}
        reaching = {m.memory_key: m for _, m in lasts}  # chain (by its last key) -> its oldest version so far
        while True:
            wanted = {last: oldest.supersedes for last, oldest in reaching.items() if oldest.supersedes}
            found = archive.memories(scope, list(wanted.values())) if wanted else {}
            reaching = {}
            for last, key in wanted.items():
                older = found.get(key)
                if older is not None and _retires(chains[last][0], older):
                    chains[last].insert(0, older)
                    reaching[last] = older
            if not reaching:
                break
        policy, now = (self._retention(scope.tenant_id), utcnow()) if self._retention else (None, utcnow())
        for sk, newest in lasts:
            kept = [m for m in chains[newest.memory_key] if policy is None or policy.kept(m, now)]
            if kept:  # an expired version is found by nothing, the export included
                yield sk, ExportedMemory(versions=[_exported_version(m) for m in kept])

    # ---- import ----------------------------------------------------------------------------------

    def import_page(self, scope: ScopeRef, page: ImportPage, *, now: datetime | None = None,
                    written_by: str | None = None) -> Imported:
        """The page's items the scope does not hold yet, all in one write, their embeddings computed again. The
        memories record origin `import` and `written_by`, the importing token's subject."""
        now = now or utcnow()
        writes = page_writes(page)
        _within_one_transaction("import_writes", "writes", writes, IMPORT_MAX_WRITES, f"takes {writes} writes")
        size = page_bytes(page)
        _within_one_transaction("import_bytes", "bytes", size, IMPORT_MAX_BYTES, f"is {size} bytes as JSON")
        texts = [text for section in (page.memories, page.log, page.reports) for r in section
                 for text in embedded_texts(r)]
        check_embedding_budget(texts, self._max_embedded_tokens, field="body")
        archive = self._archive()
        result = Imported()
        batch = ImportBatch()
        self._plan_memories(archive, scope, page, batch, result, written_by)
        self._plan_entries(archive, scope, page, batch, result, now)
        self._plan_synonyms(archive, scope, page, batch, result)
        self._embed(batch)
        archive.write(scope, batch)
        if batch.synonyms:
            self._synonyms.forget(scope.tenant_id)
        return result

    def _plan_memories(self, archive: ScopeArchive, scope: ScopeRef, page: ImportPage, batch: ImportBatch,
                       result: Imported, written_by: str | None) -> None:
        located = [(f"memories.{i}.versions.{j}", v) for i, m in enumerate(page.memories)
                   for j, v in enumerate(m.versions)]
        held = archive.memories(scope, [v.memory_key for _, v in located])
        new = []
        policy = self._retention(scope.tenant_id) if self._retention else None
        for where, version in located:
            memory = _stored_memory(scope, version, written_by)
            if policy is not None:  # this tenant's retention, whatever the source's was
                memory = memory.model_copy(update={"expires_at": policy.expires_at(memory.memory_type,
                                                                                   memory.created_at)})
            existing = held.get(version.memory_key)
            if existing is None:
                new.append((where, memory))
            elif _same_memory(existing, memory):
                result.skipped.memory_versions += 1
            else:
                raise Conflict(f"{where}.memory_key: {version.memory_key} is stored in this scope with other "
                               "content", details=[{"field": f"{where}.memory_key", "type": "conflict"}])
        seen: dict[str, str] = {}
        for where, memory in new:  # one transaction may not write a content marker twice
            if memory.is_current and seen.setdefault(memory.content_hash, where) != where:
                raise InvalidInput(f"{where}.content: the same content as {seen[memory.content_hash]} (two current "
                                   "memories of a scope never hold the same content)",
                                   details=[{"field": f"{where}.content", "type": "duplicate"}])
        holders = archive.slot_holders(scope, [m for _, m in new])
        for where, memory in new:
            for what, holder in holders.get(memory.memory_key, {}).items():
                if holder != memory.memory_key:
                    raise Conflict(f"{where}.{what}: the scope's current memory {holder} holds this {what} already "
                                   "(delete it, or import into another scope)",
                                   details=[{"field": f"{where}.{what}", "type": "conflict"}])
            batch.memories.append(memory)
            result.written.memory_versions += 1
        # A record counts as written when any of its versions is, else as skipped.
        written = {where.split(".versions.")[0] for where, _ in new}
        result.written.memories += len(written)
        result.skipped.memories += len(page.memories) - len(written)

    def _plan_entries(self, archive: ScopeArchive, scope: ScopeRef, page: ImportPage, batch: ImportBatch,
                      result: Imported, now: datetime) -> None:
        """Log messages (unexpired), hot-memory entries, reports and memory-tool entries the scope lacks. A file or
        directory needs its directories, in this page or stored; a path stored as the other kind is a conflict."""
        log = [LogMessage.model_validate(m.model_dump()) for m in page.log]
        policy = self._retention(scope.tenant_id) if self._retention else None
        if policy is not None:  # kept no longer than this tenant keeps its log, whatever the source kept
            log = [m.model_copy(update={"expires_at": min(m.expires_at, policy.log_expires_at(m.created_at))})
                   for m in log]
        hot = [HotMemoryEntry.model_validate(e.model_dump()) for e in page.hot_memory]
        reports = [WeeklyReport.model_validate(r.model_dump()) for r in page.reports]
        files: list[MemoryFile | MemoryDirectory] = [
            MemoryDirectory(path=f.path, created_at=f.created_at) if f.is_directory else
            MemoryFile(path=f.path, text=f.text or "", created_at=f.created_at,
                       updated_at=f.updated_at or f.created_at, version=f.version) for f in page.files]
        in_page = {f.path for f in files if isinstance(f, MemoryDirectory)}
        parents = sorted({p for f in files for p in ancestors(f.path)} - in_page)
        entries: list[Any] = [*log, *hot, *reports, *files, *(MemoryDirectory(path=p, created_at=now) for p in parents)]
        held = archive.held(scope, entries)
        stored_parents = {p for p, kind in zip(parents, held[-len(parents):] if parents else [], strict=True)
                          if kind == "directory"}
        for i, f in enumerate(files):
            missing = [p for p in ancestors(f.path) if p not in in_page and p not in stored_parents]
            if missing:
                raise InvalidInput(f"files.{i}.path: its directory {missing[-1]} is neither in this page nor stored "
                                   "(send the pages in order)", details=[{"field": f"files.{i}.path"}])
        sections: list[tuple[str, list[Any]]] = [("log", log), ("hot_memory", hot), ("reports", reports),
                                                 ("files", files)]
        position = 0
        for name, items in sections:
            for i, item in enumerate(items):
                kind = held[position]
                position += 1
                expired = isinstance(item, LogMessage) and item.expires_at <= now
                if kind is None and not expired:
                    getattr(batch, name).append(item)
                    setattr(result.written, name, getattr(result.written, name) + 1)
                    continue
                wanted = "directory" if isinstance(item, MemoryDirectory) else "file"
                if isinstance(item, MemoryFile | MemoryDirectory) and kind not in (None, wanted):
                    raise Conflict(f"files.{i}.path: {item.path} is stored as a {kind} in this scope",
                                   details=[{"field": f"files.{i}.path", "type": "conflict"}])
                setattr(result.skipped, name, getattr(result.skipped, name) + 1)

    def _plan_synonyms(self, archive: ScopeArchive, scope: ScopeRef, page: ImportPage, batch: ImportBatch,
                       result: Imported) -> None:
        pairs = [(normalize_keyword(s.keyword), normalize_keyword(s.synonym), s.similarity_score)
                 for s in page.synonyms]
        present = archive.present_synonyms(scope.tenant_id, [(a, b) for a, b, _ in pairs]) if pairs else set()
        for a, b, score in pairs:
            if (a, b) in present:
                result.skipped.synonyms += 1
            else:
                batch.synonyms.append((a, b, score))
                result.written.synonyms += 1

    def _embed(self, batch: ImportBatch) -> None:
        """The embeddings a save, a log append and the rollup compute, in one call."""
        embedder = self._embedder()
        texts = [m.content for m in batch.memories] + [m.content for m in batch.log] + \
            [report_text(r.summary, r.key_events) for r in batch.reports]
        if embedder is None or not texts:
            return
        vectors = iter(embedder.embed_documents(texts))
        model = embedder.model_id

        def embedded[T: BaseModel](item: T) -> T:
            return item.model_copy(update={"embedding": encode_vector(next(vectors)), "embedding_model": model})

        batch.memories = [embedded(m) for m in batch.memories]
        batch.log = [embedded(m) for m in batch.log]
        batch.reports = [embedded(r) for r in batch.reports]


def _retires(successor: Memory | None, memory: Memory) -> bool:
    """`successor` is the version that retired `memory` (both ends of the link agree)."""
    return successor is not None and successor.supersedes == memory.memory_key \
        and memory.superseded_by == successor.memory_key


def _exported_version(memory: Memory) -> ExportedVersion:
    return ExportedVersion.model_validate(memory.model_dump(
        exclude={"tenant_id", "user_id", "content_hash", "embedding", "embedding_model", "expires_at"}))


def _stored_memory(scope: ScopeRef, version: ExportedVersion, written_by: str | None = None) -> Memory:
    return Memory.model_validate({**version.model_dump(), "tenant_id": scope.tenant_id, "user_id": scope.user_id,
                                  "content_hash": content_hash(version.content), "origin": Origin.IMPORT,
                                  "written_by": written_by})


def _same_memory(stored: Memory, imported: Memory) -> bool:
    """The same memory, whatever happened to it since (retired, read): its content, type, field and time."""
    return (stored.content_hash, stored.memory_type, stored.field, stored.created_at) == \
        (imported.content_hash, imported.memory_type, imported.field, imported.created_at)


def _synonyms_used(record: ExportedMemory, table: dict[str, dict[str, float]]) -> list[ExportedSynonym]:
    """The tenant's synonym pairs either of whose terms the memory's text or keywords hold."""
    if not table:
        return []
    text = " ".join(normalize_keyword(t) for v in record.versions
                    for t in [v.content, *(k.term for k in v.keywords)])
    used = []
    for keyword, synonyms in table.items():
        for synonym, score in synonyms.items():
            if keyword in text or synonym in text:
                used.append(ExportedSynonym(keyword=keyword, synonym=synonym, similarity_score=score))
    return used


def _within_one_transaction(kind: str, unit: str, value: int, limit: int, measured: str) -> None:
    """A 413 naming the page's `kind` of excess when `value` passes what one import transaction holds."""
    if value > limit:
        raise PayloadTooLarge(f"this page {measured}; one import writes at most {limit} (one transaction): split it "
                              "into smaller pages",
                              details=[{"field": "body", "type": kind, "limit": limit, unit: value}])
