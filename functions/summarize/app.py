"""Summarize function: the structured user profile (the summarize action). Read-only."""

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.http import current_user, http_handler, json_response, new_resolver, parse_body
from agent_memory.api.schemas import SummarizeRequest
from agent_memory.bootstrap import get_services

app = new_resolver()


@app.post("/v1/users/<user_id>/profile/summarize")
def summarize(user_id: str) -> Response:
    user = current_user(app, user_id)
    if (app.current_event.decoded_body or "").strip():  # the body is optional: {"action": "summarize"}
        parse_body(app, SummarizeRequest)
    return json_response(200, get_services().summarize.summarize(user))


handler = http_handler(app)
