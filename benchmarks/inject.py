"""Context injection: latency, cache hit rate and token footprint (make bench-inject).

Part 1, latency in the service layer: one user with --memories memories (LoCoMo turns when
../shared/bench is there, else synthetic) in a table created from template.yaml in AWS's DynamoDB
Local, the store `make run` uses (--backend moto for an in-process moto). Requests are realistic: ~10 turns of history,
consulting_state, device_info and agent_history. Scenarios:
  hit         the identical request again: every cacheable block from the container's cache
  warm        warm container (index built, embedder loaded), a new message each call: user_memory
              misses and runs a search
  shared_hit  a fresh container's services whose blocks are in the table (DynamoDB-backed cache)
  cold        a fresh container's services, nothing cached: partition read + index build + search
              (the embedding model is already loaded; its load time is reported on its own)
  agent loop  the cache hit rate as the service counts it (ContextCacheHits / ContextCacheLookups)
              over a conversation in which each user turn calls inject --calls-per-turn times
Memories are written straight in the store's item format (MEM# items and the META version counter,
which is all `all_current` and `user_version` read): moto's TransactWriteItems deep-copies every table
per call, so a 1,000-memory import through the save path runs it out of memory. Embeddings and
keywords come from the save service's own `enrich`, with the bundled embedder.

Part 2, evidence on LoCoMo (skipped when the data is absent; benchmarks/inject_evidence.py): each dev
conversation's turns are stored once as one user's memories, then every question is injected with an
empty history under several user_memory settings (the previous rule, and each --shares value of
CONTEXT_USER_MEMORY_MAX_SHARE). Reported per setting: how often an evidence turn (any, and all of
them) is in the injected user_memory block, the injected tokens and their share of the whole
conversation as a Messages array, as a table and a PNG curve (--plot); and the share chosen by
two-fold cross-validation by conversation. Document embeddings are kept in --embedding-cache between
runs, so a rerun does not embed the turns again.

Both parts are local: add DynamoDB's network round trips (~5-10 ms per call) in a Lambda.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import (
    add_backend_argument,
    corpus,
    dynamodb_client,
    latency_row,
    latency_table,
    offline_aws_credentials,
    percentile,  # noqa: F401  (the benchmark's helpers, imported from here by its tests)
    timed,
    verdict,
)
from benchmarks.inject_evidence import DEFAULT_SHARES, EVIDENCE_TARGET, TOKEN_TARGET

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
PLOT = ROOT / "docs" / "inject_evidence.png"
EMBEDDING_CACHE = ROOT / ".cache" / "bench-inject-embeddings"
TENANT = "bench"
WINDOW = 200_000  # the context window the token share is measured against
SEED_BATCH = 25  # BatchWriteItem's limit
EMBED_BATCH = 64

# Latency and footprint targets: p95 per scenario, any request under 200 ms, hit rate, context share.
TARGETS: dict[str, dict[str, Any]] = {
    "hit": {"p95_ms": 10.0},
    "warm": {"p95_ms": 50.0},
    "cold": {"p95_ms": 150.0},
    "any": {"p95_ms": 200.0},  # every inject under 200 ms
    "hit_rate": {"min": 0.70},
    "context_share": {"min": 0.05, "max": 0.15},
}


# --- pure helpers (unit-tested) --------------------------------------------------------------------


def hit_rate(hits: int, lookups: int) -> float | None:
    """The service's definition: cache hits over cache lookups (None when nothing was looked up)."""
    if hits < 0 or lookups < 0 or hits > lookups:
        raise ValueError(f"impossible counts: {hits} hits of {lookups} lookups")
    return round(hits / lookups, 4) if lookups else None


def hit_rate_bound(calls_per_turn: int) -> float:
    """The best a message-keyed block can do: the first call of each user turn misses, the rest hit."""
    if calls_per_turn < 1:
        raise ValueError("calls_per_turn must be >= 1")
    return round((calls_per_turn - 1) / calls_per_turn, 4)


def token_figures(full_tokens: int, injected_tokens: float, window: int = WINDOW) -> dict[str, float | None]:
    """Injected context against the whole conversation and against the context window."""
    if full_tokens < 0 or injected_tokens < 0 or window <= 0:
        raise ValueError("token counts must be >= 0 and the window > 0")
    return {"full_history_tokens": full_tokens, "injected_tokens": round(injected_tokens, 1),
            "injected_over_full": round(injected_tokens / full_tokens, 4) if full_tokens else None,
            "share_of_window": round(injected_tokens / window, 4),
            "full_history_share_of_window": round(full_tokens / window, 4)}


def unique_texts(pool: Sequence[str], n: int, start: int = 0) -> list[str]:
    """`n` distinct texts taken cyclically from `pool` from `start`; repeats get a ` (#k)` suffix."""
    if not pool:
        raise ValueError("empty pool")
    out: list[str] = []
    seen: set[str] = set()
    i = start
    while len(out) < n:
        text = pool[i % len(pool)]
        candidate, k = text, 1
        while candidate in seen:
            candidate, k = f"{text} (#{k})", k + 1
        seen.add(candidate)
        out.append(candidate)
        i += 1
    return out


def sample_evenly(items: Sequence[Any], n: int) -> list[Any]:
    """`n` items spread evenly over `items` (all of them when n >= len), order kept."""
    if n <= 0:
        return []
    if n >= len(items):
        return list(items)
    return [items[(i * len(items)) // n] for i in range(n)]


def transcript_messages(lines: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """(speaker, text) lines as a Messages array: the first speaker is the user, the other the
    assistant; consecutive lines of one role are merged into one message."""
    messages: list[dict[str, Any]] = []
    first: str | None = None
    for speaker, text in lines:
        if not text.strip():
            continue
        first = speaker if first is None else first
        role = "user" if speaker == first else "assistant"
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += "\n" + text
        else:
            messages.append({"role": role, "content": text})
    return messages


def block_section(context: str, block_type: str) -> str:
    """The body of `<block_type>...</block_type>` in an injected context message ("" when absent)."""
    opening, closing = f"<{block_type}>", f"</{block_type}>"
    start = context.find(opening)
    if start < 0:
        return ""
    end = context.find(closing, start)
    return context[start + len(opening): end if end >= 0 else len(context)]


def evidence_found(block: str, contents: Iterable[str],
                   normalize: Callable[[str], str] = lambda s: s) -> tuple[bool, bool]:
    """(any, all) of the evidence memories listed in a user_memory block, matched by content:
    a listed memory is a line `- [type] <content> (importance: n)`."""
    wanted = [f"] {normalize(c)} (" for c in contents]
    if not wanted:
        raise ValueError("no evidence")
    present = [w in block for w in wanted]
    return any(present), all(present)


def format_latency_table(rows: dict[str, dict[str, Any]]) -> str:
    return latency_table(rows, TARGETS)


def format_token_table(rows: dict[str, dict[str, Any]]) -> str:
    lines = ["| conversation | memories | questions | full history tok | injected tok | injected/full | "
             "share of 200k | evidence any | evidence all | p50 ms |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def pct(value: float | None, digits: int = 1) -> str:
        return "-" if value is None else f"{value * 100:.{digits}f}%"

    for name, row in rows.items():
        lines.append(f"| {name} | {row['memories']} | {row['questions']} | {row['full_history_tokens']} | "
                     f"{row['injected_tokens']:.0f} | {pct(row['injected_over_full'])} | "
                     f"{pct(row['share_of_window'], 2)} | {pct(row['evidence_any'])} | {pct(row['evidence_all'])} | "
                     f"{row['p50_ms']:.1f} |")
    return "\n".join(lines)


# --- seeding ---------------------------------------------------------------------------------------


class CachingEmbedder:
    """The services' embedder, memoising documents: the LoCoMo part re-seeds texts the latency part
    embedded already, and with `directory` the memo is kept on disk for the next run (keyed by the model).
    Queries pass straight through (they are what the services time)."""

    def __init__(self, inner: Any, directory: Path | None = None) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self._documents: dict[str, Any] = {}
        slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(self.model_id))
        self._files = None if directory is None else (directory / f"{slug}.json", directory / f"{slug}.npy")
        self._saved = 0
        if self._files is not None and all(f.exists() for f in self._files):
            import numpy as np

            texts = json.loads(self._files[0].read_text(encoding="utf-8"))
            vectors = np.load(self._files[1])
            if len(texts) == len(vectors) and vectors.shape[1:] == (self.dimension,):
                self._documents = dict(zip(texts, vectors, strict=True))
                self._saved = len(texts)

    def embed_documents(self, texts: list[str]) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._documents]
        for start in range(0, len(missing), EMBED_BATCH):
            part = missing[start:start + EMBED_BATCH]
            for text, vector in zip(part, self._inner.embed_documents(part), strict=True):
                self._documents[text] = np.asarray(vector, dtype=np.float32)
        return np.stack([self._documents[t] for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)

    def embed_query(self, text: str) -> Any:
        return self._inner.embed_query(text)

    def save(self) -> None:
        """Write the memo when it grew (a cache: delete the directory to start over)."""
        if self._files is None or len(self._documents) == self._saved:
            return
        import numpy as np

        self._files[0].parent.mkdir(parents=True, exist_ok=True)
        texts = list(self._documents)
        np.save(self._files[1], np.stack([self._documents[t] for t in texts]))
        self._files[0].write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        self._saved = len(texts)


def seed_memories(client: Any, table: str, user: Any, memories: Sequence[Any], enricher: Any) -> int:
    """Write NewMemory objects as the store would (MEM# items + META version), identical content once.
    `enricher` is a SaveService: its enrich adds keywords, conversation context and embeddings."""
    from agent_memory.adapters.dynamodb.items import bump_version
    from agent_memory.adapters.dynamodb.items import memory_to_item as _memory_to_item
    from agent_memory.domain.keys import new_memory_key
    from agent_memory.domain.keys import partition_key as _partition
    from agent_memory.domain.models import content_hash, new_memory_version

    items, seen = [], set()
    for memory in enricher.enrich(list(memories)):
        digest = content_hash(memory.content)
        if digest in seen:
            continue
        seen.add(digest)
        items.append(_memory_to_item(new_memory_version(user, memory, new_memory_key(), None)))
    for start in range(0, len(items), SEED_BATCH):
        pending: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in items[start:start + SEED_BATCH]]}
        while pending:
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
    client.update_item(**bump_version(table, _partition(user), by=len(items))["Update"])
    return len(items)


# --- requests --------------------------------------------------------------------------------------


def caller_state(now_ms: int) -> dict[str, Any]:
    """What a consulting agent passes besides the conversation: collected info, an assessment, the
    stage, the device, and the specialist agents it called."""
    return {
        "consulting_state": {
            "collected_info": {"age": 32, "education": "Master's in computer science", "workYears": 8,
                               "industry": "software", "annualIncome": "800k CNY",
                               "languageAbility": ["English", "Mandarin"]},
            "assessment_result": {"recommended_programs": ["TTPS", "QMAS"], "suitability_score": 78,
                                  "highlights": ["top-100 university degree", "8 years in tech"],
                                  "concerns": ["no Hong Kong connection yet"]},
            "current_stage_id": "assessment",
            "stage_history": [{"stage_id": "greeting", "turns_in_stage": 2},
                              {"stage_id": "info_collection", "turns_in_stage": 6}],
            "stage_turn_count": 2,
        },
        "device_info": {"device_type": "mobile", "device_model": "iPhone 15", "os": "iOS 18",
                        "timezone": "Asia/Shanghai", "region": "Hangzhou", "locale": "en-US"},
        "agent_history": [
            {"agent_name": "assessment_agent", "invoked_at": now_ms - 300_000, "duration_ms": 2400,
             "input_summary": "assess eligibility for TTPS and QMAS", "output_summary": "TTPS category C, 78/100",
             "tokens_used": 1800},
            {"agent_name": "policy_agent", "invoked_at": now_ms - 120_000, "duration_ms": 1500,
             "input_summary": "TTPS document checklist", "output_summary": "degree certificate, income proof",
             "tokens_used": 900},
        ],
    }


def history(texts: Sequence[str], turns: int) -> list[dict[str, Any]]:
    """`turns` user/assistant exchanges made of the given texts."""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": texts[i % len(texts)]}
            for i in range(2 * turns)]


def tool_exchange(turn: int, call: int, query: str) -> list[dict[str, Any]]:
    tool_id = f"toolu_{turn:03d}_{call:02d}"
    return [
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look that up."},
                                          {"type": "tool_use", "id": tool_id, "name": "search_policy",
                                           "input": {"query": query[:200]}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                      "content": f"Policy excerpt {call} for: {query[:120]}"}]},
    ]


# --- measuring -------------------------------------------------------------------------------------


def _quiet_metrics() -> None:
    """Powertools prints its metric set to stdout every 100 values; a Lambda flushes per invocation."""
    from agent_memory.observability import metrics

    metrics.clear_metrics()


@contextmanager
def counting_cache_metrics(counts: dict[str, int]) -> Any:
    """Tally the service's own ContextCacheHits / ContextCacheLookups while inside."""
    import agent_memory.services.inject as inject_module

    original = inject_module._record_cache_metrics

    def record(fetched: Any) -> None:
        counts["hits"] += fetched.hits
        counts["lookups"] += fetched.lookups
        original(fetched)

    inject_module._record_cache_metrics = record
    try:
        yield counts
    finally:
        inject_module._record_cache_metrics = original


def _block(result: Any, block_type: str) -> Any:
    return next((b for b in result.blocks if b.type == block_type), None)


def _shutdown(services: Any) -> None:
    executor = getattr(services.inject, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=False)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_latency(args: argparse.Namespace, client: Any, table: str, fresh: Callable[[], Any], enricher: Any,
                texts: Sequence[str], queries: Sequence[str],
                fresh_keyword: Callable[[], Any] | None = None) -> dict[str, Any]:
    from agent_memory.api.inject import InjectionRequest, inject_context
    from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef

    user = ScopeRef(tenant_id=TENANT, user_id=f"inject-{args.memories}")
    memories = [NewMemory(memory_type=MemoryType.FACT, content=t, source="benchmark")
                for t in unique_texts(texts, args.memories)]
    started = time.perf_counter()
    stored = seed_memories(client, table, user, memories, enricher)
    seed_s = time.perf_counter() - started
    log(f"seeded {stored} memories in {seed_s:.1f} s")

    now_ms = int(time.time() * 1000)
    state = caller_state(now_ms)
    past = history(unique_texts(texts, 20, start=len(texts) // 2), 10)
    started_at = datetime.fromtimestamp(time.time() - 900, UTC)
    fresh_messages = iter(unique_texts(queries, 3 * args.runs + args.cold_runs + args.turns + 10))

    def request(message: str, messages: list[dict[str, Any]] | None = None,
                conversation: str = "bench-conv") -> Any:
        return InjectionRequest(user_id=user.user_id, conversation_id=conversation,
                                messages=past if messages is None else messages, current_user_message=message,
                                conversation_started_at=started_at, **state)

    services = fresh()
    rows: dict[str, dict[str, float]] = {}
    details: dict[str, Any] = {}

    # hit: the identical request; the first (untimed) call builds the index and fills the cache.
    same = request(next(fresh_messages))
    first, first_ms = timed(lambda: inject_context(services.inject, user, same))
    details["first_call_ms"] = round(first_ms, 1)
    details["injected_contexts"] = first.injected_contexts
    details["context_tokens"] = first.total_context_tokens
    details["history_tokens"] = first.token_usage.messages_before
    samples, uncached = [], 0
    for _ in range(args.runs):
        _quiet_metrics()
        result, ms = timed(lambda: inject_context(services.inject, user, same))
        samples.append(ms)
        uncached += not _block(result, "user_memory").cached
    rows["hit"] = latency_row(samples)
    details["hit_user_memory_not_cached"] = uncached

    # warm: a new message each call, so user_memory misses and searches (the index stays built).
    warm_requests = [request(next(fresh_messages)) for _ in range(args.runs)]
    samples = []
    for req in warm_requests:
        _quiet_metrics()
        samples.append(timed(lambda req=req: inject_context(services.inject, user, req))[1])
    rows["warm"] = latency_row(samples)

    # warm, keyword: the same with CONTEXT_RELEVANT_SEARCH_MODE=keyword (no query embedding).
    if fresh_keyword is not None:
        keyword_services = fresh_keyword()
        inject_context(keyword_services.inject, user, request(next(fresh_messages)))  # builds the index
        samples = []
        for req in [request(next(fresh_messages)) for _ in range(args.runs)]:
            _quiet_metrics()
            samples.append(timed(lambda req=req: inject_context(keyword_services.inject, user, req))[1])
        rows["warm (keyword relevant search)"] = latency_row(samples)
        _shutdown(keyword_services)

    # shared_hit: fresh services (empty local layer, no index) whose blocks are in the table. The
    # entry is re-primed well within user_memory's 60 s TTL.
    shared = request(next(fresh_messages))
    samples, primed_at, served_shared = [], 0.0, 0
    for _ in range(args.runs):
        if time.time() - primed_at > 30:
            primer = fresh()
            inject_context(primer.inject, user, shared)
            _shutdown(primer)
            primed_at = time.time()
        container = fresh()
        _quiet_metrics()
        result, ms = timed(lambda container=container: inject_context(container.inject, user, shared))
        samples.append(ms)
        served_shared += _block(result, "user_memory").cached
        _shutdown(container)
    rows["shared_hit"] = latency_row(samples)
    details["shared_hit_user_memory_cached"] = served_shared

    # cold: fresh services, nothing cached anywhere.
    samples, build_ms = [], []
    for _ in range(args.cold_runs):
        req = request(next(fresh_messages))
        container, ms = timed(fresh)
        build_ms.append(ms)
        _quiet_metrics()
        samples.append(timed(lambda container=container, req=req: inject_context(container.inject, user, req))[1])
        _shutdown(container)
    rows["cold"] = latency_row(samples)
    details["build_services_ms_p50"] = round(statistics.median(build_ms), 2)

    # agent loop: each user turn calls inject `calls_per_turn` times as the agent makes tool calls.
    counts = {"hits": 0, "lookups": 0}
    memory_hits, loop_samples, done = 0, [], list(past)
    with counting_cache_metrics(counts):
        for turn in range(args.turns):
            message = next(fresh_messages)
            for call in range(args.calls_per_turn):
                req = request(message, messages=agent_loop_messages(done, turn, message, call),
                              conversation="bench-agent-loop")
                _quiet_metrics()
                result, ms = timed(lambda req=req: inject_context(services.inject, user, req))
                loop_samples.append(ms)
                memory_hits += _block(result, "user_memory").cached
            done = completed_turn(done, turn, message, args.calls_per_turn)
    calls = args.turns * args.calls_per_turn
    rows[f"agent loop ({args.turns} turns x {args.calls_per_turn} calls)"] = latency_row(loop_samples)
    _shutdown(services)
    return {
        "memories": stored, "seed_s": round(seed_s, 1), "rows": rows, "details": details,
        "hit_rate": {"turns": args.turns, "calls_per_turn": args.calls_per_turn, "calls": calls, **counts,
                     "rate": hit_rate(counts["hits"], counts["lookups"]),
                     "user_memory_rate": hit_rate(memory_hits, calls),
                     "bound_for_message_keyed_blocks": hit_rate_bound(args.calls_per_turn)},
    }


def agent_loop_messages(done: list[dict[str, Any]], turn: int, message: str, call: int) -> list[dict[str, Any]]:
    """The history the agent sends on its `call`-th inject of a user turn: none of the turn on the first
    call (the service appends the message), then the message and the tool exchanges so far."""
    if call == 0:
        return list(done)
    exchanges = [m for j in range(1, call + 1) for m in tool_exchange(turn, j, message)]
    return [*done, {"role": "user", "content": message}, *exchanges]


def completed_turn(done: list[dict[str, Any]], turn: int, message: str, calls: int) -> list[dict[str, Any]]:
    """The history after a user turn: its message, its tool exchanges, the agent's answer."""
    exchanges = [m for j in range(1, calls) for m in tool_exchange(turn, j, message)]
    return [*done, {"role": "user", "content": message}, *exchanges,
            {"role": "assistant", "content": f"Here is what I found for you ({turn})."}]


# --- main ------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100, help="calls per latency scenario (hit, warm, shared_hit)")
    parser.add_argument("--cold-runs", type=int, default=10, help="calls of the cold scenario")
    parser.add_argument("--memories", type=int, default=1000, help="memories of the latency user")
    parser.add_argument("--turns", type=int, default=20, help="user turns of the agent loop")
    parser.add_argument("--calls-per-turn", type=int, default=3, help="inject calls per user turn (tool calls)")
    parser.add_argument("--skip-latency", action="store_true", help="only the LoCoMo part")
    parser.add_argument("--conversations", type=int, default=10, help="LoCoMo conversations (0 = skip)")
    parser.add_argument("--questions", type=int, default=0,
                        help="questions injected per LoCoMo conversation (0 = all of categories 1-4)")
    parser.add_argument("--shares", type=_shares, default=DEFAULT_SHARES,
                        help="comma-separated CONTEXT_USER_MEMORY_MAX_SHARE values compared on LoCoMo")
    parser.add_argument("--plot", type=Path, default=PLOT, help="the evidence curve's PNG ('' = none)")
    parser.add_argument("--embedding-cache", type=Path, default=EMBEDDING_CACHE,
                        help="document embeddings kept between runs ('' = none)")
    add_backend_argument(parser)
    parser.add_argument("--output", type=Path, default=RESULTS / "inject.json")
    args = parser.parse_args(argv)
    if min(args.runs, args.cold_runs, args.memories, args.turns, args.calls_per_turn) < 1:
        parser.error("--runs, --cold-runs, --memories, --turns and --calls-per-turn must be >= 1")
    args.plot = args.plot if str(args.plot) not in ("", ".") else None
    offline_aws_credentials()

    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.bootstrap.services import build_services
    from agent_memory.services.save import SaveService
    from agent_memory.settings import Settings
    from benchmarks.inject_evidence import run_evidence
    from benchmarks.retrieval import machine_info
    from local.template import create_tables

    settings = Settings(memory_table_name="bench-inject")
    texts, queries, dataset = corpus()
    started = time.perf_counter()
    embedder = build_embedder(settings)
    if embedder is not None:
        embedder.embed_query("warm up")  # the model loads on first use
    embedder_load_ms = (time.perf_counter() - started) * 1000
    cache_dir = args.embedding_cache if str(args.embedding_cache) not in ("", ".") else None
    caching = CachingEmbedder(embedder, cache_dir) if embedder else None  # one memo for both parts
    enricher = SaveService(store=None, extractor=lambda: None,  # type: ignore[arg-type]  (enrich only)
                           embedder=lambda: caching, max_keywords=settings.memory_extraction_max_keywords,
                           min_keyword_weight=settings.memory_extraction_min_keyword_weight)

    started = time.perf_counter()
    latency: dict[str, Any] = {}
    evidence: dict[str, Any] = {}
    with dynamodb_client(args.backend) as client:
        create_tables(client, {"MemoryTable": settings.memory_table_name})

        def fresh() -> Any:
            return build_services(settings, dynamodb_client=client, embedder=embedder)

        def fresh_keyword() -> Any:
            keyword = settings.model_copy(update={"context_relevant_search_mode": "keyword"})
            return build_services(keyword, dynamodb_client=client, embedder=embedder)

        try:
            if not args.skip_latency:
                latency = run_latency(args, client, settings.memory_table_name, fresh, enricher, texts, queries,
                                      fresh_keyword)
            if dataset is None:
                log(f"LoCoMo not found under {Path(os.environ.get('BENCH_DATA_DIR') or '../shared/bench')}: "
                    "evidence report skipped")
            elif args.conversations > 0:
                services = fresh()
                evidence = run_evidence(args, client, settings.memory_table_name, services, settings, enricher,
                                        dataset, log)
                _shutdown(services)
        finally:
            if caching is not None:
                caching.save()
    elapsed = time.perf_counter() - started

    if latency:
        print_latency(latency, args.backend, embedder_load_ms)
    if evidence:
        print_evidence(evidence)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "measured_at": datetime.now(UTC).isoformat(), "backend": args.backend, "machine": machine_info(),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "settings": {name: getattr(settings, name) for name in (
            "embedding_provider", "search_tier", "context_cache_shared", "context_cache_local_entries",
            "context_fetch_threads", "context_top_memories", "context_relevant_memories",
            "context_importance_margin", "context_user_memory_max_share", "context_user_memory_max_tokens",
            "context_reserved_output_tokens", "context_reserved_system_tokens", "context_compaction_threshold")},
        "embedder": {"model": getattr(embedder, "model_id", None), "load_ms": round(embedder_load_ms, 1)},
        "targets": {**TARGETS, "evidence": {"evidence_in_context_min": EVIDENCE_TARGET,
                                            "injected_over_history_max": TOKEN_TARGET}},
        "latency": latency, "locomo_evidence": evidence, "elapsed_s": round(elapsed, 1),
    }, indent=2, ensure_ascii=False))
    print(f"\nwrote {args.output} ({elapsed:.0f} s)")


def print_latency(latency: dict[str, Any], backend: str, embedder_load_ms: float) -> None:
    rate = latency["hit_rate"]
    print(f"\nbackend: {backend}; {latency['memories']} memories; embedder load "
          f"{embedder_load_ms:.0f} ms (once per container, not in `cold`); context "
          f"{latency['details']['context_tokens']} tokens over a "
          f"{latency['details']['history_tokens']}-token history\n")
    print(format_latency_table(latency["rows"]))
    print(f"\ncache hit rate over the agent loop: {_pct(rate['rate'])} of {rate['lookups']} lookups "
          f"(user_memory alone {_pct(rate['user_memory_rate'])}; a message-keyed block can reach at most "
          f"{_pct(rate['bound_for_message_keyed_blocks'])} at {rate['calls_per_turn']} calls per turn); "
          f"target > {_pct(TARGETS['hit_rate']['min'])}: {verdict(rate['rate'], TARGETS['hit_rate'])}")


def print_evidence(evidence: dict[str, Any]) -> None:
    from benchmarks.inject_evidence import format_curve, format_folds

    cv = evidence["cross_validation"]
    print(f"\nLoCoMo dev, the question as the message, messages=[]: evidence in the injected user_memory block "
          f"(targets: >= {_pct(EVIDENCE_TARGET)} with injected <= {_pct(TOKEN_TARGET)} of the history)\n")
    print(format_curve(evidence["curve"]))
    print(f"\nCONTEXT_USER_MEMORY_MAX_SHARE, leaving one conversation out (on the others: the most evidence "
          f"within {_pct(cv['token_target'])} of the history):\n")
    print(format_folds(cv))
    pooled = cv["held_out_pooled"]
    print(f"\nheld out, pooled: evidence in context {_pct(pooled['evidence_any'])}, full evidence "
          f"{_pct(pooled['evidence_all'])}, injected {_pct(pooled['injected_over_full'])} of the history")
    print(f"\ndefault share (the most chosen): {cv['default']:g}; per conversation at it:\n")
    print(format_token_table({name: {**row, **token_figures(row["full_history_tokens"], row["injected_tokens"]),
                                     "p50_ms": row["p50_ms"]}
                              for name, row in evidence["per_conversation_at_default"].items()}))
    if evidence.get("plot"):
        print(f"\nplot: {evidence['plot']}")


def _shares(text: str) -> tuple[float, ...]:
    values = tuple(sorted({float(part) for part in text.split(",") if part.strip()}))
    if not values or any(not 0 < v <= 1 for v in values):
        raise argparse.ArgumentTypeError("shares must be within (0, 1]")
    return values


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


if __name__ == "__main__":
    main()
