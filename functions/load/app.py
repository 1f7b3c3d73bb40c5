"""Load function: load_context, listing and detail. Read-only: it never imports the LLM SDK."""

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.http import (
    current_user,
    http_handler,
    json_response,
    memory_key_param,
    new_resolver,
    parse_body,
    parse_query,
)
from agent_memory.api.schemas import ListMemoriesQuery, LoadContextRequest
from agent_memory.bootstrap import get_services

app = new_resolver()


@app.post("/v1/users/<user_id>/context/load")
def load_context(user_id: str) -> Response:
    user = current_user(app, user_id)
    request = parse_body(app, LoadContextRequest)
    return json_response(200, get_services().load.load_context(user, request.query, request.limit))


@app.get("/v1/users/<user_id>/memories")
def list_memories(user_id: str) -> Response:
    user = current_user(app, user_id)
    query = parse_query(app, ListMemoriesQuery)
    page = get_services().load.list_memories(
        user, memory_type=query.memory_type, limit=query.limit, cursor=query.cursor
    )
    return json_response(200, page)


@app.get("/v1/users/<user_id>/memories/<memory_key>")
def get_memory(user_id: str, memory_key: str) -> Response:
    user = current_user(app, user_id)
    return json_response(200, get_services().load.memory_detail(user, memory_key_param(memory_key)))


handler = http_handler(app)
