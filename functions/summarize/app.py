"""Summarize function: the structured user profile. Answers 501 until its issue lands."""

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.http import current_user, http_handler, new_resolver, not_implemented

app = new_resolver()


@app.post("/v1/users/<user_id>/profile/summarize")
def summarize(user_id: str) -> Response:
    current_user(app, user_id)
    raise not_implemented("summarize")


handler = http_handler(app)
