"""Settings of the local stack (`make run`), from the environment, validated once at start."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from local.template import ROOT


class LocalSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False)

    port: int = Field(default=3000, ge=0, le=65535)
    # Where DynamoDB Local keeps the table and where queued work waits across a stop (`make reset` wipes it).
    data_dir: Path = Field(default=ROOT / ".data", validation_alias="LOCAL_DATA_DIR")
    # Warm "containers" per function: concurrent requests to one function run on up to this many at once,
    # as Lambda would scale out; more wait for a free one, as a reserved concurrency would make them.
    containers_per_function: int = Field(default=4, ge=1, le=64, validation_alias="LOCAL_CONTAINERS_PER_FUNCTION")
    # A normal stop first lets the workers finish the queued work, for at most this long; what is left is
    # saved under the data dir and queued again at the next start.
    drain_timeout_seconds: float = Field(default=30.0, ge=0, validation_alias="LOCAL_DRAIN_TIMEOUT_SECONDS")
    # JVM heap of DynamoDB Local (its data lives in SQLite on disk, not on the heap).
    dynamodb_heap_mb: int = Field(default=256, ge=64, validation_alias="LOCAL_DYNAMODB_HEAP_MB")
    # DynamoDB Local exiting on its own is restarted (same port, same data) at most this many times; then
    # the stack stops, saying so (0: stop at the first exit).
    dynamodb_max_restarts: int = Field(default=3, ge=0, le=100, validation_alias="LOCAL_DYNAMODB_MAX_RESTARTS")
    # The API and workers processes hand the memory their allocator keeps after it was freed back this often
    # (local/memory_trim.py); 0 = never.
    memory_trim_seconds: float = Field(default=30.0, ge=0, validation_alias="LOCAL_MEMORY_TRIM_SECONDS")
    # Where the API's and the workers' EMF metric lines go: `file` (metrics.log under the data dir), `console` (stdout,
    # as on Lambda: one JSON line per request) or `off`.
    metrics: Literal["file", "console", "off"] = Field(default="file", validation_alias="LOCAL_METRICS")
    llm_provider: str = Field(default="", validation_alias="LLM_PROVIDER")
    # The domain pack and the tenants on another one (the functions validate them): `MEMORY_PACK=general make run`.
    memory_pack: str = Field(default="", validation_alias="MEMORY_PACK")
    memory_tenant_packs: str = Field(default="", validation_alias="MEMORY_TENANT_PACKS")
    # Retention policies (the functions validate them): `MEMORY_RETENTION_DAYS='{"INTENT": 180}' make run`.
    memory_retention_days: str = Field(default="", validation_alias="MEMORY_RETENTION_DAYS")
    memory_tenant_retention_days: str = Field(default="", validation_alias="MEMORY_TENANT_RETENTION_DAYS")
    # The search tier: `opensearch` starts a real OpenSearch node (data under the data dir's opensearch/) unless
    # OPENSEARCH_ENDPOINT names one already running.
    search: Literal["serverless", "opensearch"] = Field(default="serverless", validation_alias="SEARCH")
    # An OpenSearch endpoint makes OpenSearch the search tier, and the workers then feed the table's stream to
    # the indexer, as on AWS. Empty: the serverless tier, or the node `search=opensearch` starts.
    opensearch_endpoint: str = Field(default="", validation_alias="OPENSEARCH_ENDPOINT")
    opensearch_port: int = Field(default=9200, ge=1, le=65535, validation_alias="OPENSEARCH_PORT")
    opensearch_heap_mb: int = Field(default=1024, ge=256, validation_alias="LOCAL_OPENSEARCH_HEAP_MB")
    # Set by the supervisor for its workers process: where DynamoDB Local listens.
    dynamodb_endpoint: str = Field(default="", validation_alias="AWS_ENDPOINT_URL_DYNAMODB")
    # > 0: fire the weekly rollup's schedule this often (demos); WEEK= picks the week it rolls up.
    rollup_every_seconds: float = Field(default=0.0, ge=0, validation_alias="ROLLUP_EVERY_SECONDS")
    rollup_week: str | None = Field(default=None, validation_alias="WEEK")
    # Set by the supervisor for its workers process: queue logical id -> URL.
    queue_urls: dict[str, str] = Field(default_factory=dict, validation_alias="LOCAL_QUEUE_URLS")

    def parameters(self) -> dict[str, str] | None:
        """template.yaml parameter overrides, as `sam local --parameter-overrides` would take them."""
        overrides = {"LlmProvider": self.llm_provider, "OpenSearchEndpoint": self.opensearch_endpoint,
                     "MemoryPack": self.memory_pack, "MemoryTenantPacks": self.memory_tenant_packs,
                     "MemoryRetentionDays": self.memory_retention_days,
                     "MemoryTenantRetentionDays": self.memory_tenant_retention_days}
        return {name: value for name, value in overrides.items() if value} or None
