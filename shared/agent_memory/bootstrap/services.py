"""The API's and the workers' graph: every service with its adapters (build_services)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Literal

from agent_memory.adapters.pinned_versions import VersionPinningStore, pinned_versions
from agent_memory.api.tools import ToolExecutor
from agent_memory.bootstrap.context import context_cache, context_sources, intent_retrievers
from agent_memory.bootstrap.erasure import build_erasure
from agent_memory.bootstrap.health import BuiltOnce, health_service
from agent_memory.bootstrap.index import (
    build_as_of_index,
    build_index,
    cached_memories,
    index_snapshots,
    retained,
)
from agent_memory.bootstrap.portability import scope_archive
from agent_memory.bootstrap.workers import layer_store, rollup_service
from agent_memory.domain.inject.conversation import Message
from agent_memory.domain.models import ExtractedMemory
from agent_memory.domain.packs import DomainPack, ExtractionRules, default_pack, pack_named
from agent_memory.domain.profile.profile import Profile
from agent_memory.domain.search.ranking import RankingWeights
from agent_memory.domain.search.relevance import RelevanceCalibration
from agent_memory.ports import (
    ConversationTurn,
    Embedder,
    ExtractionQueue,
    HotMemoryRefresher,
    LayerStore,
    MemoryExtractor,
    MemoryFileStore,
    MemoryStore,
    SearchIndex,
    SynonymStore,
    TableEraser,
    TableProbe,
    TokenCounter,
    WeeklyReportWriter,
)
from agent_memory.services.conversation_log import ConversationLogService, LogExtractionWorker
from agent_memory.services.erasure import ErasureService
from agent_memory.services.health import HealthService
from agent_memory.services.inject import InjectLimits, InjectService
from agent_memory.services.load import LoadService
from agent_memory.services.memory_layers import MemoryLayersService
from agent_memory.services.memory_tool import MemoryToolService
from agent_memory.services.portability import PortabilityService
from agent_memory.services.recall import RecallService
from agent_memory.services.save import SaveService
from agent_memory.services.search import SearchService
from agent_memory.services.summarize import SummarizeService
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

    from agent_memory.adapters.retained_index import RetainedIndex, RetainedPastIndex
    from agent_memory.services.rollup import RollupService


class _Unset(Enum):
    """"Not given": build the production adapter (None means "none at all")."""

    TOKEN = 0


_UNSET: Literal[_Unset.TOKEN] = _Unset.TOKEN
EmbedderProvider = Callable[[], Embedder | None]


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: MemoryStore
    save: SaveService
    load: LoadService
    search: SearchService
    recall: RecallService
    summarize: SummarizeService
    tools: ToolExecutor  # runs a model's tool_use block with the services above
    inject: InjectService
    index: RetainedIndex  # the search tier, with retention applied to what it proposes and serves
    as_of_index: RetainedPastIndex  # both tiers' searches of the past
    synonyms: SynonymStore
    embedder_provider: EmbedderProvider  # call it for the Embedder (or None); the model loads on first use
    layers: LayerStore  # the three layers' store: L1 log, L2 hot memory, L3 reports
    memory_layers: MemoryLayersService  # L2 hot memory, L3 reads, intent-driven context
    rollup: RollupService  # L3 weekly rollup: worker tasks, hot-memory refresh
    conversation_log: ConversationLogService  # L1: append, search
    log_extraction: LogExtractionWorker  # L1 log and forget: the queued extractions' worker
    memory_tool: MemoryToolService  # Claude's memory tool over the user's /memories files
    erasure: ErasureService  # verified erasure of a scope; the tombstone check of the workers
    health: HealthService  # GET /health: the table answers, the embedder's state
    portability: PortabilityService  # export and import of a scope's data, page by page


def read_fields(text: str, pack: DomainPack | None = None) -> list[ExtractedMemory]:
    """The profile fields a directly saved memory states, read by the pack's offline rules: deterministic and
    free, whichever LLM extracts conversation turns (a direct save never waits for a model)."""
    return _offline_rules((pack or default_pack()).extraction).extract(ConversationTurn(user_message=text))


@cache
def _offline_rules(rules: ExtractionRules) -> MemoryExtractor:
    from agent_memory.extraction import OfflineExtractor

    return OfflineExtractor(rules)


def _offline_extraction(settings: Settings, extractor: MemoryExtractor | None) -> bool:
    """Whether conversation turns are read by the offline rules: the extractor handed in, else LLM_PROVIDER."""
    if extractor is not None:
        from agent_memory.extraction import OfflineExtractor

        return isinstance(extractor, OfflineExtractor)
    return settings.effective_llm_provider == "offline"


def ranking_weights(settings: Settings) -> RankingWeights:
    return RankingWeights(
        keyword=settings.memory_search_keyword_weight,
        text=settings.memory_search_text_similarity_weight,
        time=settings.memory_search_time_decay_weight,
        half_life_days=settings.memory_search_half_life_days,
        lexical_share=settings.memory_search_lexical_share,
        time_cue=settings.memory_search_time_cue_weight,
        interaction=settings.memory_search_interaction_weight,
        topic=settings.memory_search_topic_weight,
        absolute=settings.memory_search_absolute_weight,
        calibration=RelevanceCalibration(cosine_weight=settings.memory_relevance_cosine_weight,
                                         keyword_weight=settings.memory_relevance_keyword_weight,
                                         bias=settings.memory_relevance_bias,
                                         topic_weight=settings.memory_relevance_topic_weight,
                                         topical_weight=settings.memory_relevance_topical_weight),
    )


def build_services(
    settings: Settings,
    *,
    store: MemoryStore | None = None,
    extractor: MemoryExtractor | None = None,
    embedder: Embedder | _Unset | None = _UNSET,
    index: SearchIndex | None = None,
    synonyms: SynonymStore | None = None,
    layers: LayerStore | None = None,
    memory_files: MemoryFileStore | None = None,
    dynamodb_client: DynamoDBClient | None = None,
    report_writer: WeeklyReportWriter | None = None,
    hot_memory_refresher: HotMemoryRefresher | _Unset | None = _UNSET,
    table_probe: TableProbe | None = None,
    table_eraser: TableEraser | None = None,
) -> Services:
    """Wire the services. Tests pass fakes or moto-backed clients; production passes nothing. A table-backed
    adapter not given (store, synonyms, layers, memory_files) is built over the DynamoDB client, which is made
    only when one is missing."""
    from agent_memory.adapters.dynamodb.capacity import meter_reads
    from agent_memory.adapters.dynamodb.items import report_unavailable_store, table_client

    if dynamodb_client is None and None in (store, synonyms, layers, memory_files, table_eraser):
        dynamodb_client = table_client(connect_seconds=settings.store_connect_timeout_seconds,
                                       read_seconds=settings.store_read_timeout_seconds,
                                       attempts=settings.store_call_attempts)
    report_unavailable_store(dynamodb_client)  # the table unreachable or failing: StoreUnavailable (503)
    meter_reads(dynamodb_client)  # a request's read units, when it is metered (the local front door's header)
    retention = settings.retention
    own_table = store is None  # snapshots only of this table's store
    snapshots = index_snapshots(settings, dynamodb_client) if own_table else None
    as_of_snapshots = index_snapshots(settings, dynamodb_client, as_of=True) if own_table else None
    if store is None:
        from agent_memory.adapters.dynamodb.store import DynamoMemoryStore

        store = DynamoMemoryStore(
            table_name=settings.memory_table_name, client=_made(dynamodb_client),
            max_attempts=settings.store_max_attempts, retention=retention)
    if synonyms is None:
        from agent_memory.adapters.dynamodb.synonyms import DynamoSynonymStore

        synonyms = DynamoSynonymStore(table_name=settings.memory_table_name, client=_made(dynamodb_client),
                                      max_tenants=settings.synonym_cache_tenants)

    packs = settings.packs

    def build_embedder() -> Embedder | None:
        if not isinstance(embedder, _Unset):
            return embedder
        from agent_memory.adapters.embeddings import build_embedder

        return build_embedder(settings)

    embedder_provider = BuiltOnce(build_embedder)
    pack_extractor = _pack_extractors(settings, extractor, embedder_provider)

    @cache
    def narrator_provider() -> Callable[[Profile], str]:
        from agent_memory.adapters.llm import build_narrator

        return build_narrator(settings)

    # One read of a user's version counters per inject request, however many parts ask (adapters/pinned_versions.py).
    pinned_store = VersionPinningStore(store)
    # Retention on every read of a tier, whichever was built or given.
    index = retained(build_index(settings, pinned_store, embedder_provider, snapshots) if index is None else index,
                     retention)
    as_of_index = build_as_of_index(settings, pinned_store, embedder_provider, as_of_snapshots)
    on_access = None
    if settings.access_stats_queue_url:
        import boto3

        from agent_memory.adapters.access_stats import SqsAccessRecorder

        on_access = SqsAccessRecorder(queue_url=settings.access_stats_queue_url, client=boto3.client("sqs"))
    search = SearchService(
        store=store, index=index, embedder=embedder_provider, synonyms=synonyms,
        weights=ranking_weights(settings),
        expand_synonyms=settings.memory_extraction_enable_synonym_expansion,
        default_mode=settings.memory_search_default_mode,
        on_access=on_access,
        query_vector_lines=settings.memory_search_query_vector_lines,
        neighbour_share=settings.memory_search_neighbour_share,
        diversity=settings.memory_search_diversity,
        packs=packs,
        as_of_index=as_of_index,
    )
    if layers is None:
        layers = layer_store(settings, _made(dynamodb_client))
    conversation_log = _conversation_log(settings, layers, embedder_provider)
    retrievers = intent_retrievers(settings, embedder_provider)
    memory_layers = MemoryLayersService(layers=layers, log=conversation_log, embedder=embedder_provider,
                                        question_intents=settings.question_intents,
                                        retrievers={"sop": retrievers.sop, "protocol": retrievers.protocol},
                                        max_tokens=settings.intent_context_max_tokens)
    summarizer_provider = cache(lambda: _conversation_summarizer(settings))
    counter_provider = cache(lambda: _token_counter(settings))
    inject = InjectService(
        sources=context_sources(settings, pinned_store, search, cached_memories(index), memory_layers,
                                 retrievers),
        cache=context_cache(settings, dynamodb_client),
        executor=ThreadPoolExecutor(max_workers=settings.context_fetch_threads, thread_name_prefix="context"),
        counter=counter_provider,
        summarizer=summarizer_provider,
        limits=InjectLimits(
            reserve=settings.context_reserve_rule,
            compaction_threshold=settings.context_compaction_threshold,
            keep_recent_turns=settings.context_keep_recent_turns,
        ),
        request_scope=pinned_versions,
        pack_of=lambda tenant: settings.pack_for(tenant).name,
    )
    save = SaveService(
        store=store,
        extractor=lambda: pack_extractor(packs.default),
        extractors=pack_extractor,
        packs=packs,
        embedder=embedder_provider,
        max_keywords=settings.memory_extraction_max_keywords,
        min_keyword_weight=settings.memory_extraction_min_keyword_weight,
        categories=settings.categories_for,
        field_reader=read_fields,
        index=index,
        max_embedded_tokens=settings.max_embedded_tokens_per_request,
        duplicates=settings.duplicate_rule,
        offline_rules=_offline_extraction(settings, extractor),
        retention=retention,
    )
    erasure = build_erasure(settings, dynamodb_client, index, table_eraser)
    load = LoadService(store=store, search=search, current_memories=cached_memories(index), packs=packs,
                       memories_at=as_of_index.memories_at)
    summarize = SummarizeService(store=store, current_memories=cached_memories(index),
                                 narrate=narrator_provider, packs=packs, memories_at=as_of_index.memories_at)
    return Services(
        settings=settings,
        store=store,
        save=save,
        load=load,
        search=search,
        recall=RecallService(search=search),
        summarize=summarize,
        tools=ToolExecutor(save=save, search=search, load=load, summarize=summarize, memory_layers=memory_layers,
                           conversation_log=conversation_log),
        inject=inject,
        index=index,
        as_of_index=as_of_index,
        synonyms=synonyms,
        embedder_provider=embedder_provider,
        health=health_service(settings, dynamodb_client, embedder_provider, table_probe),
        layers=layers,
        memory_layers=memory_layers,
        conversation_log=conversation_log,
        log_extraction=LogExtractionWorker(layers=layers, save=save, dropped=erasure.dropped),
        erasure=erasure,
        memory_tool=MemoryToolService(_memory_file_store(settings, _made(dynamodb_client)) if memory_files is None
                                      else memory_files),
        rollup=rollup_service(settings, layers, embedder_provider, writer=report_writer,
                              refresher=_given(hot_memory_refresher), dropped=erasure.dropped),
        portability=PortabilityService(archive=scope_archive(settings, dynamodb_client), synonyms=synonyms,
                                       embedder=embedder_provider,
                                       max_embedded_tokens=settings.max_embedded_tokens_per_request,
                                       retention=retention),
    )


def _given(refresher: HotMemoryRefresher | _Unset | None) -> Callable[[], HotMemoryRefresher | None] | None:
    """The refresher a test handed in (None included: no refresher), or None for the configured one."""
    if isinstance(refresher, _Unset):
        return None
    return lambda: refresher


def _pack_extractors(settings: Settings, extractor: MemoryExtractor | None,
                     embedder: EmbedderProvider) -> Callable[[DomainPack], MemoryExtractor]:
    """A pack's extractor, built on first use (the LLM SDK is imported then): the one given for every pack, else
    the configured provider's with the pack's rules (and exemplars, read with the embedder) or prompt."""

    @cache
    def extractor_of(pack_name: str) -> MemoryExtractor:
        if extractor is not None:
            return extractor
        from agent_memory.adapters.llm import build_extractor

        exemplars = pack_named(pack_name).extraction.exemplars
        return build_extractor(settings, pack=pack_named(pack_name), embedder=embedder() if exemplars else None)

    return lambda pack: extractor_of(pack.name)


def _made(client: DynamoDBClient | None) -> DynamoDBClient:
    """The client an adapter over the table is built on (made above whenever such an adapter is not given)."""
    if client is None:
        raise ValueError("an adapter over the table is to be built but no DynamoDB client was made")
    return client


def _memory_file_store(settings: Settings, dynamodb_client: DynamoDBClient) -> MemoryFileStore:
    from agent_memory.adapters.dynamodb.memory_files import DynamoMemoryFileStore

    return DynamoMemoryFileStore(table_name=settings.memory_table_name, client=dynamodb_client,
                                 max_attempts=settings.store_max_attempts)


def _conversation_log(settings: Settings, layers: LayerStore, embedder: EmbedderProvider) -> ConversationLogService:
    from zoneinfo import ZoneInfo

    @cache
    def queue() -> ExtractionQueue | None:
        if not settings.log_extraction_queue_url:
            return None
        import boto3

        from agent_memory.adapters.log_extraction import SqsExtractionQueue

        return SqsExtractionQueue(queue_url=settings.log_extraction_queue_url, client=boto3.client("sqs"))

    return ConversationLogService(layers=layers, embedder=embedder, queue=queue,
                                  ttl_days=lambda tenant: settings.retention(tenant).log_days,
                                  timezone=ZoneInfo(settings.rollup_timezone))


def _conversation_summarizer(settings: Settings) -> Callable[[list[Message]], str]:
    from agent_memory.adapters.llm import build_conversation_summarizer

    return build_conversation_summarizer(settings)


def _token_counter(settings: Settings) -> TokenCounter | None:
    from agent_memory.adapters.llm import build_token_counter

    return build_token_counter(settings)
