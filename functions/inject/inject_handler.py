"""Inject function: context blocks assembled into an Anthropic Messages request.

The services (numpy, every service module) are imported on the first request, or before the SnapStart
snapshot: importing the handler stays light for a cold start without a snapshot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.http import (
    authorize,
    current_tenant,
    current_user,
    http_handler,
    json_response,
    new_resolver,
    parse_body,
    warm_before_snapshot,
)
from agent_memory.api.inject import InjectionRequest, inject_context
from agent_memory.api.schemas import MAX_INJECT_BODY_BYTES

if TYPE_CHECKING:
    from agent_memory.bootstrap.services import Services

app = new_resolver()


def get_services() -> Services:
    from agent_memory.bootstrap import get_services as container_services

    return container_services()


def _check_user(user_id: Any) -> None:
    if isinstance(user_id, str):  # any other type is the model's 422, after the body is read
        current_user(app, user_id)


def _check_project(project_id: Any) -> None:
    if isinstance(project_id, str):
        authorize(app, "projects", project_id, field="project_id")


# Either spelling the request model accepts.
_ACTING_FOR = {"user_id": _check_user, "userId": _check_user, "project_id": _check_project, "projectId": _check_project}


@app.post("/v1/context/inject")
def inject() -> Response[str]:
    current_tenant(app)  # a token without a tenant is refused before the body is read
    # The body names the user (and project) it acts for: the token is checked against each as it is read, so
    # a token for another user is refused before megabytes of messages are parsed or validated.
    request = parse_body(app, InjectionRequest, max_bytes=MAX_INJECT_BODY_BYTES, checks=_ACTING_FOR)
    user = current_user(app, request.user_id)
    if request.project_id:
        authorize(app, "projects", request.project_id, field="project_id")
    return json_response(200, inject_context(get_services().inject, user, request))


# The embedder (for relevant memories) is loaded before the SnapStart snapshot.
warm_before_snapshot(lambda: get_services().search.warm_up())
handler = http_handler(app)
