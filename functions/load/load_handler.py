"""Load function: load_context, search, detail, listing, placeholders, recall, tool definitions, and the
public health check.

Read-only, and it never imports the LLM SDK. The services (numpy, the ranking, every service module) are
imported on the first request that needs them, or before the SnapStart snapshot: importing the handler
stays light for a cold start without a snapshot. The request and answer models are api's, imported here:
they import no service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.erasure import ErasureReceiptView, RetentionView, is_erasure_id
from agent_memory.api.health import health_response
from agent_memory.api.http import (
    current_scope,
    current_tenant,
    current_user,
    http_handler,
    invalid,
    json_response,
    may_act_for,
    memory_key_param,
    new_resolver,
    no_query,
    parse_body,
    parse_query,
    warm_before_snapshot,
)
from agent_memory.api.load import (
    ListMemoriesQuery,
    LoadContextOutput,
    LoadContextRequest,
    ResolvedText,
    ResolveRequest,
)
from agent_memory.api.log import LogSearchRequest, search_log
from agent_memory.api.memory_layers import (
    HotMemoryView,
    IntentContext,
    IntentContextRequest,
    ReportList,
    ReportSearchRequest,
)
from agent_memory.api.portability import ExportQuery
from agent_memory.api.search import (
    RecallOutput,
    RecallRequest,
    SearchMemoriesOutput,
    SearchRequest,
    memory_detail,
)
from agent_memory.api.synonyms import SynonymEntry, SynonymList, SynonymQuery
from agent_memory.api.tools import ToolCatalogue, ToolsQuery, system_prompt, tool_definitions
from agent_memory.errors import NotFound

if TYPE_CHECKING:
    from agent_memory.bootstrap.services import Services

app = new_resolver()


def get_services() -> Services:
    from agent_memory.bootstrap import get_services as container_services

    return container_services()


@app.get("/health")
def health() -> Response[str]:
    """No tenant, no token: up or down. The function that reads the table and holds the embedder answers it, so
    the probe sees what a search would meet."""
    return health_response(get_services().health.check(), detailed=False)


@app.get("/v1/health")
def health_details() -> Response[str]:
    """With a token: which parts answer, and how (the tier, the pack, the model, the local stack's queues)."""
    current_tenant(app)
    return health_response(get_services().health.check(), detailed=True)


@app.post("/v1/users/<user_id>/context/load")
def load_context(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    request = parse_body(app, LoadContextRequest)
    loaded = get_services().load.load_context(user, request.query, request.limit, as_of=request.as_of)
    return json_response(200, LoadContextOutput.of(loaded, request.as_of))


@app.post("/v1/users/<user_id>/memories/search")
def search_memories(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    request = parse_body(app, SearchRequest)
    return json_response(200, SearchMemoriesOutput.of(get_services().search.search(user, request.to_query()),
                                                      request.as_of))


@app.post("/v1/users/<user_id>/memories/recall")
def recall(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    request = parse_body(app, RecallRequest)
    return json_response(200, RecallOutput.of(get_services().recall.recall(user, request.to_query())))


@app.post("/v1/users/<user_id>/memories/resolve")
def resolve_placeholders(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    request = parse_body(app, ResolveRequest)
    return json_response(200, ResolvedText.of(get_services().load.resolve_placeholders(user, request.text)))


@app.get("/v1/users/<user_id>/memories")
def list_memories(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    query = parse_query(app, ListMemoriesQuery)
    page = get_services().load.list_memories(
        user, memory_type=query.memory_type, limit=query.limit, cursor=query.cursor
    )
    return json_response(200, page)


@app.get("/v1/users/<user_id>/memories/<memory_key>")
def get_memory(user_id: str, memory_key: str) -> Response[str]:
    user = current_user(app, user_id)
    no_query(app)
    return json_response(200, memory_detail(get_services().search, user, memory_key_param(memory_key)))


@app.get("/v1/synonyms")
def get_synonyms() -> Response[str]:
    tenant = current_tenant(app)
    keyword = parse_query(app, SynonymQuery).keyword
    found = get_services().search.synonyms_for(tenant, (keyword,)).get(keyword, ())
    return json_response(200, SynonymList(keyword=keyword, synonyms=[SynonymEntry(synonym=s, similarity_score=score)
                                                                  for s, score in found]))


@app.get("/v1/tools")
def tools() -> Response[str]:
    tenant = current_tenant(app)
    query = parse_query(app, ToolsQuery)
    settings = get_services().settings
    lang = query.lang or settings.tools_language
    return json_response(200, ToolCatalogue(
        tools=tool_definitions(lang=lang, include=query.include, categories=settings.categories_for(tenant)),
        system_prompt=system_prompt(lang)))


@app.get("/v1/<scope_type>/<scope_id>/hot-memory")
def get_hot_memory(scope_type: str, scope_id: str) -> Response[str]:
    scope = current_scope(app, scope_type, scope_id)
    no_query(app)
    return json_response(200, HotMemoryView.of(scope, get_services().memory_layers.hot_memory(scope)))


@app.get("/v1/<scope_type>/<scope_id>/reports")
def list_reports(scope_type: str, scope_id: str) -> Response[str]:
    scope = current_scope(app, scope_type, scope_id)
    no_query(app)
    return json_response(200, ReportList.of(scope, get_services().memory_layers.reports(scope)))


@app.post("/v1/<scope_type>/<scope_id>/reports/search")
def search_reports(scope_type: str, scope_id: str) -> Response[str]:
    scope = current_scope(app, scope_type, scope_id)
    request = parse_body(app, ReportSearchRequest)
    found = get_services().memory_layers.search_reports(scope, request.query, request.limit)
    return json_response(200, ReportList.found(scope, found))


@app.post("/v1/<scope_type>/<scope_id>/context/intent")
def intent_context(scope_type: str, scope_id: str) -> Response[str]:
    scope = current_scope(app, scope_type, scope_id)
    request = parse_body(app, IntentContextRequest)
    context = get_services().memory_layers.context_for_prompt(scope, request.intent, request.max_tokens)
    return json_response(200, IntentContext.of(scope, context))


@app.post("/v1/<scope_type>/<scope_id>/conversations/search")
def search_conversations(scope_type: str, scope_id: str) -> Response[str]:
    scope = current_scope(app, scope_type, scope_id)
    request = parse_body(app, LogSearchRequest)
    return json_response(200, search_log(get_services().conversation_log, scope, request))


@app.get("/v1/erasures/<erasure_id>")
def get_erasure(erasure_id: str) -> Response[str]:
    """An erasure's receipt, to whoever may act for its scope (anyone else: 404, as for an unknown id)."""
    tenant = current_tenant(app)
    no_query(app)
    if not is_erasure_id(erasure_id):
        raise invalid([{"field": "erasure_id", "message": "not an erasure id this API issued", "type": "pattern"}])
    receipt = get_services().erasure.receipt(tenant, erasure_id)
    if receipt is None or not may_act_for(app, receipt.scope_type, receipt.scope_id):
        raise NotFound(f"no erasure {erasure_id}", details=[{"field": "erasure_id"}])
    return json_response(200, ErasureReceiptView.of(receipt))
@app.get("/v1/<scope_type>/<scope_id>/export")
def export_scope(scope_type: str, scope_id: str) -> Response[str]:
    """One page of everything the scope holds (the export format); next_cursor asks for the next page."""
    scope = current_scope(app, scope_type, scope_id)
    query = parse_query(app, ExportQuery)
    return json_response(200, get_services().portability.export_page(scope, query.cursor))


@app.get("/v1/retention")
def get_retention() -> Response[str]:
    """The caller's tenant's retention policy (how long each memory type and the log are kept)."""
    tenant = current_tenant(app)
    no_query(app)
    return json_response(200, RetentionView.of(tenant, get_services().settings.retention))


handler = http_handler(app)

# SnapStart: load the heavy parts before the snapshot instead of on the first request.
warm_before_snapshot(lambda: get_services().search.warm_up())
