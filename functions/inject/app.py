"""Inject function: context blocks assembled into an Anthropic Messages request.

The request model and the services (numpy, every service module) are imported on the first request, or
before the SnapStart snapshot: importing the handler stays light for a cold start without a snapshot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from agent_memory.api.schemas import MAX_INJECT_BODY_BYTES

if TYPE_CHECKING:
    from agent_memory.bootstrap import Services

app = new_resolver()


def get_services() -> Services:
    from agent_memory.bootstrap import get_services as container_services

    return container_services()


@app.post("/v1/context/inject")
def inject() -> Response:
    from agent_memory.api.inject_models import InjectionRequest

    request = parse_body(app, InjectionRequest, max_bytes=MAX_INJECT_BODY_BYTES)
    user = current_user(app, request.user_id)
    if request.project_id:
        authorize(app, "projects", request.project_id)
    return json_response(200, get_services().inject.inject(user, request))


# The embedder (for relevant memories) is loaded before the SnapStart snapshot.
warm_before_snapshot(lambda: get_services().search.warm_up())
handler = http_handler(app)
