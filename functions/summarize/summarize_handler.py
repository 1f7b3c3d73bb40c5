"""Summarize function: the structured user profile (the summarize action). Read-only."""

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.http import current_user, http_handler, json_response, new_resolver, parse_optional_body
from agent_memory.api.profile import SummarizeOutput, SummarizeRequest
from agent_memory.bootstrap import get_services

app = new_resolver()


@app.post("/v1/users/<user_id>/profile/summarize")
def summarize(user_id: str) -> Response[str]:
    user = current_user(app, user_id)
    request = parse_optional_body(app, SummarizeRequest)  # {"action": "summarize", "as_of": ...}, or nothing
    as_of = request.as_of if request is not None else None
    return json_response(200, SummarizeOutput.of(get_services().summarize.summarize(user, as_of=as_of), as_of))


handler = http_handler(app)
