"""Inject function: context injection into a Messages request. Answers 501 until its issue lands."""

from aws_lambda_powertools.event_handler import Response

from agent_memory.api.http import http_handler, new_resolver, not_implemented

app = new_resolver()


@app.post("/v1/context/inject")
def inject() -> Response:
    raise not_implemented("inject")


handler = http_handler(app)
