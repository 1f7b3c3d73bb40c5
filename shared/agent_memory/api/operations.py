"""Every HTTP operation: its route, the models its handler validates with, and what it answers.

The OpenAPI document is built from this table, and a test holds the table to the handlers (the same
routes, the same request models) and to template.yaml (the same routes), so the three never drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from agent_memory.api.erasure import ErasureReceiptView, RetentionView
from agent_memory.api.inject import InjectionRequest, InjectionResult
from agent_memory.api.load import ListMemoriesQuery, LoadContextOutput, LoadContextRequest, ResolvedText, ResolveRequest
from agent_memory.api.log import AppendMessagesRequest, AppendResult, LogSearchRequest, LogSearchResult
from agent_memory.api.memory_layers import (
    HotMemoryDeleted,
    HotMemoryView,
    IntentContext,
    IntentContextRequest,
    PutHotMemoryRequest,
    RefreshHotMemoryRequest,
    ReportList,
    ReportSearchRequest,
)
from agent_memory.api.memory_tool import MemoryToolRequest
from agent_memory.api.portability import ExportQuery, ImportResult
from agent_memory.api.profile import SummarizeOutput, SummarizeRequest
from agent_memory.api.save import (
    BatchRequest,
    BatchSaveResponse,
    CreateMemoryRequest,
    DeletedMemory,
    DeleteMemoryQuery,
    ExtractRequest,
    SavedMemoryResponse,
    SaveInfoOutput,
)
from agent_memory.api.search import (
    MemoryDetailOutput,
    RecallOutput,
    RecallRequest,
    SearchMemoriesOutput,
    SearchRequest,
)
from agent_memory.api.synonyms import AddSynonymsRequest, SynonymList, SynonymQuery, SynonymsAdded
from agent_memory.api.tools import ToolCatalogue, ToolResultBlock, ToolsQuery, ToolUseBlock
from agent_memory.domain.health import Health, HealthStatus
from agent_memory.domain.lifecycle.memory_edits import MemoryToolResult
from agent_memory.domain.lifecycle.portable import ExportPage, ImportPage
from agent_memory.domain.models import MemoryPage
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryRefresh


@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # OpenAPI form: /v1/users/{user_id}/memories
    operation_id: str  # the handler's name
    tag: str
    summary: str
    response: type[BaseModel]
    status: int = 200
    body: type[BaseModel] | None = None
    body_required: bool = True
    query: type[BaseModel] | None = None
    also: tuple[int, ...] = ()  # other statuses with the same body (a duplicate save: 200; health's 503)
    public: bool = False  # no token and no tenant: answers nothing of anyone's (the health check)

    @property
    def resolver_path(self) -> str:
        """The path as the handlers' resolver writes it: /v1/users/<user_id>/memories."""
        return self.path.replace("{", "<").replace("}", ">")


_MEMORIES, _CONTEXT, _LAYERS, _TENANT = "memories", "context", "hot memory, log and reports", "tenant"
_TOOLS, _SERVICE, _ERASURE = "agent tools", "service", "erasure and retention"
_PORTABILITY = "export and import"
_USER = "/v1/users/{user_id}"
_SCOPE = "/v1/{scope_type}/{scope_id}"

OPERATIONS: tuple[Operation, ...] = (
    # save function
    Operation("POST", f"{_USER}/memories", "create_memory", _MEMORIES,
              "Save one memory (a duplicate, or a restatement of a current memory, answers 200 with the stored one; "
              "a new value for a field supersedes)",
              SavedMemoryResponse, 201, CreateMemoryRequest, also=(200,)),
    Operation("POST", f"{_USER}/memories/batch", "create_memories", _MEMORIES,
              "Save 1-100 memories in order, all validated before any is written",
              BatchSaveResponse, 201, BatchRequest),
    Operation("POST", f"{_USER}/memories/extract", "extract_memories", _MEMORIES,
              "Extract facts, preferences and intents from a conversation turn and save them",
              SaveInfoOutput, 200, ExtractRequest),
    Operation("DELETE", f"{_USER}/memories/{{memory_key}}", "delete_memory", _MEMORIES,
              "Delete a memory: it stays in its field's history for as-of reads, or with purge=true the memory and "
              "its field's whole history are removed for good", DeletedMemory, query=DeleteMemoryQuery),
    Operation("POST", f"{_USER}/tools/execute", "execute_tool", _TOOLS,
              "Run a model's tool_use block (any tool of GET /v1/tools) and answer its tool_result block",
              ToolResultBlock, 200, ToolUseBlock),
    Operation("POST", f"{_USER}/memory-tool", "memory_tool", _TOOLS,
              "Run one command of Claude's memory tool over the user's /memories files",
              MemoryToolResult, 200, MemoryToolRequest),
    Operation("POST", "/v1/synonyms", "add_synonyms", _TENANT,
              "Add synonyms the tenant's keyword search expands queries with", SynonymsAdded, 201, AddSynonymsRequest),
    Operation("PUT", f"{_SCOPE}/hot-memory/{{memory_type}}/{{key}}", "put_hot_memory", _LAYERS,
              "Set a hot-memory entry (key URL-encoded)", HotMemoryEntry, 200, PutHotMemoryRequest),
    Operation("POST", f"{_SCOPE}/hot-memory/refresh", "refresh_hot_memory", _LAYERS,
              "Refresh status, decisions and preferences from the recent log", HotMemoryRefresh, 200,
              RefreshHotMemoryRequest, body_required=False),
    Operation("DELETE", f"{_SCOPE}/hot-memory/{{memory_type}}/{{key}}", "delete_hot_memory", _LAYERS,
              "Delete a hot-memory entry", HotMemoryDeleted),
    Operation("POST", f"{_SCOPE}/conversations/{{conversation_id}}/messages", "append_messages", _LAYERS,
              "Append messages to the conversation log (optionally extracting memories from user turns)",
              AppendResult, 201, AppendMessagesRequest),
    Operation("DELETE", _SCOPE, "erase_scope", _ERASURE,
              "Erase everything of a user or project in every store, check that nothing is left, and answer the "
              "receipt (202: in progress, send it again to continue); work queued before it is dropped",
              ErasureReceiptView, also=(202,)),
    Operation("POST", f"{_SCOPE}/import", "import_scope", _PORTABILITY,
              "Import one export page into the user or project: all of it or nothing, embeddings computed again; "
              "what the scope holds already is skipped, so a page sent twice stores nothing twice",
              ImportResult, 200, ImportPage),
    # load function
    Operation("POST", f"{_USER}/context/load", "load_context", _CONTEXT,
              "The user's memories ranked by importance, relevance and recency", LoadContextOutput, 200,
              LoadContextRequest),
    Operation("GET", f"{_USER}/memories", "list_memories", _MEMORIES,
              "List current memories, newest first, page by page", MemoryPage, query=ListMemoriesQuery),
    Operation("GET", f"{_USER}/memories/{{memory_key}}", "get_memory", _MEMORIES,
              "One memory with its version history", MemoryDetailOutput),
    Operation("POST", f"{_USER}/memories/search", "search_memories", _MEMORIES,
              "Hybrid keyword and vector search with filters and a score breakdown", SearchMemoriesOutput, 200,
              SearchRequest),
    Operation("POST", f"{_USER}/memories/recall", "recall", _MEMORIES,
              "Multi-round recall for a message, widening the search until enough is found", RecallOutput, 200,
              RecallRequest),
    Operation("POST", f"{_USER}/memories/resolve", "resolve_placeholders", _MEMORIES,
              "Replace [memory:key] placeholders (:summary, :full, :meta:field) in a text with the user's memories",
              ResolvedText, 200, ResolveRequest),
    Operation("GET", "/v1/synonyms", "get_synonyms", _TENANT, "The synonyms stored for a keyword", SynonymList,
              query=SynonymQuery),
    Operation("GET", "/v1/tools", "tools", _TOOLS,
              "Anthropic tool definitions for the memory tools (lang=en|zh; include=all adds the extended tools)",
              ToolCatalogue, query=ToolsQuery),
    Operation("GET", f"{_SCOPE}/hot-memory", "get_hot_memory", _LAYERS, "The scope's hot memory", HotMemoryView),
    Operation("GET", f"{_SCOPE}/reports", "list_reports", _LAYERS, "The scope's weekly reports", ReportList),
    Operation("POST", f"{_SCOPE}/reports/search", "search_reports", _LAYERS, "Search the weekly reports",
              ReportList, 200, ReportSearchRequest),
    Operation("POST", f"{_SCOPE}/context/intent", "intent_context", _CONTEXT,
              "Hot memory, reports and log for an intent, within a token budget", IntentContext, 200,
              IntentContextRequest),
    Operation("POST", f"{_SCOPE}/conversations/search", "search_conversations", _LAYERS,
              "Search the unexpired conversation log", LogSearchResult, 200, LogSearchRequest),
    Operation("GET", "/v1/erasures/{erasure_id}", "get_erasure", _ERASURE,
              "An erasure's receipt: per store what was found, removed and found by the final check",
              ErasureReceiptView),
    Operation("GET", f"{_SCOPE}/export", "export_scope", _PORTABILITY,
              "One page of everything the user or project holds (format agent-memory-export, version 1): memories "
              "with their version history, the unexpired log, hot memory, reports, memory-tool files and the "
              "tenant's synonyms they use; follow next_cursor until it is null", ExportPage, query=ExportQuery),
    Operation("GET", "/v1/retention", "get_retention", _ERASURE,
              "The tenant's retention policy: days kept per memory type (null: until deleted) and for the log",
              RetentionView),
    Operation("GET", "/health", "health", _SERVICE,
              "Whether the API answers: status ok, or unavailable (503) when a part is down; nothing of the parts "
              "(GET /v1/health, with a token, names them)",
              HealthStatus, also=(503,), public=True),
    Operation("GET", "/v1/health", "health_details", _SERVICE,
              "Whether each of the API's parts answers: the table, the embedder (never loaded by a probe), the "
              "search tier, the pack and, on the local stack, its queues and workers; 503 with the same body when "
              "one is down", Health, also=(503,)),
    # summarize function
    Operation("POST", f"{_USER}/profile/summarize", "summarize", _CONTEXT,
              "A structured user profile with a completeness score and a narrative", SummarizeOutput, 200,
              SummarizeRequest, body_required=False),
    # inject function
    Operation("POST", "/v1/context/inject", "inject", _CONTEXT,
              "Assemble prioritised context blocks into an Anthropic Messages request under a token budget",
              InjectionResult, 200, InjectionRequest),
)
