"""Save function: direct, batch and extracted saves, and deletes (the only API writer)."""

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.erasure import ErasureReceiptView
from agent_memory.api.http import (
    authorize_tenant_write,
    current_scope,
    current_tenant,
    current_user,
    hot_memory_slot,
    http_handler,
    id_param,
    json_response,
    memory_key_param,
    new_resolver,
    no_query,
    parse_body,
    parse_optional_body,
    parse_query,
    provenance,
    token_subject,
    warm_before_snapshot,
)
from agent_memory.api.log import MAX_LOG_BODY_BYTES, AppendMessagesRequest, append_to_log
from agent_memory.api.memory_layers import HotMemoryDeleted, PutHotMemoryRequest, RefreshHotMemoryRequest
from agent_memory.api.memory_tool import MemoryToolRequest
from agent_memory.api.portability import MAX_IMPORT_BODY_BYTES, ImportResult
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
from agent_memory.api.synonyms import AddSynonymsRequest, SynonymsAdded
from agent_memory.api.tools import ToolUseBlock
from agent_memory.bootstrap import get_services
from agent_memory.domain.lifecycle.portable import ImportPage
from agent_memory.domain.models import Origin

app = new_resolver()


@app.post("/v1/users/<user_id>/memories")
def create_memory(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    request = parse_body(app, CreateMemoryRequest)
    response = SavedMemoryResponse.of(get_services().save.save(user, request.to_new_memory(
        provenance(app, Origin.DIRECT_SAVE))))
    return json_response(response.status, response)


@app.post("/v1/users/<user_id>/memories/batch")
def create_memories(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    request = parse_body(app, BatchRequest)
    written = provenance(app, Origin.DIRECT_SAVE)
    results = get_services().save.save_batch(user, [m.to_new_memory(written) for m in request.memories])
    return json_response(201, BatchSaveResponse.of(results))


@app.post("/v1/users/<user_id>/memories/extract")
def extract_memories(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    request = parse_body(app, ExtractRequest)
    saved = get_services().save.extract_and_save(user, request.to_turn(), conversation_id=request.conversation_id,
                                                 provenance=provenance(app, Origin.EXTRACT))
    return json_response(200, SaveInfoOutput.of(saved))


@app.delete("/v1/users/<user_id>/memories/<memory_key>")
def delete_memory(user_id: str, memory_key: str) -> Response[str]:
    user = current_user(app, user_id)
    key = memory_key_param(memory_key)
    if parse_query(app, DeleteMemoryQuery).purge:
        purged = get_services().save.purge(user, key)
        return json_response(200, DeletedMemory(memory_key=key, purged_versions=[m.memory_key for m in purged]))
    deleted = get_services().save.delete(user, key)
    return json_response(200, DeletedMemory(memory_key=deleted.memory_key))


@app.post("/v1/users/<user_id>/tools/execute")
def execute_tool(user_id: str) -> Response[str]:
    """A model's tool_use block in, its tool_result block out (a mistake the model can fix is is_error)."""
    user = current_user(app, user_id)
    block = parse_body(app, ToolUseBlock)
    result = get_services().tools.execute(user, block, written_by=token_subject(app))
    return json_response(200, result.model_dump(exclude_none=True))  # is_error only when true, as Claude sends it


@app.post("/v1/users/<user_id>/memory-tool")
def memory_tool(user_id: str) -> Response[str]:
    """Claude's memory tool, its /memories files kept in the user's partition."""
    user = current_user(app, user_id)
    command = parse_body(app, MemoryToolRequest)
    return json_response(200, get_services().memory_tool.execute(user, command.root))


@app.post("/v1/synonyms")
def add_synonyms() -> Response[str]:
    tenant = current_tenant(app)
    authorize_tenant_write(app, "adding synonyms")
    request = parse_body(app, AddSynonymsRequest)
    stored = get_services().synonyms.add(tenant, request.keyword, request.synonyms, request.similarity_score)
    return json_response(201, SynonymsAdded(keyword=request.keyword, synonyms=request.synonyms, stored_pairs=stored))


@app.put("/v1/<scope_type>/<scope_id>/hot-memory/<memory_type>/<key>")
def put_hot_memory(scope_type: str, scope_id: str, memory_type: str, key: str) -> Response[str]:
    scope = current_scope(app, scope_type, scope_id)
    type_, name = hot_memory_slot(memory_type, key)
    request = parse_body(app, PutHotMemoryRequest)
    return json_response(200, get_services().memory_layers.put_hot(scope, type_, name, request.value,
                                                                   request.priority))


@app.post("/v1/<scope_type>/<scope_id>/hot-memory/refresh")
def refresh_hot_memory(scope_type: str, scope_id: str) -> Response[str]:
    """Hot-memory refresh: the LLM updates status/decisions/preferences from the recent log."""
    scope = current_scope(app, scope_type, scope_id)
    parse_optional_body(app, RefreshHotMemoryRequest)
    return json_response(200, get_services().rollup.refresh_hot_memory(scope))


@app.delete("/v1/<scope_type>/<scope_id>/hot-memory/<memory_type>/<key>")
def delete_hot_memory(scope_type: str, scope_id: str, memory_type: str, key: str) -> Response[str]:
    scope = current_scope(app, scope_type, scope_id)
    type_, name = hot_memory_slot(memory_type, key)
    get_services().memory_layers.delete_hot(scope, type_, name)
    return json_response(200, HotMemoryDeleted(type=type_, key=name))


@app.post("/v1/<scope_type>/<scope_id>/conversations/<conversation_id>/messages")
def append_messages(scope_type: str, scope_id: str, conversation_id: str) -> Response[str]:
    scope = current_scope(app, scope_type, scope_id)
    conversation = id_param("conversation_id", conversation_id)
    request = parse_body(app, AppendMessagesRequest, max_bytes=MAX_LOG_BODY_BYTES)
    return json_response(201, append_to_log(get_services().conversation_log, scope, conversation, request,
                                            written_by=token_subject(app)))


@app.delete("/v1/<scope_type>/<scope_id>")
def erase_scope(scope_type: str, scope_id: str) -> Response[str]:
    """Everything of the user or project, in every store, then a final check; the receipt says what was found."""
    scope = current_scope(app, scope_type, scope_id)
    no_query(app)
    receipt = get_services().erasure.erase(scope, requested_by=token_subject(app))
    return json_response(200 if receipt.status == "complete" else 202, ErasureReceiptView.of(receipt))
@app.post("/v1/<scope_type>/<scope_id>/import")
def import_scope(scope_type: str, scope_id: str) -> Response[str]:
    """One export page into the scope, all of it or nothing; what it holds already is left as it is."""
    scope = current_scope(app, scope_type, scope_id)
    page = parse_body(app, ImportPage, max_bytes=MAX_IMPORT_BODY_BYTES)
    if page.synonyms:
        authorize_tenant_write(app, "importing synonyms")
    imported = get_services().portability.import_page(scope, page, written_by=token_subject(app))
    return json_response(200, ImportResult.of(scope, imported))


handler = http_handler(app)

# SnapStart: load the heavy parts before the snapshot instead of on the first request.
warm_before_snapshot(lambda: get_services().save.warm_up())
