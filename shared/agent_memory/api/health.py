"""The health check's answer: 200 when every part answers, else 503 with the same body (to a caller with a token,
naming the part that is down). Never cached: each probe sees the parts as they are now."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from agent_memory.domain.health import Health, HealthStatus

RETRY_AFTER = "5"


def health_response(report: Health, *, detailed: bool) -> Response[str]:
    """`detailed`: every part (a caller with a token); else the verdict alone, which tells an anonymous caller
    nothing of the deployment (its queues, model, pack)."""
    headers = {"Cache-Control": "no-store"}
    if report.status != "ok":
        headers["Retry-After"] = RETRY_AFTER
    body = report if detailed else HealthStatus(status=report.status)
    return Response(200 if report.status == "ok" else 503, "application/json", body.model_dump_json(),
                    headers=headers)
