"""The small interfaces the services depend on. Adapters implement them; tests use fakes. A scope's erasure and
its export and import have theirs in `ports.lifecycle` (re-exported here)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.memory_tool.memory_files import MemoryDirectory, MemoryEntry, MemoryFile, MemoryUsage
from agent_memory.domain.models import (
    AccessStats,
    ExtractedMemory,
    JsonObject,
    Memory,
    MemoryPage,
    MemoryType,
    NewMemory,
    SaveResult,
    ScopeRef,
    StoreVersions,
)
from agent_memory.domain.search.index_changes import IndexChanges, RecentWrites
from agent_memory.domain.search.ranking import Candidate
from agent_memory.domain.tiers.memory_layers import (
    EmbeddingJob,
    ExtractionJob,
    HotMemoryEntry,
    HotMemoryType,
    LogKey,
    LogMessage,
    WeeklyReport,
)
from agent_memory.domain.tiers.reports import ReportDraft, WeekLog
from agent_memory.ports.lifecycle import IndexEraser as IndexEraser
from agent_memory.ports.lifecycle import ScopeArchive as ScopeArchive
from agent_memory.ports.lifecycle import TableEraser as TableEraser


class Embedder(Protocol):
    """Text embeddings. Vectors are L2-normalised float32 arrays of length `dimension`."""

    model_id: str
    dimension: int

    def embed_documents(self, texts: list[str]) -> np.ndarray: ...  # (n, dimension)

    def embed_query(self, text: str) -> np.ndarray: ...  # (dimension,)


class CandidateQuery(BaseModel):
    """What a search tier needs to propose candidates; ranking happens in the library afterwards."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    terms: list[str] = Field(default_factory=list)  # analysed query terms (domain/text/text.tokenize)
    # The query embedding, when the mode uses vectors: the vector, or a call that returns it once computed
    # (a tier does what needs no vector, its reads and keyword scores, while the embedding runs elsewhere).
    vector: np.ndarray | Callable[[], np.ndarray] | None = None
    memory_types: list[MemoryType] | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    k: int = 100  # candidates per retriever (lexical, vector)
    # The share of a conversation neighbour's lexical score a memory adds to its own (domain/search/neighbours.py);
    # both tiers apply it (the OpenSearch tier over its lexical hits and their neighbours).
    neighbour_share: float = 0.0
    # Search the versions valid at this instant instead of the current memories (the as-of tier answers it).
    as_of: datetime | None = None
    # Retention (set by RetainedIndex): a memory of one of these types created before its moment is expired, and
    # proposed by no tier.
    expired_before: dict[MemoryType, datetime] = Field(default_factory=dict)

    def query_vector(self) -> np.ndarray | None:
        """The query embedding, waiting for it when it was given as a call (then kept: called once)."""
        if callable(self.vector):
            self.vector = self.vector()
        return self.vector


class SearchIndex(Protocol):
    """A search tier: proposes candidate memories of one user (never another's)."""

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]: ...

    def vectors(self, user: ScopeRef, memory_keys: list[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of these memories of the user, L2-normalised (to diversify a ranking); a
        memory without one is left out."""
        ...

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        """For each row of `vectors` (L2-normalised, the embedder's), the user's current memories nearest to it, at
        most k, nearest first, each with its cosine in `vector`: one read for a whole batch of new memories."""
        ...

    def memory_cache(self) -> MemoryCache | None:
        """The user memories this tier holds in the process, when it holds them (the serverless tier), for reads
        to be served from and an erasure to drop; None, the default of a tier subclassing this port, for a tier
        that holds none (OpenSearch)."""
        return None


class MemoryCache(Protocol):
    """A search tier's in-process copy of users' current memories, kept to the store's version."""

    def current_memories(self, user: ScopeRef) -> list[Memory]:
        """The user's current memories as of the store's version (expired ones still in: a tier wrapped in
        RetainedIndex leaves them out)."""
        ...

    def forget(self, user: ScopeRef) -> None:
        """Drop all the process holds of the user (the user was erased)."""
        ...


class IndexedMemories(Protocol):
    """What the serverless tier's index reads of a store (a MemoryStore is one): the version counters, the
    memories it indexes and their access statistics."""

    def versions(self, user: ScopeRef) -> StoreVersions: ...

    def all_current(self, user: ScopeRef) -> list[Memory]: ...

    def access_stats(self, user: ScopeRef) -> dict[str, AccessStats]: ...

    def changes(self, user: ScopeRef, after: StoreVersions, through: StoreVersions) -> IndexChanges | None:
        """What changed from one version to another, or None when the store cannot say (then it is read)."""
        ...


class IndexSnapshotStore(Protocol):
    """Saved search indexes of the serverless tier (opaque bytes), one per user, keyed by the user's content
    version. A failure reads as "no snapshot" and a skipped save: a snapshot only ever saves time."""

    def get(self, user: ScopeRef, version: int) -> bytes | None:
        """The snapshot saved for exactly this version, whole and intact; None for anything else (none saved,
        another version's, a damaged or half-written one)."""
        ...

    def newest(self, user: ScopeRef, at_most: int) -> bytes | None:
        """The newest whole snapshot of a version up to `at_most` (changes since are applied to it), or None."""
        ...

    def put(self, user: ScopeRef, version: int, encode: Callable[[], bytes]) -> bool:
        """Save the snapshot `encode` makes as the user's, in place of older versions' (`encode` runs only when
        one is to be saved). False when none was: a later version's is there, the last one is too recent, or
        the write failed."""
        ...


class ConversationTurn(BaseModel):
    """One user/assistant exchange handed to the extractor (what save_info receives)."""

    user_message: str
    assistant_message: str = ""
    existing_info: JsonObject = Field(default_factory=dict)


class MemoryExtractor(Protocol):
    """Finds memories worth keeping in a conversation turn (LLM or offline rules)."""

    def extract(self, turn: ConversationTurn) -> list[ExtractedMemory]: ...


class MemoryStore(Protocol):
    """Source of truth for memories. Every write bumps the user's version counter."""

    def save(self, user: ScopeRef, memory: NewMemory) -> SaveResult: ...

    def save_many(self, user: ScopeRef, memories: list[NewMemory]) -> list[SaveResult]:
        """In order, with the results `save` one by one would give (a store may batch the writes).
        A fault part-way raises `PartialSave` carrying the results of the items written before it."""
        ...

    def history(self, user: ScopeRef, memory: Memory) -> list[Memory]: ...

    def list_current(
        self,
        user: ScopeRef,
        *,
        memory_type: MemoryType | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> MemoryPage: ...

    def all_current(self, user: ScopeRef) -> list[Memory]: ...

    def all_versions(self, user: ScopeRef) -> list[Memory]:
        """Every version stored of every memory of the user: current, superseded and deleted (what as-of reads
        choose from)."""
        ...

    def get(self, user: ScopeRef, memory_key: str) -> Memory | None:
        """The version stored under the key; None when there is none or it was deleted."""
        ...

    def delete(self, user: ScopeRef, memory_key: str) -> Memory:
        """Retire the version: it leaves what is current and stays as history marked `deleted_at` (valid until
        the delete). Returns it as it was; NotFound when there is none or it was deleted already."""
        ...

    def purge(self, user: ScopeRef, memory_key: str) -> list[Memory]:
        """Remove the memory and every version of its field for good (deleted and expired ones too), and every
        copy of their text the store keeps for speed: nothing reads them again, not even as of a past instant.
        Returns the versions removed, oldest first; NotFound when no version has the key."""
        ...

    def user_version(self, user: ScopeRef) -> int: ...

    def changes(self, user: ScopeRef, after: StoreVersions, through: StoreVersions, *,
                every_version: bool = False) -> IndexChanges | None:
        """What the writes from version `after` to `through` stored: the memories to index as they now stand and
        the keys to drop, of the current memories (or with `every_version`, of every version). None when the
        store cannot say (it keeps no change log that far back): a search index is then built again."""
        ...

    def recent_writes(self, user: ScopeRef, since: float, *, limit: int = 50) -> RecentWrites:
        """What the writes after `since` (epoch seconds) stored, from the change log's newest records (at most
        `limit` of them): for a search index fed off the request path, which may not have them yet."""
        ...

    def versions(self, user: ScopeRef) -> StoreVersions:
        """Both counters in one read: content (as `user_version`) and recorded access."""
        ...

    def access_stats(self, user: ScopeRef) -> dict[str, AccessStats]:
        """Access counts and last access of the user's memories that were ever read, by memory key."""
        ...

    def record_access(self, user: ScopeRef, memory_keys: list[str], accessed_at: datetime) -> None: ...


class TableProbe(Protocol):
    """A cheap read showing the table answers (the health check): returns, or raises StoreUnavailable."""

    def ping(self) -> None: ...


class CachedContext(BaseModel):
    """A context block's body as cached: fresh until `expires_at` (epoch seconds)."""

    content: str
    created_at: float
    expires_at: float


class ContextCache(Protocol):
    """Context blocks shared across containers (a per-conversation cache, made durable).
    Keys are per user; an expired entry is never returned, whatever the backend's TTL sweeper did."""

    def get(self, user: ScopeRef, key: str, *, now: float) -> CachedContext | None: ...

    def put(self, user: ScopeRef, key: str, entry: CachedContext) -> None: ...


class TokenCounter(Protocol):
    """Exact token counts (Anthropic's count_tokens). None = could not count; the caller estimates."""

    def count(self, messages: list[JsonObject]) -> int | None: ...


class WeeklyReportWriter(Protocol):
    """Writes a week's report prose from its log (Claude, or the offline extractive writer)."""

    generated_by: Literal["llm", "extractive"]

    def write(self, week: WeekLog) -> ReportDraft: ...


class HotMemoryRefresher(Protocol):
    """Proposes hot-memory entries (status, decisions, preferences; source "llm") from a scope's recent log."""

    def refresh(self, messages: list[LogMessage], existing: list[HotMemoryEntry], *, project: bool,
                now: datetime) -> list[HotMemoryEntry]: ...


class TaskQueue(Protocol):
    """A work queue of JSON task bodies (SQS in AWS)."""

    def send(self, bodies: list[str]) -> None: ...


class ExtractionQueue(Protocol):
    def enqueue(self, jobs: list[ExtractionJob]) -> list[str]:
        """Queue the jobs; returns the message ids that could not be queued."""
        ...

    def enqueue_embedding(self, job: EmbeddingJob) -> bool:
        """Queue the embedding of logged messages; False when it could not be queued."""
        ...


class LayerStore(Protocol):
    """The three layers of a scope (L1 conversation log, L2 hot memory, L3 weekly reports) and the
    rollup's record of which scopes were active in a week. Everything lives in the scope's partition."""

    shards: int  # how many shards the active-scope markers are spread over

    # L1: the conversation log
    def append_messages(self, scope: ScopeRef, messages: list[LogMessage], weeks: set[date]) -> None:
        """All or nothing, with the scope's active-week markers; the same id and time overwrites itself."""
        ...

    def log_messages(self, scope: ScopeRef, *, start: datetime | None = None, end: datetime | None = None,
                     now: datetime | None = None) -> list[LogMessage]:
        """Unexpired messages in [start, end), oldest first."""
        ...

    def logged_messages(self, scope: ScopeRef, keys: list[LogKey]) -> list[LogMessage]:
        """The messages at these keys that are still there (one read; missing ones are left out)."""
        ...

    def set_log_embeddings(self, scope: ScopeRef, messages: list[LogMessage]) -> None:
        """Store each message's embedding on its item, if the item is still there (never recreates one)."""
        ...

    def recent_log(self, scope: ScopeRef, *, limit: int, now: datetime | None = None) -> list[LogMessage]:
        """The newest `limit` unexpired messages, oldest first."""
        ...

    def delete_expired_log(self, scope: ScopeRef, now: datetime) -> int: ...

    def claim_extraction(self, scope: ScopeRef, message_id: str, lease_seconds: int = 300) -> bool:
        """True = this delivery may extract the message (no done marker, no other live lease)."""
        ...

    def finish_extraction(self, scope: ScopeRef, message_id: str, saved: int) -> None: ...

    def release_extraction(self, scope: ScopeRef, message_id: str) -> None: ...

    # L2: hot memory
    def put_hot(self, scope: ScopeRef, entry: HotMemoryEntry) -> HotMemoryEntry:
        """Upsert by (scope, type, key), keeping the first created_at."""
        ...

    def hot_memory(self, scope: ScopeRef) -> list[HotMemoryEntry]:
        """Highest priority first, then most recently updated."""
        ...

    def delete_hot(self, scope: ScopeRef, type_: HotMemoryType, key: str) -> None:
        """NotFound when there is no such entry."""
        ...

    # L3: weekly reports
    def put_report_if_absent(self, scope: ScopeRef, report: WeeklyReport) -> bool: ...

    def report_stage(self, scope: ScopeRef, week_start: date) -> str | None: ...

    def replace_report(self, scope: ScopeRef, report: WeeklyReport) -> bool:
        """Replace the week's report with one covering more of its log (`metrics["messages"]`), its rollup stage
        back to "written": False when the stored one covers as many (a concurrent re-run won)."""
        ...

    def mark_report_stage(self, scope: ScopeRef, week_start: date, stage: str) -> None: ...

    def reports(self, scope: ScopeRef) -> list[WeeklyReport]:
        """Newest week first."""
        ...

    # the rollup's fan-out
    def active_scopes(self, week_start: date, shard: int, *, cursor: JsonObject | None = None,
                      limit: int = 500) -> tuple[list[ScopeRef], JsonObject | None]: ...


class SynonymSource(Protocol):
    """A tenant's synonyms (a table in AWS), looked up for a query's terms."""

    def synonyms_for(self, tenant_id: str, terms: list[str]) -> dict[str, list[tuple[str, float]]]: ...


class SynonymStore(SynonymSource, Protocol):
    """The tenant's synonyms, also written (POST /v1/synonyms)."""

    def add(self, tenant_id: str, keyword: str, synonyms: list[str], similarity: float) -> int:
        """Store each synonym both ways with the keyword; returns how many pairs were written."""
        ...

    def pairs(self, tenant_id: str) -> dict[str, dict[str, float]]:
        """Every synonym of the tenant: keyword -> synonym -> similarity (each direction as stored)."""
        ...

    def forget(self, tenant_id: str) -> None:
        """Drop what this process cached of the tenant's synonyms (they were written around the store)."""
        ...


class Retriever(Protocol):
    """A pluggable knowledge, experience, SOP or protocol source (e.g. the HTTP retriever): items of
    `{content, source, similarity, category}`."""

    def retrieve(self, user: ScopeRef, query: str, limit: int) -> list[JsonObject]: ...


class MemoryFileStore(Protocol):
    """The memory tool's files of one user, in the user's partition. Paths are canonical (memory_paths).
    Every entry's parent directories below /memories exist as entries too: the store keeps it so."""

    def get(self, user: ScopeRef, path: str) -> MemoryFile | MemoryDirectory | None: ...

    def list_under(self, user: ScopeRef, directory: str) -> list[MemoryEntry]:
        """Every file and directory below `directory`, at any depth, by path; texts are not read."""
        ...

    def usage(self, user: ScopeRef) -> MemoryUsage: ...

    def create(self, user: ScopeRef, file: MemoryFile) -> None:
        """The file and its missing parent directories, all or nothing. Conflict when something is at the
        path already or a parent is a file."""
        ...

    def update(self, user: ScopeRef, path: str, text: str, *, expected_version: int, now: datetime) -> None:
        """New text for a file, if it is still at `expected_version`; else Conflict (edited or gone meanwhile)."""
        ...

    def delete(self, user: ScopeRef, path: str) -> int:
        """A file, or a directory with everything below it; how many entries went (0: nothing was there)."""
        ...

    def rename(self, user: ScopeRef, old_path: str, new_path: str, *, now: datetime) -> None:
        """Move a file, or a directory with everything below it, all or nothing, creating the new path's
        missing parents. NotFound without a source; Conflict when the destination is taken, a parent of it is
        a file, or the source changed meanwhile; InvalidInput past MAX_RENAME_ENTRIES entries."""
        ...
