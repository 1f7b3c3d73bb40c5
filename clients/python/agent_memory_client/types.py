"""The shapes of the API's requests and answers, as TypedDicts (plain dicts at run time).

Answers are decoded JSON: every key the server's model defines is present (the server writes nulls),
so the answer TypedDicts are total; a key the server adds later simply shows up in the dict. Where a
shape is large and caller-defined (the inject request, an Anthropic tool definition) it is `dict[str, Any]`.

Names follow the OpenAPI document's schemas (GET /openapi.json); the client-side name is given where it differs.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

MemoryType = Literal["FACT", "PREFERENCE", "INTENT"]
Scope = Literal["users", "projects"]
HotMemoryType = Literal["meta", "status", "decision", "preference"]
SearchMode = Literal["semantic", "keyword", "hybrid"]
Role = Literal["user", "assistant"]
SaveOutcome = Literal["created", "superseded", "duplicate", "merged"]


# ----------------------------------------------------------------------------------------------- requests


class _KeywordRequired(TypedDict):
    term: str


class Keyword(_KeywordRequired, total=False):
    """A search keyword and its weight (0-1, default 1)."""

    weight: float


class _NewMemoryRequired(TypedDict):
    memory_type: MemoryType
    content: str


class NewMemory(_NewMemoryRequired, total=False):
    """One item of `save_batch` (the `CreateMemoryRequest` schema). `keywords` may also be plain strings."""

    category: str
    field: str
    importance: int
    keywords: list[Keyword | str]
    source: str
    conversation_id: str
    metadata: dict[str, Any]
    created_at: str
    context: str
    retraction: bool  # it takes its slot back ("I'm not allergic to peanuts"): `field` is then required


class _LogMessageRequired(TypedDict):
    role: Role
    content: str


class LogMessage(_LogMessageRequired, total=False):
    """One message for `log` (`LogMessageIn`). `created_at` needs a timezone; a `message_id` needs its
    `created_at`, and a message carrying both is written once however often it is sent."""

    intent: str
    created_at: str
    message_id: str
    author_id: str


class _IntentRequired(TypedDict):
    type: str


class Intent(_IntentRequired, total=False):
    """A message's intent for `intent_context`: a type (QA_QUERY, QC_TASK, question...) and what it is about."""

    query: str
    entities: dict[str, Any]


class ToolUseBlock(TypedDict):
    """An Anthropic `tool_use` content block, as the model wrote it."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


# ----------------------------------------------------------------------------------------------- memories


# How a memory version came to be stored: extracted from a conversation turn, saved directly (POST /memories,
# /memories/batch), imported, written by the memory tool or by a tool call the API executed; `unknown` for versions
# stored before provenance was recorded.
Origin = Literal["extract", "direct_save", "import", "memory_tool", "tool_executor", "unknown"]


class Memory(TypedDict):
    """A stored memory version. `superseded_at` set means it is history, never current: a newer version took over
    (`superseded_by`) or it was deleted (`deleted_at`). It was valid (what was known) from `valid_from` until
    `superseded_at`. `origin` and `written_by` (the token subject, None without a token) are its provenance."""

    memory_key: str
    tenant_id: str
    user_id: str
    memory_type: MemoryType
    content: str
    category: str | None
    field: str | None
    importance: int
    keywords: list[Keyword]
    source: str
    conversation_id: str | None
    metadata: dict[str, Any]
    content_hash: str
    created_at: str
    updated_at: str
    valid_from: str
    superseded_at: str | None
    superseded_by: str | None
    supersedes: str | None
    access_count: int
    last_accessed_at: str | None
    version: int
    context: str | None
    embedding_model: str | None
    deleted_at: str | None
    origin: Origin
    written_by: str | None
    expires_at: str | None  # when the tenant's retention policy ends it (None: kept until deleted)
    retraction: bool  # it took its slot back (a denial, a withdrawal, an ending): no profile value


class SaveResponse(TypedDict):
    """`save`: 201 when stored (`created` or `superseded` an older value of the field), 200 `duplicate` or
    `merged` (nothing stored: `memory` is the one already there, its field in `skipped_fields`)."""

    outcome: SaveOutcome
    memory: Memory
    superseded: Memory | None
    skipped_fields: list[str]


class BatchItemResult(TypedDict):
    index: int
    memory_key: str
    outcome: SaveOutcome
    superseded_key: str | None


class BatchSaveResponse(TypedDict):
    saved_count: int
    memory_keys: list[str]
    results: list[BatchItemResult]


class _SavedRetraction(TypedDict, total=False):
    retraction: bool  # present (true) only when the memory takes its slot back


class SavedMemory(_SavedRetraction):
    """A memory `extract` saved, in the save_info action's specified shape: `memoryType` is camelCase here only
    (`memory_type` everywhere else); `field` is the slot it fills as stored (`age`, `preference.tea`)."""

    memoryType: MemoryType
    content: str
    field: str


class _RetractedInfo(TypedDict, total=False):
    retracted_info: dict[str, Any]  # present only when the turn takes fields back: field -> item(s), None = all


class ExtractResponse(_RetractedInfo):
    """`extract` (the `SaveInfoOutput` schema): what was extracted from the turn and what was saved;
    `skipped_sentences`: the user's sentences no memory came from; `note`: set when the offline rules read the
    turn (no LLM configured on the server), saying that an LLM extractor reads more."""

    action: str
    extracted_info: dict[str, Any]
    saved_count: int
    saved_memories: list[SavedMemory]
    skipped_fields: list[str]
    skipped_sentences: list[str]
    note: str | None


class _PurgedVersions(TypedDict, total=False):
    purged_versions: list[str]  # with purge=True only: every version removed, oldest first


class DeletedMemory(_PurgedVersions):
    deleted: bool
    memory_key: str


class MemoryPage(TypedDict):
    """One page of `list_memories`; pass `next_cursor` back for the next (None on the last page)."""

    items: list[Memory]
    next_cursor: str | None


class MemoryDetail(TypedDict):
    """`get_memory` (`MemoryDetailOutput`): the memory and every version of its field."""

    memory: Memory
    history: list[Memory]


# ------------------------------------------------------------------------------------------------- search


class ScoreBreakdown(TypedDict):
    keyword: float
    text: float
    lexical: float
    vector: float
    time_decay: float
    relevance: float
    interaction: float
    type_priority: float
    final: float
    matched_keywords: list[str]
    redundancy: float  # highest cosine similarity to a result above it (results come diversified)
    term_coverage: float  # share of the query's terms the memory's text holds
    topic: float  # share of the query's everyday topics the memory names too
    absolute_relevance: float  # calibrated, comparable across queries: what min_relevance_score bounds


class SearchResult(TypedDict):
    """One hit of `search` or `recall` (`MemorySearchResult`)."""

    memory_key: str
    summary: str
    content_preview: str
    memory_type: MemoryType
    relevance_score: float
    created_at: str
    keywords: list[str]
    metadata: dict[str, Any]
    score_breakdown: ScoreBreakdown
    recall_round: str


class TimeCue(TypedDict):
    """The period a query named ("in July 2023"): time in relevance measured closeness to it, [start, end)."""

    text: str
    start: str
    end: str


class SearchResponse(TypedDict):
    """`search` (`SearchMemoriesOutput`): the results and how they were found."""

    total_found: int
    results: list[SearchResult]
    search_strategy_used: str
    expanded_keywords: list[str] | None
    rounds_executed: int
    time_cue: TimeCue | None
    as_of: str | None  # the instant searched as of (UTC), as requested; None: the current memories



class RecallDecision(TypedDict):
    needs_recall: bool
    intent_type: str
    confidence: float
    urgency: Literal["low", "medium", "high"]
    is_complex_query: bool
    search_queries: list[str]
    keywords: list[str]
    memory_types: list[MemoryType] | None
    reasoning: str


class RecallResponse(TypedDict):
    """`recall` (`RecallOutput`): the decision, the memories, `[memory:key:full]` placeholders and the context."""

    decision: RecallDecision
    memories: list[SearchResult]
    search_strategy_used: str | None
    rounds_executed: int
    placeholders: list[str]
    context: str | None


class ResolvedText(TypedDict):
    text: str
    placeholders: list[str]
    missing: list[str]


class LoadedMemory(TypedDict):
    """A memory as `load_context` answers it, in the load_context action's specified shape (`type` and
    `createdAt`; `memory_type` and `created_at` everywhere else)."""

    type: MemoryType
    content: str
    importance: int
    category: str | None
    createdAt: str | None


class LoadContextResponse(TypedDict):
    """`load_context` (`LoadContextOutput`)."""

    action: str
    memories: list[LoadedMemory]
    user_profile_summary: str | None
    total_memories: int
    as_of: str | None  # the instant loaded as of (UTC), as requested; None: the current memories


class Completeness(TypedDict):
    score: int
    filled_fields: list[str]
    missing_fields: list[str]


class BasicProfile(TypedDict, total=False):
    age: str
    education: str
    university: str
    major: str
    nationality: str
    location: str
    languageSkills: str


class CareerProfile(TypedDict, total=False):
    jobTitle: str
    industry: str  # stated, or read from the job title (前端开发 -> IT/互联网)
    company: str
    yearsOfExperience: str
    annualIncome: str


class ImmigrationProfile(TypedDict, total=False):
    targetCategories: list[str]
    timeline: str
    hasHKEmployer: bool  # formerly hasHongKongEmployer
    hasTechBackground: bool
    investmentCapacity: str  # formerly investmentAmount


class FamilyProfile(TypedDict, total=False):
    """Always present: 未知 / unknown for an unknown text, None for unknown children."""

    maritalStatus: str
    hasChildren: bool | None
    familySupport: str


class UserProfile(TypedDict, total=False):
    """The immigration pack's sections (the default pack); a section holds only the fields that are known (family
    aside). A tenant on the general pack gets its own: basic, work, family, health, preferences, goals."""

    basic: BasicProfile
    career: CareerProfile
    immigration: ImmigrationProfile
    family: FamilyProfile


class SummarizeResponse(TypedDict):
    """`summarize` (`SummarizeOutput`): `user_profile` by section (the immigration pack's: basic, career,
    immigration, family)."""

    action: str
    user_profile: UserProfile
    completeness: Completeness
    narrative_summary: str
    as_of: str | None  # the instant the profile was built as of (UTC); None: from the current memories


class TokenUsage(TypedDict):
    """The budget: `available` (the window less `reserved_output` and `reserved_system`) is what the history and
    the context share; `within_budget` is false when the recent turns and P0 blocks alone pass it."""

    available: int
    reserved_output: int
    reserved_system: int
    messages_before: int
    messages_after: int
    context: int
    counted_by: Literal["estimate", "anthropic"]
    within_budget: bool


class InjectedBlock(TypedDict):
    type: str
    priority: str
    tokens: int
    cache_ttl_seconds: float
    cached: bool


class FailedBlock(TypedDict):
    type: str
    priority: str
    reason: str


class InjectionResult(TypedDict):
    """`inject`: an Anthropic Messages request's `messages` (and `system`) with the context blocks placed."""

    messages: list[dict[str, Any]]
    system: list[dict[str, Any]] | None
    injected_contexts: list[str]
    dropped_contexts: list[str]
    failed_contexts: list[FailedBlock]
    total_context_tokens: int  # the blocks and the frame around them
    blocks_tokens: int  # the blocks alone
    compacted: bool
    compaction_steps: list[str]
    blocks: list[InjectedBlock]
    token_usage: TokenUsage


# -------------------------------------------------------------------------------- hot memory, log, reports


class HotMemoryEntry(TypedDict):
    """An L2 hot-memory entry, unique per (scope, type, key); `set_hot_memory` answers it."""

    type: HotMemoryType
    key: str
    value: Any
    priority: int
    source: Literal["api", "llm"]
    created_at: str
    updated_at: str


class UnreadableHotEntry(TypedDict):
    """A stored entry left out of a read, and why (delete it, or set it again, to clear this)."""

    type: HotMemoryType
    key: str
    reason: str


class HotMemoryView(TypedDict):
    """`get_hot_memory`: the entries by priority, and grouped by section; `unreadable`, entries stored nested
    deeper than values may be now, left out until deleted or set again."""

    scope: dict[str, str]
    entries: list[HotMemoryEntry]
    meta: list[HotMemoryEntry]
    status: list[HotMemoryEntry]
    decisions: list[HotMemoryEntry]
    preferences: list[HotMemoryEntry]
    unreadable: list[UnreadableHotEntry]


class HotMemoryDeleted(TypedDict):
    deleted: bool
    type: HotMemoryType
    key: str


class HotMemoryRefresh(TypedDict):
    """`refresh_hot_memory`: status, decisions and preferences rewritten from the recent log."""

    scope: dict[str, str]
    status: Literal["refreshed", "skipped", "no_messages"]
    reason: str | None
    messages_read: int
    entries: list[HotMemoryEntry]
    unchanged: int
    kept_api_entries: list[str]


class StoredMessage(TypedDict):
    message_id: str
    role: str
    created_at: str
    expires_at: str


class _AppendResultRequired(TypedDict):
    scope: dict[str, str]
    conversation_id: str
    stored_count: int
    message_ids: list[str]
    messages: list[StoredMessage]
    expires_at: str
    queued_extractions: list[str]


class AppendResult(_AppendResultRequired, total=False):
    """`log`: the stored messages; with `extract=True`, the message ids queued (and any that failed to queue)."""

    failed_extractions: list[str]


class LogHit(TypedDict):
    id: str
    message_id: str
    conversation_id: str
    role: str
    content: str
    intent: str | None
    created_at: str
    similarity: float


class LogSearchResult(TypedDict):
    scope: dict[str, str]
    total_found: int
    results: list[LogHit]


class _ReportRequired(TypedDict):
    week_start: str
    week_end: str
    summary: str
    key_events: list[str]
    metrics: dict[str, Any]
    generated_by: str
    created_at: str


class Report(_ReportRequired, total=False):
    """An L3 weekly report (`ReportView`); `similarity` is set by `search_reports`."""

    similarity: float | None


class ReportList(TypedDict):
    scope: dict[str, str]
    reports: list[Report]


class ContextPart(TypedDict):
    layer: Literal["hot_memory", "reports", "log"]
    items: int
    tokens: int
    text: str


class IntentContext(TypedDict):
    """`intent_context`: hot memory always, reports and log for question-like intents, within `max_tokens`."""

    scope: dict[str, str]
    context: str
    parts: list[ContextPart]
    skipped: list[str]
    tokens: int
    max_tokens: int


# ------------------------------------------------------------------------------------------ tenant, tools


class SynonymEntry(TypedDict):
    synonym: str
    similarity_score: float


class SynonymList(TypedDict):
    keyword: str
    synonyms: list[SynonymEntry]


class SynonymsAdded(TypedDict):
    keyword: str
    synonyms: list[str]
    stored_pairs: int


class ToolCatalogue(TypedDict):
    """`tools`: Anthropic tool definitions (`name`, `description`, `input_schema`) and the system prompt."""

    tools: list[dict[str, Any]]
    system_prompt: str


class _ToolResultRequired(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str


class ToolResult(_ToolResultRequired, total=False):
    """`execute_tool`: an Anthropic `tool_result` block, ready for the next user message. `is_error` is true
    for a mistake the model can fix (bad argument, unknown tool, missing memory); absent or null otherwise."""

    is_error: bool | None


class MemoryToolResult(TypedDict):
    """`memory_tool`: the memory_20250818 command's text, and whether it is an error for the model."""

    content: str
    is_error: bool


# ------------------------------------------------------------------------------------------------ service

PartStatus = Literal["ok", "down"]


class TableHealth(TypedDict):
    status: PartStatus
    latency_ms: float | None
    error: str | None


class QueueHealth(TypedDict):
    status: PartStatus
    depth: int | None
    in_flight: int | None
    error: str | None


class WorkersHealth(TypedDict):
    status: PartStatus
    alive: bool


class EmbedderHealth(TypedDict):
    """`loaded`: the model is in memory; `lazy`: it loads on the first request that needs it (a probe never
    loads it)."""

    status: PartStatus
    model: str | None
    loaded: bool
    lazy: bool
    error: str | None


class SearchHealth(TypedDict):
    """The search tier: `serverless` (nothing apart to probe) or `opensearch` (the index's alias, probed)."""

    tier: Literal["serverless", "opensearch"]
    status: PartStatus
    latency_ms: float | None
    error: str | None


class HealthStatus(TypedDict):
    """`health_status`: up or down, for anyone (`GET /health`)."""

    status: Literal["ok", "unavailable"]


class Health(TypedDict):
    """`health`: `status` `unavailable` when any part is `down`. `queues` and `workers` are the local stack's;
    null deployed, where SQS and Lambda run them. `pack`: the deployment's domain pack."""

    status: Literal["ok", "unavailable"]
    tables: dict[str, TableHealth]
    queues: dict[str, QueueHealth] | None
    workers: WorkersHealth | None
    embedder: EmbedderHealth
    search: SearchHealth
    pack: str | None


class StoreErasure(TypedDict):
    """One store's part of an erasure: items `found`, `removed`, and still found by the final check
    (`remaining`)."""

    store: str
    found: int
    removed: int
    remaining: int


class ErasureReceipt(TypedDict):
    """`erase` and `get_erasure`. `status` `in_progress` (HTTP 202): call `erase` again to continue;
    `complete`: `verified` says the final check found nothing of the scope in any store. Work queued before
    `requested_at` is dropped by the workers until `tombstone_expires_at`."""

    erasure_id: str
    tenant_id: str
    scope_type: Scope
    scope_id: str
    status: Literal["complete", "in_progress"]
    requested_at: str
    requested_by: str | None
    completed_at: str | None
    stores: list[StoreErasure]
    verified: bool
    passes: int
    tombstone_expires_at: str


# ----------------------------------------------------------------------------------------- export and import


class ExportedVersion(TypedDict):
    """One version of a memory as stored (no embedding)."""

    memory_key: str
    memory_type: MemoryType
    content: str
    category: str | None
    field: str | None
    importance: int
    keywords: list[Keyword]
    source: str
    conversation_id: str | None
    metadata: dict[str, Any]
    context: str | None
    created_at: str
    updated_at: str
    valid_from: str
    superseded_at: str | None
    superseded_by: str | None
    supersedes: str | None
    version: int
    access_count: int
    last_accessed_at: str | None
    deleted_at: str | None  # a deleted version: its validity ended then
    origin: Origin  # provenance as stored; an import records its own (`import`, the importing token's subject)
    written_by: str | None
    retraction: bool


class ExportedMemory(TypedDict):
    """A memory with its version history, oldest first (the last one current, unless it was deleted)."""

    versions: list[ExportedVersion]


class ExportedLogMessage(TypedDict):
    message_id: str
    conversation_id: str
    role: Role
    content: str
    intent: str | None
    author_id: str | None
    created_at: str
    expires_at: str


class ExportedHotEntry(TypedDict):
    type: HotMemoryType
    key: str
    value: Any
    priority: int
    source: Literal["api", "llm"]
    created_at: str
    updated_at: str


class ExportedReport(TypedDict):
    week_start: str
    week_end: str
    summary: str
    key_events: list[str]
    metrics: dict[str, Any]
    generated_by: Literal["llm", "extractive"]
    created_at: str


class ExportedFile(TypedDict):
    """A memory-tool entry: a file with its text, or a directory (`is_directory`, `text` null)."""

    path: str
    is_directory: bool
    text: str | None
    created_at: str
    updated_at: str | None
    version: int


class ExportedSynonym(TypedDict):
    keyword: str
    synonym: str
    similarity_score: float


class ExportedScope(TypedDict):
    type: Literal["user", "project"]
    id: str


class LeftOut(TypedDict):
    """A record the export could not write as an import takes it (a value stored too deep before the limit)."""

    section: Literal["memories", "log", "hot_memory", "reports", "files"]
    key: str
    reason: str


class _LeftOut(TypedDict, total=False):
    left_out: list[LeftOut]  # only when the export left a record out


class ExportPage(_LeftOut):
    """`export_page`: one page of the export format (docs/export-format.md); `import_page` takes it as it is."""

    format: Literal["agent-memory-export"]
    version: Literal[1]
    source_tenant_id: str | None
    scope: ExportedScope | None
    exported_at: str | None
    memories: list[ExportedMemory]
    log: list[ExportedLogMessage]
    hot_memory: list[ExportedHotEntry]
    reports: list[ExportedReport]
    files: list[ExportedFile]
    synonyms: list[ExportedSynonym]
    next_cursor: str | None


class ImportedCounts(TypedDict):
    """`memories`: records, as an export page lists them; `memory_versions`: their versions."""

    memories: int
    memory_versions: int
    log: int
    hot_memory: int
    reports: int
    files: int
    synonyms: int


class ImportResult(TypedDict):
    """`import_page`: what the page wrote, and what the scope held already (or had expired)."""

    scope: dict[str, str]
    imported: ImportedCounts
    skipped: ImportedCounts


class RetentionPolicy(TypedDict):
    """`retention`: days kept per memory type (`FACT`, `PREFERENCE`, `INTENT`; None: until deleted) and for the
    conversation log (`LOG`); `tenant_specific` when the tenant has a policy of its own."""

    tenant_id: str
    days: dict[str, int | None]
    tenant_specific: bool
