"""Every route of the API, once: a function per route that validates its arguments lightly and returns the
`Call` to send. `MemoryClient` and `AsyncMemoryClient` expose each of these as a method of the same name,
signature and docstring (see `client.py`), so the two clients cannot drift apart.

Retry safety, per route (`Call.retry_safe`; see `_http.retry_delay` for what is retried when):
- GET, PUT and DELETE: idempotent. A DELETE retried after a lost answer may answer 404 (already gone).
- The reads sent as POST: load_context, search, recall, resolve_placeholders, summarize, inject,
  search_conversations, search_reports, intent_context.
- The writes the API makes idempotent: save (by content: the same text again answers `duplicate`),
  save_batch (a resent batch stores nothing twice), extract (its saves dedupe by content),
  add_synonyms (pairs are keyed), refresh_hot_memory (recomputed from the log).
- log: only when every message carries `message_id` and `created_at` (a resend overwrites the same item).
- execute_tool: for the tools whose calls are reads or idempotent writes (`RETRY_SAFE_TOOLS`), not
  `log_message` nor a tool this client does not know.
- import_page: a page sent again stores nothing twice (what the scope holds is skipped).
- memory_tool: `view` only (a second `create` finds the file, a second `str_replace` finds no match...).
Any call is retried after a failure that shows it was not applied (connection refused, 429, 503).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agent_memory_client._http import Call, as_dict, compact, query_params, segment
from agent_memory_client.types import (
    AppendResult,
    BatchItemResult,
    BatchSaveResponse,
    DeletedMemory,
    ErasureReceipt,
    ExportPage,
    ExtractResponse,
    Health,
    HealthStatus,
    HotMemoryDeleted,
    HotMemoryEntry,
    HotMemoryRefresh,
    HotMemoryType,
    HotMemoryView,
    ImportResult,
    InjectionResult,
    Intent,
    IntentContext,
    Keyword,
    LoadContextResponse,
    LogMessage,
    LogSearchResult,
    MemoryDetail,
    MemoryPage,
    MemoryToolResult,
    MemoryType,
    NewMemory,
    RecallResponse,
    ReportList,
    ResolvedText,
    RetentionPolicy,
    Role,
    SaveResponse,
    Scope,
    SearchMode,
    SearchResponse,
    SummarizeResponse,
    SynonymList,
    SynonymsAdded,
    ToolCatalogue,
    ToolResult,
    ToolUseBlock,
)

Timestamp = datetime | str
TimeRange = tuple[Timestamp, Timestamp]

# Tools of GET /v1/tools whose calls are reads or idempotent writes: execute_tool retries them.
RETRY_SAFE_TOOLS = frozenset({
    "search_memories", "get_memory_detail", "save_user_memory", "get_user_context",
    "get_hot_memory", "set_hot_memory", "search_reports", "summarize_profile",
})
# memory_20250818 commands that change nothing: memory_tool retries them.
RETRY_SAFE_MEMORY_COMMANDS = frozenset({"view"})

_SCOPES = ("users", "projects")
_HOT_MEMORY_TYPES = ("meta", "status", "decision", "preference")


def _user(user_id: str) -> str:
    return f"/v1/users/{segment(user_id, 'user_id')}"


def _scope(scope: Scope, scope_id: str) -> str:
    if scope not in _SCOPES:
        raise ValueError(f"scope must be 'users' or 'projects', got {scope!r}")
    return f"/v1/{scope}/{segment(scope_id, 'scope_id')}"


def _hot_slot(memory_type: HotMemoryType, key: str) -> str:
    if memory_type not in _HOT_MEMORY_TYPES:
        raise ValueError(f"memory_type must be one of {', '.join(_HOT_MEMORY_TYPES)}, got {memory_type!r}")
    return f"/hot-memory/{memory_type}/{segment(key, 'key')}"


def _keywords(keywords: Sequence[Keyword | str] | None) -> list[Any] | None:
    if keywords is None:
        return None
    return [{"term": k} if isinstance(k, str) else dict(k) for k in keywords]


def _time_range(time_range: TimeRange | None) -> list[Timestamp] | None:
    if time_range is None:
        return None
    start, end = time_range
    return [start, end]


def _memory_item(item: Mapping[str, Any]) -> dict[str, Any]:
    body = dict(item)
    if "keywords" in body:
        body["keywords"] = _keywords(body["keywords"])
    return body


# ------------------------------------------------------------------------------------------------ memories


def save(user_id: str, *, memory_type: MemoryType, content: str, category: str | None = None,
         field: str | None = None, importance: int | None = None, keywords: Sequence[Keyword | str] | None = None,
         metadata: Mapping[str, Any] | None = None, conversation_id: str | None = None,
         created_at: Timestamp | None = None, context: str | None = None, source: str | None = None,
         retraction: bool = False) -> Call[SaveResponse]:
    """Store one memory (`POST /v1/users/{user_id}/memories`).

    Answers `outcome` `created` (201), `superseded` (a newer value of the memory's `field`), `duplicate`
    (200: the same content was stored already) or `merged` (200: it restates a current memory in nearly the
    same words; `memory` is that one, unchanged). Without `field`, the field the text states is inferred.
    `keywords` are strings or `{"term", "weight"}`; `created_at` (imports) needs a timezone; `context` is the
    preceding turn, indexed for search only. `retraction`: the memory takes its `field` back (a denial, a
    withdrawal, an ending). Idempotent by content, so it is retried.
    """
    body = compact(memory_type=memory_type, content=content, category=category, field=field,
                   importance=importance, keywords=_keywords(keywords),
                   metadata=dict(metadata) if metadata is not None else None, conversation_id=conversation_id,
                   created_at=created_at, context=context, source=source, retraction=retraction or None)
    return Call("POST", f"{_user(user_id)}/memories", retry_safe=True, body=body)


def save_batch(user_id: str, memories: Sequence[NewMemory | Mapping[str, Any]]) -> Call[BatchSaveResponse]:
    """Store 1-100 memories in order, all validated before any is written (`POST .../memories/batch`).

    A fault part-way answers its status with `error.code` `batch_interrupted` and `details` naming the items
    written and not; resending the whole batch stores nothing twice, so it is retried.
    """
    return Call("POST", f"{_user(user_id)}/memories/batch", retry_safe=True,
                body={"memories": [_memory_item(m) for m in memories]})


def batch_parts(memories: Sequence[NewMemory | Mapping[str, Any]], refusal: Any
                ) -> list[list[NewMemory | Mapping[str, Any]]] | None:
    """The batch cut into consecutive parts that each fit the embedding budget the server refused it by (its
    413's details: `limit` and each item's `item_tokens`), in order; None when the refusal gave no such budget or
    one item alone is over it (then no split can help)."""
    budget = next((d for d in refusal if isinstance(d, dict) and d.get("type") == "embedding_budget"), None) \
        if isinstance(refusal, list) else None
    if budget is None or len(budget.get("item_tokens", ())) != len(memories):
        return None
    limit, costs = int(budget["limit"]), [int(c) for c in budget["item_tokens"]]
    if max(costs, default=0) > limit:
        return None
    parts: list[list[NewMemory | Mapping[str, Any]]] = [[]]
    used = 0
    for memory, cost in zip(memories, costs, strict=True):
        if parts[-1] and used + cost > limit:
            parts.append([])
            used = 0
        parts[-1].append(memory)
        used += cost
    return parts


def joined_batches(answers: Sequence[BatchSaveResponse]) -> BatchSaveResponse:
    """The answers of a batch's parts as one answer, each result's `index` its place in the whole batch."""
    results: list[BatchItemResult] = []
    for answer in answers:
        offset = len(results)
        results += [BatchItemResult(index=r["index"] + offset, memory_key=r["memory_key"], outcome=r["outcome"],
                                    superseded_key=r["superseded_key"]) for r in answer["results"]]
    return BatchSaveResponse(saved_count=sum(a["saved_count"] for a in answers),
                             memory_keys=[key for a in answers for key in a["memory_keys"]], results=results)


def extract(user_id: str, user_message: str, assistant_message: str = "", *,
            existing_info: Mapping[str, Any] | None = None, conversation_id: str | None = None
            ) -> Call[ExtractResponse]:
    """Extract facts, preferences and intents from a conversation turn and save them
    (`POST .../memories/extract`, the save_info action). A 503 means the LLM was down and nothing was stored."""
    body = compact(user_message=user_message, assistant_message=assistant_message,
                   existing_info=dict(existing_info) if existing_info is not None else None,
                   conversation_id=conversation_id)
    return Call("POST", f"{_user(user_id)}/memories/extract", retry_safe=True, body=body)


def delete_memory(user_id: str, memory_key: str, *, purge: bool = False) -> Call[DeletedMemory]:
    """Delete a memory (`DELETE .../memories/{memory_key}`): it leaves every current read and stays in its field's
    history for `as_of` reads. `purge=True` removes it and every version of its field for good (a memory deleted
    before too), answering their keys as `purged_versions`. 404 when there is none."""
    return Call("DELETE", f"{_user(user_id)}/memories/{segment(memory_key, 'memory_key')}", retry_safe=True,
                params=query_params(purge="true") if purge else {})


def get_memory(user_id: str, memory_key: str) -> Call[MemoryDetail]:
    """One memory with every version of its field (`GET .../memories/{memory_key}`)."""
    return Call("GET", f"{_user(user_id)}/memories/{segment(memory_key, 'memory_key')}", retry_safe=True)


def list_memories(user_id: str, *, memory_type: MemoryType | None = None, limit: int | None = None,
                  cursor: str | None = None) -> Call[MemoryPage]:
    """One page of current memories, newest first (`GET .../memories`). Pass the page's `next_cursor` as
    `cursor` for the next; `iter_memories` does that for you."""
    return Call("GET", f"{_user(user_id)}/memories", retry_safe=True,
                params=query_params(memory_type=memory_type, limit=limit, cursor=cursor))


def search(user_id: str, query: str, *, search_mode: SearchMode | None = None,
           keywords: Sequence[str] | None = None, memory_types: Sequence[MemoryType] | None = None,
           time_range: TimeRange | None = None, limit: int | None = None,
           min_relevance_score: float | None = None, as_of: Timestamp | None = None) -> Call[SearchResponse]:
    """Hybrid keyword and vector search with filters and a score breakdown (`POST .../memories/search`).

    `search_mode` semantic, keyword or hybrid; `limit` 1-20 (default 5); `time_range` (start, end) on
    `created_at`; `min_relevance_score` default 0.3; `as_of` (an aware datetime or ISO-8601 text with a timezone):
    search the memories as they were at that instant, the versions valid then (ranked the same way).
    """
    body = compact(query=query, search_mode=search_mode, keywords=list(keywords) if keywords is not None else None,
                   memory_types=list(memory_types) if memory_types is not None else None,
                   time_range=_time_range(time_range), limit=limit, min_relevance_score=min_relevance_score,
                   as_of=as_of)
    return Call("POST", f"{_user(user_id)}/memories/search", retry_safe=True, body=body)


def recall(user_id: str, message: str, *, context_type: str | None = None, history: Sequence[str] | None = None,
           limit: int | None = None, min_relevance_score: float | None = None) -> Call[RecallResponse]:
    """Decide whether a message needs memories and recall them in up to three rounds
    (`POST .../memories/recall`). `context_type`: initialization, mid_conversation (default) or command."""
    body = compact(message=message, context_type=context_type, history=list(history) if history is not None else None,
                   limit=limit, min_relevance_score=min_relevance_score)
    return Call("POST", f"{_user(user_id)}/memories/recall", retry_safe=True, body=body)


def resolve_placeholders(user_id: str, text: str) -> Call[ResolvedText]:
    """Replace `[memory:key]`, `[memory:key:summary]`, `[memory:key:full]` and `[memory:key:meta:field]`
    in `text` (`POST .../memories/resolve`); a missing one becomes `[ERROR: ...]` and is listed in `missing`."""
    return Call("POST", f"{_user(user_id)}/memories/resolve", retry_safe=True, body={"text": text})


def load_context(user_id: str, query: str = "", *, limit: int | None = None,
                 as_of: Timestamp | None = None) -> Call[LoadContextResponse]:
    """The user's memories by importance and relevance to `query`, with a profile summary
    (`POST .../context/load`, the load_context action). `limit` 1-100, default 20; `as_of`: the memories as they
    were at that instant."""
    return Call("POST", f"{_user(user_id)}/context/load", retry_safe=True,
                body=compact(query=query, limit=limit, as_of=as_of))


def summarize(user_id: str, *, as_of: Timestamp | None = None) -> Call[SummarizeResponse]:
    """A structured profile with a completeness score and a narrative (`POST .../profile/summarize`); `as_of`:
    the profile from the memories as they were at that instant."""
    return Call("POST", f"{_user(user_id)}/profile/summarize", retry_safe=True, body=compact(as_of=as_of))


def inject(request: Mapping[str, Any] | None = None, /, **fields: Any) -> Call[InjectionResult]:
    """Assemble the context blocks into an Anthropic Messages request under a token budget
    (`POST /v1/context/inject`). Give the request as a dict, as keyword arguments, or both (keywords win):
    `user_id`, `conversation_id`, `messages`, `current_user_message`, `max_context_tokens`, `placement`...
    (the `InjectionRequest` schema)."""
    body = {**(dict(request) if request is not None else {}), **fields}
    return Call("POST", "/v1/context/inject", retry_safe=True, body=body)


# --------------------------------------------------------------------------------- hot memory, log, reports


def log(scope: Scope, scope_id: str, conversation_id: str, messages: Sequence[LogMessage | Mapping[str, Any]], *,
        extract: bool = False) -> Call[AppendResult]:
    """Append messages to the conversation log (`POST /v1/{scope}/{id}/conversations/{conversation_id}/messages`).

    1-100 messages `{role, content, intent?, created_at?, message_id?, author_id?}`; `extract=True` also queues
    each user message for memory extraction. Retried only when every message has `message_id` and
    `created_at` (then a resend overwrites the same items).
    """
    items = [dict(m) for m in messages]
    retry_safe = bool(items) and all(m.get("message_id") and m.get("created_at") for m in items)
    path = f"{_scope(scope, scope_id)}/conversations/{segment(conversation_id, 'conversation_id')}/messages"
    return Call("POST", path, retry_safe=retry_safe, body={"messages": items, "extract": extract})


def search_conversations(scope: Scope, scope_id: str, query: str, *, conversation_id: str | None = None,
                         role: Role | None = None, intent: str | None = None, time_range: TimeRange | None = None,
                         limit: int | None = None) -> Call[LogSearchResult]:
    """Search the scope's unexpired log by BM25 and cosine (`POST /v1/{scope}/{id}/conversations/search`)."""
    body = compact(query=query, conversation_id=conversation_id, role=role, intent=intent,
                   time_range=_time_range(time_range), limit=limit)
    return Call("POST", f"{_scope(scope, scope_id)}/conversations/search", retry_safe=True, body=body)


def get_hot_memory(scope: Scope, scope_id: str) -> Call[HotMemoryView]:
    """The scope's hot memory by priority, and grouped by section (`GET /v1/{scope}/{id}/hot-memory`)."""
    return Call("GET", f"{_scope(scope, scope_id)}/hot-memory", retry_safe=True)


def set_hot_memory(scope: Scope, scope_id: str, memory_type: HotMemoryType, key: str, value: Any, *,
                   priority: int | None = None) -> Call[HotMemoryEntry]:
    """Upsert a hot-memory entry (`PUT /v1/{scope}/{id}/hot-memory/{type}/{key}`); `value` is any JSON
    value, `priority` -1000..1000 (default 0). The key is URL-encoded, so it may be Chinese."""
    body: dict[str, Any] = {"value": value, **compact(priority=priority)}
    return Call("PUT", _scope(scope, scope_id) + _hot_slot(memory_type, key), retry_safe=True, body=body)


def delete_hot_memory(scope: Scope, scope_id: str, memory_type: HotMemoryType, key: str) -> Call[HotMemoryDeleted]:
    """Remove a hot-memory entry (`DELETE /v1/{scope}/{id}/hot-memory/{type}/{key}`); 404 when absent."""
    return Call("DELETE", _scope(scope, scope_id) + _hot_slot(memory_type, key), retry_safe=True)


def refresh_hot_memory(scope: Scope, scope_id: str) -> Call[HotMemoryRefresh]:
    """Rewrite status, decisions and preferences from the recent log (`POST /v1/{scope}/{id}/hot-memory/refresh`);
    entries set through the API are kept."""
    return Call("POST", f"{_scope(scope, scope_id)}/hot-memory/refresh", retry_safe=True)


def list_reports(scope: Scope, scope_id: str) -> Call[ReportList]:
    """The scope's weekly reports, newest first (`GET /v1/{scope}/{id}/reports`)."""
    return Call("GET", f"{_scope(scope, scope_id)}/reports", retry_safe=True)


def search_reports(scope: Scope, scope_id: str, query: str, *, limit: int | None = None) -> Call[ReportList]:
    """Weekly reports by hybrid similarity to `query` (`POST /v1/{scope}/{id}/reports/search`); limit 1-20."""
    return Call("POST", f"{_scope(scope, scope_id)}/reports/search", retry_safe=True,
                body=compact(query=query, limit=limit))


def intent_context(scope: Scope, scope_id: str, intent: Intent | Mapping[str, Any] | str, *,
                   query: str | None = None, max_tokens: int | None = None) -> Call[IntentContext]:
    """Hot memory, and for question-like intents the matching reports and log, within `max_tokens`
    (`POST /v1/{scope}/{id}/context/intent`). `intent` is `{type, query?, entities?}`, or just its type
    with `query` given beside it."""
    body_intent = {"type": intent, **compact(query=query)} if isinstance(intent, str) else dict(intent)
    return Call("POST", f"{_scope(scope, scope_id)}/context/intent", retry_safe=True,
                body={"intent": body_intent, **compact(max_tokens=max_tokens)})


# ------------------------------------------------------------------------------------------- tenant, tools


def add_synonyms(keyword: str, synonyms: Sequence[str], *, similarity_score: float | None = None
                 ) -> Call[SynonymsAdded]:
    """Add the tenant's synonyms for a keyword, stored both ways (`POST /v1/synonyms`)."""
    if isinstance(synonyms, str):
        raise TypeError("synonyms must be a sequence of strings, not one string")
    body = compact(keyword=keyword, synonyms=list(synonyms), similarity_score=similarity_score)
    return Call("POST", "/v1/synonyms", retry_safe=True, body=body)


def get_synonyms(keyword: str) -> Call[SynonymList]:
    """The built-in and the tenant's synonyms of a keyword (`GET /v1/synonyms?keyword=`)."""
    return Call("GET", "/v1/synonyms", retry_safe=True, params={"keyword": keyword})


def tools(*, lang: str | None = None, include: str | None = None) -> Call[ToolCatalogue]:
    """Anthropic tool definitions and the system prompt that teaches their use (`GET /v1/tools`).
    `lang` en or zh (default: the deployment's); `include` core (the four memory tools) or all."""
    return Call("GET", "/v1/tools", retry_safe=True, params=query_params(lang=lang, include=include))


def execute_tool(user_id: str, tool_use: ToolUseBlock | Mapping[str, Any] | Any) -> Call[ToolResult]:
    """Run a model's `tool_use` block for the user and answer the `tool_result` block to send back
    (`POST /v1/users/{user_id}/tools/execute`). `tool_use` is a dict or the SDK's block object. A mistake
    the model can fix answers `is_error: true`; a fault of the service raises."""
    block = as_dict(tool_use, "tool_use")
    body = {"type": block.get("type", "tool_use"), "id": block.get("id"), "name": block.get("name"),
            "input": block.get("input") or {}}
    return Call("POST", f"{_user(user_id)}/tools/execute", retry_safe=body["name"] in RETRY_SAFE_TOOLS, body=body)


def memory_tool(user_id: str, command: Mapping[str, Any] | Any) -> Call[MemoryToolResult]:
    """Run one command of Anthropic's memory tool (memory_20250818: view, create, str_replace, insert, delete,
    rename) on the user's memory files (`POST /v1/users/{user_id}/memory-tool`). `command` is the tool's
    input: a dict or the SDK's command object."""
    body = as_dict(command, "command")
    return Call("POST", f"{_user(user_id)}/memory-tool",
                retry_safe=body.get("command") in RETRY_SAFE_MEMORY_COMMANDS, body=body)


# ------------------------------------------------------------------------------------------------ erasure


def erase(scope: Scope, scope_id: str) -> Call[ErasureReceipt]:
    """Erase everything of a user or project in every store (`DELETE /v1/{scope}/{id}`): memories and their
    versions, the log, hot memory, reports, memory-tool files, caches, saved indexes, search-index documents.
    Answers the receipt; `status` `in_progress` (202) means the scope was too large for one request: call it
    again to continue. Work queued before the erasure is dropped. Idempotent, so it is retried."""
    return Call("DELETE", _scope(scope, scope_id), retry_safe=True)


def get_erasure(erasure_id: str) -> Call[ErasureReceipt]:
    """An erasure's receipt (`GET /v1/erasures/{erasure_id}`): per store what was found, removed and found again
    by the final check. 404 for an unknown id, or another user's erasure."""
    return Call("GET", f"/v1/erasures/{segment(erasure_id, 'erasure_id')}", retry_safe=True)


def retention() -> Call[RetentionPolicy]:
    """The tenant's retention policy (`GET /v1/retention`): how many days each memory type and the log are kept
    (None: until deleted). An expired memory is found by nothing."""
    return Call("GET", "/v1/retention", retry_safe=True)


# ------------------------------------------------------------------------------------------------ service


def health_status() -> Call[HealthStatus]:
    """Whether the API answers (`GET /health`, no token needed): `status` `ok`, or `unavailable` (the API's 503,
    returned as the answer, not raised nor retried), nothing of the parts."""
    return Call("GET", "/health", retry_safe=True, answers=frozenset({503}))


def health() -> Call[Health]:
    """Whether the API's parts answer (`GET /v1/health`, with the client's token; `GET /health` tells anyone up or
    down only): `status` `ok`, or `unavailable` with the part that is down marked `down` (the API's 503, returned
    as the answer, not raised nor retried)."""
    return Call("GET", "/v1/health", retry_safe=True, answers=frozenset({503}))


def export_page(scope: Scope, scope_id: str, *, cursor: str | None = None) -> Call[ExportPage]:
    """One page of everything the user or project holds (`GET /v1/{scope}/{id}/export`); pass the page's
    `next_cursor` for the next one (`iter_export` follows them all)."""
    return Call("GET", f"{_scope(scope, scope_id)}/export", retry_safe=True, params=query_params(cursor=cursor))


def import_page(scope: Scope, scope_id: str, page: ExportPage | Mapping[str, Any]) -> Call[ImportResult]:
    """One export page into the user or project (`POST /v1/{scope}/{id}/import`), all of it or nothing."""
    return Call("POST", f"{_scope(scope, scope_id)}/import", retry_safe=True, body=as_dict(page, "page"))


EXPORT_FILE_FORMAT = "agent-memory-export-file"


def export_file(pages: Sequence[ExportPage]) -> dict[str, Any]:
    """An export's pages as one JSON document (what `make export` writes): `{format, version, pages}`."""
    return {"format": EXPORT_FILE_FORMAT, "version": 1, "pages": list(pages)}


def file_pages(exported: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The pages of an export document, a list of pages, or one page, in order."""
    if isinstance(exported, Mapping):
        if exported.get("format") == EXPORT_FILE_FORMAT:
            return list(exported["pages"])
        return [exported]
    return list(exported)
