"""The conversation log (L1): write and search latency in the service layer (make bench-log).

The acceptance targets: a message is written within 100 ms (流水账存储), a similarity
search returns within 500 ms (向量检索). Measured through `ConversationLogService` with the bundled
embedder, on a table created from template.yaml in AWS's DynamoDB Local, the store `make run` uses
(--backend moto for an in-process moto):

  write 1     one message: its embedding, expires_at, the active-week marker, one TransactWriteItems
  write 10    a batch of 10 messages: one embedding call, one transaction of 11 items
  queued 1/10 the same writes as deployed, with the log's work queue: the messages are stored, one
              embedding job is queued, and the worker embeds them moments later (the job is recorded
              in process here: add one SQS SendMessage, ~10-20 ms, in a Lambda)
  worker 10   the worker's side of a batch of 10: one BatchGetItem, one embedding call, 10 updates
  store only  the same writes without embeddings (EMBEDDING_PROVIDER=none): the store's share
  embed only  the embedding call alone, for 1 and 10 texts
  search      a query over --messages logged messages of one scope: the scope's unexpired log read
              (paginated Query), BM25 over it, the query embedding and cosine, top 5

On moto, TransactWriteItems deep-copies the whole table once per item of every transaction, so its
cost grows with the table, which DynamoDB's does not. The write scenarios therefore run first, on
an empty table, and each write's items are deleted again (untimed) so the table stays small; the
search corpus is logged afterwards. On moto the table is created without its stream (the search
indexer's, unused here): moto keeps every stream record and deep-copies them too, which ran a first
version of this benchmark out of memory (24 GB) within 2,000 writes. Both backends are in-process or
loopback: add DynamoDB's network round trips (~5-10 ms per call) in a Lambda.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from benchmarks.common import (
    add_backend_argument,
    dynamodb_client,
    latency_row,
    latency_table,
    offline_aws_credentials,
    timed,
)

RESULTS = Path(__file__).resolve().parent / "results"
TENANT = "bench"
SEED_BATCH = 50
# p95 targets: a write within 100 ms, a search within 500 ms.
# "queued" is the write as deployed (the log's work queue configured); "write" embeds inline.
TARGETS: dict[str, dict[str, float]] = {"write": {"p95_ms": 100.0}, "queued": {"p95_ms": 100.0},
                                        "search": {"p95_ms": 500.0}}


# --- pure helpers ----------------------------------------------------------------------------------


def format_table(rows: dict[str, dict[str, Any]]) -> str:
    return latency_table(rows, TARGETS)


def corpus(n: int) -> tuple[list[str], list[str]]:
    """LoCoMo's turns and questions when ../shared/bench has them, else synthetic Chinese and English."""
    try:
        from benchmarks.datasets import load_locomo

        dataset = load_locomo()
        texts = [m.content for u in dataset.users for m in u.memories]
        queries = [q.text for u in dataset.users for q in u.queries]
        if len(texts) >= n and queries:
            return texts, queries
    except (OSError, ValueError):
        pass
    texts = [f"第{i}次访视:受试者{i % 97}号血压{120 + i % 30}/80,话题{i % 53}" if i % 2 else
             f"message {i}: site {i % 37} reported {i % 11} deviations about topic {i % 53}"
             for i in range(max(n, 2000))]
    return texts, [f"site {i} deviations" if i % 2 else f"受试者{i}号血压" for i in range(100)]


class RecordedQueue:
    """The log's work queue, in process: keeps the embedding jobs for the worker scenario."""

    def __init__(self) -> None:
        self.embedding_jobs: list[Any] = []

    def enqueue(self, jobs: list[Any]) -> list[str]:
        return []

    def enqueue_embedding(self, job: Any) -> bool:
        self.embedding_jobs.append(job)
        return True


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- scenarios -------------------------------------------------------------------------------------


def run_writes(service: Any, cleanup: Callable[[], None], texts: list[str], runs: int, size: int) -> list[float]:
    from agent_memory.api.log import AppendMessagesRequest, append_to_log
    from agent_memory.domain.tiers.memory_layers import scope_ref

    scope = scope_ref(TENANT, "projects", "bench-write")
    samples = []
    for run in range(runs):
        batch = [{"role": "user" if i % 2 == 0 else "assistant", "content": texts[(run * size + i) % len(texts)]}
                 for i in range(size)]
        request = AppendMessagesRequest.model_validate({"messages": batch})
        result, ms = timed(lambda request=request, run=run: append_to_log(service, scope, f"conv-{run}", request))
        assert result.stored_count == size
        samples.append(ms)
        cleanup()
    return samples


def seed_log(service: Any, texts: list[str], n: int) -> None:
    from agent_memory.api.log import AppendMessagesRequest, append_to_log
    from agent_memory.domain.tiers.memory_layers import scope_ref

    scope = scope_ref(TENANT, "projects", "bench-search")
    start = datetime.now(UTC) - timedelta(days=20)
    for offset in range(0, n, SEED_BATCH):
        batch = [{"role": "user" if i % 2 == 0 else "assistant", "content": texts[i],
                  "createdAt": (start + timedelta(minutes=25 * i)).isoformat()}
                 for i in range(offset, min(n, offset + SEED_BATCH))]
        request = AppendMessagesRequest.model_validate({"messages": batch})
        append_to_log(service, scope, f"conv-{offset // 200}", request)


def run_searches(service: Any, queries: list[str], runs: int) -> tuple[list[float], int]:
    from agent_memory.api.log import LogSearchRequest, search_log
    from agent_memory.domain.tiers.memory_layers import scope_ref

    scope = scope_ref(TENANT, "projects", "bench-search")
    samples, found = [], 0
    for run in range(runs):
        request = LogSearchRequest(query=queries[run % len(queries)][:2000], limit=5)
        result, ms = timed(lambda request=request: search_log(service, scope, request))
        samples.append(ms)
        found = max(found, result.total_found)
    return samples, found


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="writes per write scenario")
    parser.add_argument("--messages", type=int, default=1000, help="logged messages searched")
    parser.add_argument("--searches", type=int, default=100, help="searches over them")
    add_backend_argument(parser)
    parser.add_argument("--output", type=Path, default=RESULTS / "log_write.json")
    args = parser.parse_args(argv)
    if min(args.runs, args.messages, args.searches) < 1:
        parser.error("--runs, --messages and --searches must be >= 1")
    offline_aws_credentials()


    from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore
    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.services.conversation_log import ConversationLogService
    from agent_memory.settings import Settings
    from benchmarks.retrieval import machine_info
    from local.template import dynamodb_tables

    settings = Settings(memory_table_name="bench-log", log_extraction_queue_url="")
    texts, queries = corpus(args.messages)
    embedder, load_ms = timed(lambda: build_embedder(settings))
    if embedder is not None:
        _, warm_ms = timed(lambda: embedder.embed_documents(["warm up"]))  # the model loads on first use
        load_ms += warm_ms
    embed_rows = {}
    if embedder is not None:
        embed_rows = {f"embed only ({n})": latency_row([timed(lambda n=n, i=i: embedder.embed_documents(
            texts[i * n:(i + 1) * n]))[1] for i in range(min(args.runs, 50))]) for n in (1, 10)}

    started = time.perf_counter()
    with dynamodb_client(args.backend) as client:
        spec = dynamodb_tables()["MemoryTable"]
        if args.backend == "moto":  # see the docstring: moto would deep-copy every stream record ever written
            spec.pop("StreamSpecification", None)
        client.create_table(TableName=settings.memory_table_name, **spec)
        service = ConversationLogService(
            layers=DynamoLayerStore(table_name=settings.memory_table_name, client=client), embedder=lambda: embedder,
            ttl_days=settings.conversation_log_ttl_days, timezone=ZoneInfo(settings.rollup_timezone))

        def cleanup() -> None:
            items = client.scan(TableName=settings.memory_table_name, ProjectionExpression="pk, sk")["Items"]
            for start in range(0, len(items), 25):
                client.batch_write_item(RequestItems={settings.memory_table_name: [
                    {"DeleteRequest": {"Key": item}} for item in items[start:start + 25]]})

        unembedded = ConversationLogService(
            layers=DynamoLayerStore(table_name=settings.memory_table_name, client=client), embedder=lambda: None,
            ttl_days=settings.conversation_log_ttl_days, timezone=ZoneInfo(settings.rollup_timezone))
        jobs = RecordedQueue()
        queued = ConversationLogService(
            layers=DynamoLayerStore(table_name=settings.memory_table_name, client=client), embedder=lambda: embedder,
            queue=lambda: jobs, ttl_days=settings.conversation_log_ttl_days,
            timezone=ZoneInfo(settings.rollup_timezone))
        rows: dict[str, dict[str, Any]] = {}
        for size in (1, 10):
            log(f"writing {args.runs} x {size} message(s)")
            rows[f"write {size}"] = latency_row(run_writes(service, cleanup, texts, args.runs, size))
        for size in (1, 10):  # as deployed: stored now, embedded by the worker
            jobs.embedding_jobs.clear()
            rows[f"queued {size}"] = latency_row(run_writes(queued, lambda: None, texts, args.runs, size))
            if size == 10:
                rows["worker 10"] = latency_row([timed(lambda job=job: queued.embed_logged(job))[1]
                                                 for job in jobs.embedding_jobs[:min(args.runs, 50)]])
            cleanup()
        for size in (1, 10):  # the store's share: validation, one transaction, no embedding
            rows[f"store only {size}"] = latency_row(run_writes(unembedded, cleanup, texts, args.runs, size))
        log(f"logging {args.messages} messages to search")
        _, seed_ms = timed(lambda: seed_log(service, texts, args.messages))
        log(f"searching {args.searches} times")
        samples, found = run_searches(service, queries, args.searches)
        rows[f"search ({args.messages} msgs)"] = latency_row(samples)
        rows.update(embed_rows)
    elapsed = time.perf_counter() - started

    print(format_table(rows))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine_info(),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "embedder": {"model": getattr(embedder, "model_id", None), "load_ms": round(load_ms, 1)},
        "targets": TARGETS, "latency": rows, "search_candidates": found,
        "seed_ms_per_message": round(seed_ms / args.messages, 2), "elapsed_s": round(elapsed, 1),
    }, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {args.output} ({elapsed:.0f} s)")


if __name__ == "__main__":
    main()
