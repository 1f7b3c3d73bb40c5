"""`GET /health`'s answer: 200 when every part answers, else 503 with the same body, naming the part that is
down. Never cached: each probe sees the parts as they are now."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from agent_memory.domain.health import Health

RETRY_AFTER = "5"


def health_response(report: Health) -> Response[str]:
    headers = {"Cache-Control": "no-store"}
    if report.status != "ok":
        headers["Retry-After"] = RETRY_AFTER
    return Response(200 if report.status == "ok" else 503, "application/json", report.model_dump_json(),
                    headers=headers)
