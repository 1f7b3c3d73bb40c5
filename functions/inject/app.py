"""Inject function: context blocks assembled into an Anthropic Messages request."""

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.http import (
    authorize,
    current_user,
    http_handler,
    json_response,
    new_resolver,
    parse_body,
    warm_before_snapshot,
)
from agent_memory.api.inject_models import InjectionRequest
from agent_memory.api.schemas import MAX_INJECT_BODY_BYTES
from agent_memory.bootstrap import get_services

app = new_resolver()


@app.post("/v1/context/inject")
def inject() -> Response:
    request = parse_body(app, InjectionRequest, max_bytes=MAX_INJECT_BODY_BYTES)
    user = current_user(app, request.user_id)
    if request.project_id:
        authorize(app, "projects", request.project_id)
    return json_response(200, get_services().inject.inject(user, request))


# The embedder (for relevant memories) is loaded before the SnapStart snapshot.
warm_before_snapshot(lambda: get_services().search.warm_up())
handler = http_handler(app)
