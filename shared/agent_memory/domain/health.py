"""What the health check answers: each part the API needs, whether it answers, and the verdict over them (to a
caller with a token, `GET /v1/health`); to anyone, the verdict alone (`GET /health`).

A part that is down makes the whole answer `unavailable` (503, the same body naming the part). Depth and
latency are reported, never judged: a long queue is work waiting, not a fault.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

PartStatus = Literal["ok", "down"]


class TableHealth(BaseModel):
    status: PartStatus
    latency_ms: float | None = Field(description="the probe read's round trip; null when it failed")
    error: str | None = Field(default=None, description="why the table is down")


class QueueHealth(BaseModel):
    status: PartStatus
    depth: int | None = Field(description="messages waiting for a worker; null when the queue did not answer")
    in_flight: int | None = Field(description="messages a worker holds, or delayed before a retry")
    error: str | None = None


class WorkersHealth(BaseModel):
    status: PartStatus
    alive: bool = Field(description="the workers' process is running")


class EmbedderHealth(BaseModel):
    status: PartStatus
    model: str | None = Field(description="the embedding model; null when embeddings are off")
    loaded: bool = Field(description="the model is in memory (a probe never loads it)")
    lazy: bool = Field(description="the model loads on the first request that needs it")
    error: str | None = None


class SearchHealth(BaseModel):
    tier: Literal["serverless", "opensearch"] = Field(description=(
        "serverless: search inside the function over the user's memories (nothing to probe); opensearch: the "
        "index, probed"))
    status: PartStatus
    latency_ms: float | None = Field(default=None, description="the probe's round trip (opensearch only)")
    error: str | None = Field(default=None, description="why the search tier is down")


class HealthStatus(BaseModel):
    """What `GET /health` tells anyone: up or down, nothing of the parts (those are for callers with a token:
    `GET /v1/health`)."""

    status: Literal["ok", "unavailable"] = Field(description="unavailable (503) when any part is down")


class Health(BaseModel):
    status: Literal["ok", "unavailable"] = Field(description="unavailable (503) when any part is down")
    tables: dict[str, TableHealth] = Field(description="each table the API reads, by its template name")
    queues: dict[str, QueueHealth] | None = Field(
        description="the local stack's queues, by their template name; null deployed, where SQS holds them")
    workers: WorkersHealth | None = Field(
        description="the local stack's workers; null deployed, where Lambda runs them")
    embedder: EmbedderHealth
    search: SearchHealth = Field(default_factory=lambda: SearchHealth(tier="serverless", status="ok"))
    pack: str | None = Field(default=None, description="the deployment's domain pack (MEMORY_PACK)")

    @classmethod
    def of(cls, *, tables: dict[str, TableHealth], embedder: EmbedderHealth,
           queues: dict[str, QueueHealth] | None = None, workers: WorkersHealth | None = None,
           search: SearchHealth | None = None, pack: str | None = None) -> Health:
        search = search or SearchHealth(tier="serverless", status="ok")
        parts: list[TableHealth | QueueHealth | WorkersHealth | EmbedderHealth | SearchHealth] = [
            *tables.values(), *(queues or {}).values(), embedder, search, *([workers] if workers else [])]
        down = any(part.status == "down" for part in parts)
        return cls(status="unavailable" if down else "ok", tables=tables, queues=queues, workers=workers,
                   embedder=embedder, search=search, pack=pack)
