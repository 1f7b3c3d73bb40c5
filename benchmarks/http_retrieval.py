"""Retrieval and injected context as users call the product: over HTTP, on the local stack (make bench-http).

Starts `python -m local.stack` on a free port with a temporary data dir (or uses a running stack: --url),
and talks to it through the HTTP API only, under a fresh tenant (X-Tenant-Id `bench-<8 hex>`), so the
figures include what a client meets: the save path's enrichment, the search function's caches, access
statistics recorded through the queue and its worker, the context cache of inject.

Data: LoCoMo dev (each conversation one user, each turn a memory, questions of categories 1-4) and
MADial-Bench zh (each of its users one user, their remembered events the memories, each dialogue a
query), read by benchmarks/datasets.py.

Save modes, each under users of its own (user id `<mode>-<conversation>`, `_` written `-`, which user ids
do not allow), all memories of type FACT with the turn's text and its session's date:
  plain                 content and createdAt only, batches of 100 (POST /v1/users/{u}/memories/batch)
  context               plus `context`, the turn before it in the same session; batches of 100
  conversation_context  plus `conversationId`, the session (`conv-26-s3`), and `context`; batches of 100
  conversation          `conversationId` only, one request per turn (POST /v1/users/{u}/memories): what a
                        chat client logging turns as it goes would send; the service finds the turn
                        before it among the user's recent memories
MADial's memories are standalone events, not turns of a conversation: only `plain` applies to it.

Questions: every question of a user in dataset order, hybrid search, limit 10, min_relevance_score 0
(POST /v1/users/{u}/memories/search), in three passes over every user. Pass 1 is `fresh`: each question is
asked for the first time (of a new user; the questions before it were asked). Passes 2 and 3 are
`long_standing`: every question was asked before and the access statistics are current. Between passes
the benchmark waits until the stack's queues are empty (moto's SQS, whose endpoint the stack writes to
its stack.json) on three polls in a row, then SEARCH_ACCESS_REFRESH_SECONDS more, so every warm search
container reads the statistics again; without stack.json it sleeps FALLBACK_WAIT_S plus that.
Access recording is on in the stack as in production: ACCESS_STATS_QUEUE_URL is the template's queue,
and the stack's workers run AccessStatsFunction on it.

Per user, mode and pass: hit@1/3/5/10, full@10 and MRR@10 (benchmarks.retrieval.ranking_metrics, a
result standing for every turn stored once as its duplicate); per mode and pass: the mean over
questions, the mean over users and the min/max over users (the per-user figures are what
leave-one-conversation-out reporting needs). Stability: for passes 1->2, 2->3 and 1->3, the questions
whose top-5 set of memory keys changed, and those whose top-5 list changed (set or order).

Inject (LoCoMo only; MADial's users have no conversation history to compare the context with): for
INJECT_QUESTIONS questions per conversation, evenly spread (benchmarks.inject_evidence.chosen_queries),
right after the question's search in each pass, POST /v1/context/inject with an empty history and the
question as the current user message. Evidence in context: one of the question's evidence turns is a
line of the injected user_memory block (as benchmarks/inject_evidence.py counts it); the injected tokens
(the response's total_context_tokens) as a share of the conversation's history as a Messages array
(estimate_message_tokens), and the same ratio in characters / 4 (the injected pair's text against the
history's text). The local stack serves every function from one process with their environments merged,
so its inject records access statistics too; on AWS only the load function has the queue.

Prints tables on stdout (progress on stderr) and writes benchmarks/results/http_retrieval.json. The exit
status is 0 unless the stack cannot start or is missing (1) or an HTTP call fails (2).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from benchmarks.common import progress
from benchmarks.datasets import BenchMemory, BenchQuery, BenchUser, load
from benchmarks.local_stack import (
    BATCH_SIZE,
    DEFAULT_DATA_DIR,
    ROOT,
    Client,
    HttpFailure,
    RssProbe,
    against_stack,
    log,
)
from benchmarks.retrieval import DEPTH, fit_query, latency_summary, mean_metrics, ranking_metrics

RESULTS = ROOT / "benchmarks" / "results"
MODES = ("plain", "context", "conversation_context", "conversation")
DATASETS = ("locomo", "madial_zh")
TURN_MODES = frozenset({"context", "conversation_context", "conversation"})  # need turns of a conversation
PASSES = (1, 2, 3)
SEARCH_MODE = "hybrid"
STABLE_K = 5
INJECT_QUESTIONS = 24
QUEUE_POLL_S = 0.5
IDLE_POLLS = 3  # queues empty this many polls in a row: the searches' last statistics are in and written
DRAIN_TIMEOUT_S = 3600.0  # the local worker writes ~4 messages/s (11 sequential UpdateItems each)
DRAIN_LOG_S = 60.0
FALLBACK_WAIT_S = 15.0  # without the queues' endpoint: the access worker's batching window (5 s), and more
METRICS = ("hit@1", "hit@3", "hit@5", "hit@10", f"mrr@{DEPTH}")


# --- pure helpers (unit-tested) --------------------------------------------------------------------


def user_id(mode: str, conversation: str) -> str:
    """The stack's user for a conversation saved in a mode (user ids allow no `_`)."""
    return f"{mode}-{conversation}".replace("_", "-")


def previous_in_session(memories: Sequence[BenchMemory]) -> list[str | None]:
    """Each memory's preceding turn in its session (conversation_id); None for a session's first turn and
    for memories of no session."""
    last: dict[str, str] = {}
    previous: list[str | None] = []
    for memory in memories:
        session = memory.conversation_id
        previous.append(last.get(session) if session else None)
        if session:
            last[session] = memory.content
    return previous


def memory_item(memory: BenchMemory, mode: str, previous: str | None) -> dict[str, Any]:
    """The JSON a client sends to save `memory` in `mode`."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    item: dict[str, Any] = {"memoryType": "FACT", "content": memory.content,
                            "createdAt": memory.created_at.isoformat()}
    if mode in ("context", "conversation_context") and previous is not None:
        item["context"] = previous
    if mode in ("conversation_context", "conversation") and memory.conversation_id:
        item["conversationId"] = memory.conversation_id
    return item


def speaker_and_text(content: str) -> tuple[str, str]:
    """A LoCoMo memory's "Speaker: text" split, as make bench-inject builds the conversation's history."""
    speaker, colon, text = content.partition(": ")
    return (speaker, text) if colon else ("?", content)


def first_hit(ranked: Sequence[Iterable[str]], relevant: Iterable[str]) -> int | None:
    """The 1-based rank of the first result that answers, None when none does."""
    wanted = set(relevant)
    return next((rank for rank, ids in enumerate(ranked, start=1) if wanted & set(ids)), None)


def summarize(per_conversation: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    """Metrics per conversation, their mean over all questions, over conversations, and min/max over
    conversations."""
    rows = {name: found for name, found in per_conversation.items() if found}
    if not rows:
        return {}
    conversations = {name: {"questions": len(found), **mean_metrics(found)} for name, found in rows.items()}
    names = [m for m in next(iter(conversations.values())) if m != "questions"]
    unrounded = [mean_metrics(found, digits=12) for found in rows.values()]
    return {
        "questions": sum(len(found) for found in rows.values()),
        "mean": mean_metrics([r for found in rows.values() for r in found]),
        "conversation_mean": {m: round(statistics.fmean(c[m] for c in unrounded), 4) for m in names},
        "min": {m: min(c[m] for c in conversations.values()) for m in names},
        "max": {m: max(c[m] for c in conversations.values()) for m in names},
        "per_conversation": conversations,
    }


def stability(tops: dict[int, dict[str, list[str]]], k: int = STABLE_K) -> dict[str, dict[str, int]]:
    """tops[pass][question] = the memory keys a pass returned, best first. For each pair of consecutive passes
    and the first against the last: the questions asked in both, those whose top-k set of keys changed and
    those whose top-k list changed (set or order); `any`: changed between any two passes."""
    passes = sorted(tops)
    pairs = list(pairwise(passes))
    if len(passes) > 2:
        pairs.append((passes[0], passes[-1]))
    out: dict[str, dict[str, int]] = {}
    for a, b in pairs:
        common = tops[a].keys() & tops[b].keys()
        out[f"{a}->{b}"] = {
            "questions": len(common),
            "set_changed": sum(1 for q in common if set(tops[a][q][:k]) != set(tops[b][q][:k])),
            "order_changed": sum(1 for q in common if tops[a][q][:k] != tops[b][q][:k]),
        }
    every = set.intersection(*(set(tops[p]) for p in passes)) if passes else set()
    out["any"] = {
        "questions": len(every),
        "set_changed": sum(1 for q in every if len({frozenset(tops[p][q][:k]) for p in passes}) > 1),
        "order_changed": sum(1 for q in every if len({tuple(tops[p][q][:k]) for p in passes}) > 1),
    }
    return out


def summarize_inject(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Injected-context records: evidence rates, mean injected tokens, the mean per-question ratios of the
    injected context to the conversation's history (estimated tokens, and characters / 4)."""
    if not records:
        return {}
    return {
        "questions": len(records),
        "evidence_in_context": round(statistics.fmean(r["any"] for r in records), 4),
        "full_evidence": round(statistics.fmean(r["all"] for r in records), 4),
        "injected_tokens": round(statistics.fmean(r["injected_tokens"] for r in records), 1),
        "injected_over_history": round(statistics.fmean(r["injected_tokens"] / r["history_tokens"]
                                                        for r in records), 5),
        "injected_over_history_chars": round(statistics.fmean(r["injected_chars"] / r["history_chars"]
                                                              for r in records), 5),
        "user_memory_cached": round(statistics.fmean(r["cached"] for r in records), 4),
    }


def injected_pair(answer: dict[str, Any]) -> str:
    """The injected context of an inject response with the pair placement: the user message and the
    assistant's acknowledgement put before the history ("" when nothing was injected)."""
    if not answer.get("injected_contexts"):
        return ""
    return "\n".join(_text(m.get("content")) for m in answer.get("messages", [])[:2])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def pct(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


def format_quality(name: str, results: dict[str, Any]) -> str:
    """One dataset: per mode, fresh and long-standing, the mean over questions with [min-max] over users."""
    lines = [f"| {name} | figure | questions | " + " | ".join(m.replace("mrr", "MRR") for m in METRICS) + " |",
             "|---|---|---:|" + "---:|" * len(METRICS)]
    for mode, result in results.items():
        for figure in ("fresh", "long_standing"):
            row = result.get(figure) or {}
            if not row:
                continue
            cells = [f"{row['mean'][m]:.3f} [{row['min'][m]:.2f}-{row['max'][m]:.2f}]" for m in METRICS]
            lines.append(f"| {mode} | {figure.replace('_', '-')} | {row['questions']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_per_conversation(results: dict[str, Any], metric: str) -> str:
    """One metric per user and mode: fresh / long-standing."""
    modes = list(results)
    conversations = list(dict.fromkeys(c for r in results.values() for c in r["fresh"].get("per_conversation", {})))
    lines = [f"| {metric}: user | " + " | ".join(f"{m} fresh / long" for m in modes) + " |",
             "|---|" + "---:|" * len(modes)]
    for conversation in conversations:
        cells = []
        for mode in modes:
            fresh = results[mode]["fresh"].get("per_conversation", {}).get(conversation)
            long = results[mode]["long_standing"].get("per_conversation", {}).get(conversation)
            cells.append("-" if fresh is None or long is None else f"{fresh[metric]:.3f} / {long[metric]:.3f}")
        lines.append(f"| {conversation} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_stability(name: str, results: dict[str, Any]) -> str:
    lines = [f"| {name} | questions | top-5 set changed 1->2 / 2->3 / 1->3 / any | "
             "top-5 list changed 1->2 / 2->3 / 1->3 / any |", "|---|---:|---:|---:|"]
    for mode, result in results.items():
        found = result["stability"]
        pairs = [p for p in ("1->2", "2->3", "1->3", "any") if p in found]
        sets = " / ".join(str(found[p]["set_changed"]) for p in pairs)
        lists = " / ".join(str(found[p]["order_changed"]) for p in pairs)
        lines.append(f"| {mode} | {found['any']['questions']} | {sets} | {lists} |")
    return "\n".join(lines)


def format_inject(results: dict[str, Any]) -> str:
    lines = ["| mode | figure | questions | evidence in context | full evidence | injected tok | "
             "injected/history (estimate) | injected/history (chars/4) | user_memory cached |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for mode, result in results.items():
        for figure in ("fresh", "long_standing"):
            row = (result.get("inject") or {}).get(figure) or {}
            if not row:
                continue
            lines.append(f"| {mode} | {figure.replace('_', '-')} | {row['questions']} | "
                         f"{pct(row['evidence_in_context'])} | {pct(row['full_evidence'])} | "
                         f"{row['injected_tokens']:.0f} | {pct(row['injected_over_history'], 2)} | "
                         f"{pct(row['injected_over_history_chars'], 2)} | {pct(row['user_memory_cached'])} |")
    return "\n".join(lines)


def format_saves(results: dict[str, dict[str, Any]]) -> str:
    lines = ["| dataset | mode | requests | memories | memory keys | outcomes | context as the turn before | seconds "
             "| memories/s |", "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for dataset, modes in results.items():
        for mode, result in modes.items():
            save = result["save"]
            derived = save.get("context_as_previous_turn")
            derived_cell = "-" if derived is None else f"{derived}/{save['turns_with_previous']}"
            outcomes = ", ".join(f"{name} {count}" for name, count in sorted(save["outcomes"].items()))
            rate = save["memories"] / save["seconds"] if save["seconds"] else 0.0
            lines.append(f"| {dataset} | {mode} | {save['requests']} | {save['memories']} | {save['memory_keys']} | "
                         f"{outcomes} | {derived_cell} | {save['seconds']:.0f} | {rate:.1f} |")
    return "\n".join(lines)


# --- the stack's queues and settings -------------------------------------------------------------


def queue_client(endpoint: str) -> Any:
    import boto3

    return boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="local", aws_secret_access_key="local")


def queue_urls(sqs: Any) -> dict[str, str]:
    """The stack's queues by the template's logical id."""
    from local.runtime import LOCAL_TABLE_PREFIX

    urls = sqs.list_queues(QueueNamePrefix=LOCAL_TABLE_PREFIX).get("QueueUrls", [])
    return {url.rsplit("/", 1)[-1].removeprefix(f"{LOCAL_TABLE_PREFIX}-"): url for url in urls}


def queued(sqs: Any, urls: dict[str, str]) -> int:
    """Messages waiting, in flight or delayed on every queue a worker takes from (not the dead-letter ones)."""
    total = 0
    for logical_id, url in urls.items():
        if "DeadLetter" in logical_id:
            continue
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed"])["Attributes"]
        total += sum(int(value) for value in attributes.values())
    return total


@dataclass
class Workers:
    """Waits until the stack's background work is done: the queues empty, then one refresh interval."""

    endpoint: str | None
    refresh_s: float
    timeout_s: float = DRAIN_TIMEOUT_S
    waits: list[dict[str, Any]] = field(default_factory=list)

    def wait(self, label: str) -> None:
        started = time.monotonic()
        record: dict[str, Any] = {"after": label}
        if self.endpoint:
            sqs = queue_client(self.endpoint)
            urls = queue_urls(sqs)
            idle, most, logged = 0, 0, started
            while idle < IDLE_POLLS and time.monotonic() - started < self.timeout_s:
                count = queued(sqs, urls)
                most = max(most, count)
                idle = idle + 1 if count == 0 else 0
                if time.monotonic() - logged > DRAIN_LOG_S:
                    log(f"  {count} messages still queued ({time.monotonic() - started:.0f} s)")
                    logged = time.monotonic()
                time.sleep(QUEUE_POLL_S)
            record.update(how="queues polled until empty", drained=idle >= IDLE_POLLS, most_queued=most,
                          drain_s=round(time.monotonic() - started, 1))
        else:
            time.sleep(FALLBACK_WAIT_S)
            record.update(how=f"slept {FALLBACK_WAIT_S:g} s (queues not visible)", drained=None)
        time.sleep(self.refresh_s)
        record["seconds"] = round(time.monotonic() - started, 1)
        log(f"waited {record['seconds']} s after {label} ({record['how']}"
            + (f", at most {record['most_queued']} queued" if "most_queued" in record else "") + ")")
        self.waits.append(record)


def stack_settings(endpoint: str | None) -> dict[str, Any]:
    """The service settings that shape these figures, as the stack's functions read them: the template's
    environment of the local stack (queues included) over this process's environment, which a started
    stack inherits. Without the queues' endpoint, this process's environment alone."""
    from unittest import mock

    from agent_memory.settings import Settings

    env: dict[str, str] = {}
    if endpoint:
        from local.runtime import local_environment
        from local.settings import LocalSettings

        env = local_environment(LocalSettings().parameters(), queue_urls(queue_client(endpoint)))
    with mock.patch.dict(os.environ, env):
        settings = Settings()
    picked = {name: value for name, value in settings.model_dump().items()
              if name.startswith(("memory_search_", "memory_relevance_", "search_", "context_", "embedding_"))}
    picked["access_recorded"] = bool(settings.access_stats_queue_url) if endpoint else None
    return picked


def git_changes() -> list[str]:
    """Tracked files that differ from the commit: uncommitted code is measured too."""
    try:
        found = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line[3:] for line in found.stdout.splitlines() if line.strip()]


# --- saving --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SavedItem:
    """What the service answered for one saved turn."""

    source_id: str
    memory_key: str
    outcome: str  # created, superseded, or one that stored nothing (duplicate, ...)
    content: str | None = None  # the content of the memory answered, when the response carries it


STORING_OUTCOMES = frozenset({"created", "superseded"})  # the memory answered holds this item's own content


def stored_contents(items: Sequence[SavedItem], turns: dict[str, str]) -> dict[str, str]:
    """Each turn's text as the memory standing for it holds it: a turn stored once already (a duplicate, a
    restatement) is found in the block by the content of the memory it was kept as."""
    by_key: dict[str, str] = {}
    for item in items:
        if item.content is not None:
            by_key.setdefault(item.memory_key, item.content)
        elif item.outcome in STORING_OUTCOMES:
            by_key.setdefault(item.memory_key, turns[item.source_id])
    return {item.source_id: by_key.get(item.memory_key, turns[item.source_id]) for item in items}


@dataclass
class Saved:
    """One dataset user saved in one mode: what its questions need to be scored."""

    dataset: str
    mode: str
    name: str
    user: str
    queries: list[BenchQuery]
    inject_ids: frozenset[str]
    sources: dict[str, frozenset[str]]  # memory key -> the turns it stands for
    contents: dict[str, str]  # turn -> the content of the memory standing for it
    history_tokens: int
    history_chars: int
    save: dict[str, Any]


def save_turn_by_turn(client: Client, user: str, memories: Sequence[BenchMemory], items: Sequence[dict[str, Any]],
                      previous: Sequence[str | None], save: dict[str, Any]) -> list[SavedItem]:
    """One request per turn; counts the turns whose stored context is the turn before them."""
    save.update(route="POST /v1/users/{u}/memories", context_as_previous_turn=0,
                turns_with_previous=sum(p is not None for p in previous))
    saved = []
    for memory, item, before in progress(list(zip(memories, items, previous, strict=True)),
                                         desc=f"save {user}", unit="turn"):
        answer, _ = client.post(f"/v1/users/{user}/memories", item)
        save["requests"] += 1
        stored = answer["memory"]
        saved.append(SavedItem(memory.source_id, stored["memory_key"], answer["outcome"], stored["content"]))
        if before is not None and stored.get("context") == before:
            save["context_as_previous_turn"] += 1
    return saved


def save_in_batches(client: Client, user: str, memories: Sequence[BenchMemory], items: Sequence[dict[str, Any]],
                    save: dict[str, Any]) -> list[SavedItem]:
    saved = []
    for start in progress(range(0, len(items), BATCH_SIZE), desc=f"save {user}", unit="batch"):
        part = memories[start:start + BATCH_SIZE]
        answer, _ = client.post(f"/v1/users/{user}/memories/batch", {"memories": list(items[start:start + BATCH_SIZE])})
        save["requests"] += 1
        results = answer["results"]
        if len(results) != len(part):
            raise HttpFailure(f"{user}: the batch answered {len(results)} results for {len(part)} memories")
        saved += [SavedItem(m.source_id, r["memory_key"], r["outcome"]) for m, r in zip(part, results, strict=True)]
    return saved


def save_user(client: Client, dataset: str, mode: str, bench_user: BenchUser, inject_questions: int) -> Saved:
    from agent_memory.domain.text.tokens import estimate_message_tokens
    from benchmarks.inject import transcript_messages
    from benchmarks.inject_evidence import chosen_queries

    user = user_id(mode, bench_user.user_id)
    memories = bench_user.memories
    previous = previous_in_session(memories)
    items = [memory_item(m, mode, p) for m, p in zip(memories, previous, strict=True)]
    save: dict[str, Any] = {"route": "POST /v1/users/{u}/memories/batch", "requests": 0}
    started = time.perf_counter()
    if mode == "conversation":
        saved = save_turn_by_turn(client, user, memories, items, previous, save)
    else:
        saved = save_in_batches(client, user, memories, items, save)
    sources: dict[str, set[str]] = {}
    for item in saved:
        sources.setdefault(item.memory_key, set()).add(item.source_id)
    save.update(memories=len(memories), memory_keys=len(sources), outcomes=dict(Counter(i.outcome for i in saved)),
                seconds=round(time.perf_counter() - started, 2))
    transcript = transcript_messages(speaker_and_text(m.content) for m in memories)
    sample = chosen_queries({"queries": bench_user.queries}, inject_questions) if dataset == "locomo" else []
    return Saved(dataset=dataset, mode=mode, name=bench_user.user_id, user=user, queries=list(bench_user.queries),
                 inject_ids=frozenset(q.query_id for q in sample),
                 sources={key: frozenset(ids) for key, ids in sources.items()},
                 contents=stored_contents(saved, {m.source_id: m.content for m in memories}),
                 history_tokens=estimate_message_tokens(transcript),
                 history_chars=sum(len(_text(m["content"])) for m in transcript), save=save)


# --- asking --------------------------------------------------------------------------------------


@dataclass
class PassResult:
    """One user's questions in one pass."""

    rows: list[dict[str, float]] = field(default_factory=list)
    tops: dict[str, list[str]] = field(default_factory=dict)
    first_hits: dict[str, int | None] = field(default_factory=dict)
    injects: list[dict[str, Any]] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    inject_ms: list[float] = field(default_factory=list)
    interaction: list[float] = field(default_factory=list)


def ask(client: Client, saved: Saved, pass_number: int) -> PassResult:
    """Every question of a user: its search, and for the sampled ones, inject right after."""
    from agent_memory.domain.inject.context import one_line
    from benchmarks.inject import block_section, evidence_found

    result = PassResult()
    for query in progress(saved.queries, desc=f"pass {pass_number} {saved.user}", unit="q"):
        answer, seconds = client.post(f"/v1/users/{saved.user}/memories/search", {
            "query": fit_query(query.text), "search_mode": SEARCH_MODE, "limit": DEPTH, "min_relevance_score": 0})
        found = answer.get("results") or []
        keys = [r["memory_key"] for r in found]
        ranked = [saved.sources.get(key, frozenset()) for key in keys]
        result.rows.append(ranking_metrics(ranked, query.relevant))
        result.tops[query.query_id] = keys
        result.first_hits[query.query_id] = first_hit(ranked, query.relevant)
        result.search_ms.append(seconds * 1000)
        result.interaction.extend(float((r.get("score_breakdown") or {}).get("interaction", 0.0)) for r in found)
        if query.query_id not in saved.inject_ids:
            continue
        answer, seconds = client.post("/v1/context/inject", {
            "user_id": saved.user, "conversation_id": f"bench-{query.query_id}", "messages": [],
            "current_user_message": fit_query(query.text)})
        context = injected_pair(answer)
        hit_any, hit_all = evidence_found(block_section(context, "user_memory"),
                                          [saved.contents[i] for i in sorted(query.relevant)], one_line)
        block = next((b for b in answer.get("blocks", []) if b.get("type") == "user_memory"), None)
        result.injects.append({"conversation": saved.name, "question": query.query_id, "any": hit_any,
                               "all": hit_all, "injected_tokens": answer["total_context_tokens"],
                               "injected_chars": len(context), "history_tokens": saved.history_tokens,
                               "history_chars": saved.history_chars, "cached": bool(block and block["cached"])})
        result.inject_ms.append(seconds * 1000)
    return result


# --- the report ----------------------------------------------------------------------------------


def mode_report(users: Sequence[Saved], passes: dict[int, dict[str, PassResult]]) -> dict[str, Any]:
    """One dataset in one mode: every figure, per user and pooled."""
    later = [p for p in passes if p != PASSES[0]]
    by_pass = {p: summarize({name: r.rows for name, r in results.items()}) for p, results in passes.items()}
    long_standing = summarize({u.name: [row for p in later for row in passes[p][u.name].rows] for u in users})
    tops = {p: {q: keys for r in results.values() for q, keys in r.tops.items()} for p, results in passes.items()}
    report: dict[str, Any] = {
        "save": {"route": users[0].save["route"], **{key: sum(u.save[key] for u in users) for key in (
            "requests", "memories", "memory_keys", "seconds")},
                 "outcomes": dict(sum((Counter(u.save["outcomes"]) for u in users), Counter()))},
        "fresh": by_pass.get(PASSES[0], {}), "long_standing": long_standing,
        "passes": {str(p): summary for p, summary in by_pass.items()},
        "stability": stability(tops),
        "mean_interaction_score": {str(p): round(statistics.fmean(
            [x for r in results.values() for x in r.interaction] or [0.0]), 5) for p, results in passes.items()},
        "latency_ms": {str(p): {"search": latency_summary([x for r in results.values() for x in r.search_ms]),
                                "inject": latency_summary([x for r in results.values() for x in r.inject_ms])}
                       for p, results in passes.items()},
        "users": {u.name: {"user_id": u.user, "save": u.save, "history_tokens": u.history_tokens,
                           "history_chars": u.history_chars,
                           "first_hit_by_pass": {q.query_id: [passes[p][u.name].first_hits.get(q.query_id)
                                                              for p in passes] for q in u.queries},
                           "category": {q.query_id: q.category for q in u.queries if q.category}}
                  for u in users},
    }
    if users[0].mode == "conversation":
        report["save"]["context_as_previous_turn"] = sum(u.save["context_as_previous_turn"] for u in users)
        report["save"]["turns_with_previous"] = sum(u.save["turns_with_previous"] for u in users)
    if any(u.inject_ids for u in users):
        records = {p: [x for r in results.values() for x in r.injects] for p, results in passes.items()}
        report["inject"] = {
            "fresh": summarize_inject(records.get(PASSES[0], [])),
            "long_standing": summarize_inject([x for p in later for x in records[p]]),
            "passes": {str(p): summarize_inject(rs) for p, rs in records.items()},
            "per_conversation": {u.name: {str(p): summarize_inject([x for x in records[p]
                                                                      if x["conversation"] == u.name])
                                          for p in passes} for u in users},
            "questions": {u.name: sorted(u.inject_ids) for u in users},
        }
    return report


# --- the run -------------------------------------------------------------------------------------


def run(url: str, data_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    stack = RssProbe(data_dir=data_dir, url=url).read_stack_json()
    endpoint = stack.get("queues") if stack else None
    if not endpoint:
        log(f"the stack's queues are not visible (no 'queues' in {data_dir / 'stack.json'}): "
            f"waits between passes are {FALLBACK_WAIT_S:g} s sleeps")
    settings = stack_settings(endpoint)
    workers = Workers(endpoint=endpoint, refresh_s=settings["search_access_refresh_seconds"],
                      timeout_s=args.drain_timeout)
    client = Client(url, tenant)
    started = time.perf_counter()
    plan: list[Saved] = []
    sizes: dict[str, Any] = {}
    try:
        log(f"tenant {tenant} on {url}; access statistics recorded: {settings['access_recorded']}")
        for name in args.datasets:
            dataset = load(name, limit_conversations=args.conversations)
            sizes[name] = dataset.sizes()
            modes = [m for m in args.modes if name == "locomo" or m not in TURN_MODES]
            for mode in modes:
                log(f"{name}: saving {dataset.memory_count} memories in mode {mode}")
                plan += [save_user(client, name, mode, u, args.questions) for u in dataset.users]
        passes: dict[tuple[str, str], dict[int, dict[str, PassResult]]] = {}
        for number in PASSES:
            pass_started = time.perf_counter()
            for saved in plan:
                passes.setdefault((saved.dataset, saved.mode), {}).setdefault(number, {})[saved.name] = ask(
                    client, saved, number)
            log(f"pass {number}: {time.perf_counter() - pass_started:.0f} s")
            if number != PASSES[-1]:
                workers.wait(f"pass {number}")
    finally:
        client.close()
    results: dict[str, dict[str, Any]] = {}
    for (name, mode), by_pass in passes.items():
        users = [s for s in plan if s.dataset == name and s.mode == mode]
        results.setdefault(name, {})[mode] = mode_report(users, by_pass)
    return {"url": url, "tenant": tenant, "stack": stack, "settings": settings, "sizes": sizes,
            "results": results, "waits": workers.waits, "http_reconnects": client.reconnects,
            "elapsed_s": round(time.perf_counter() - started, 1)}


def print_report(result: dict[str, Any]) -> None:
    titles = {"locomo": "LoCoMo dev", "madial_zh": "MADial-Bench zh"}
    print(f"hybrid search, limit 10, min_relevance_score 0; mean over questions [min-max over users]; "
          f"fresh = pass 1, long-standing = passes 2 and 3 (tenant {result['tenant']})")
    for name, modes in result["results"].items():
        sizes = result["sizes"][name]
        print(f"\n{titles.get(name, name)}: {sizes['users']} users, {sizes['memories']} memories, "
              f"{sizes['queries']} questions")
        print(format_quality(name, modes))
        print()
        print(format_per_conversation(modes, "hit@5"))
        print()
        print(format_per_conversation(modes, f"mrr@{DEPTH}"))
        print()
        print(format_stability(name, modes))
        if any("inject" in r for r in modes.values()):
            print(f"\ninjected context ({name}, {INJECT_QUESTIONS} questions per conversation unless --questions; "
                  "empty history):")
            print(format_inject({m: r for m, r in modes.items() if "inject" in r}))
    print("\nsaves:")
    print(format_saves(result["results"]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=None, help="a running stack (e.g. http://127.0.0.1:3000); default: start "
                                                    "one on a free port with a temporary data dir")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="with --url: the stack's data dir, holding its stack.json (default LOCAL_DATA_DIR, "
                             f"else {DEFAULT_DATA_DIR})")
    parser.add_argument("--modes", type=_names(MODES), default=MODES, help=f"comma-separated, of: {', '.join(MODES)}")
    parser.add_argument("--datasets", type=_names(DATASETS), default=DATASETS,
                        help=f"comma-separated, of: {', '.join(DATASETS)}")
    parser.add_argument("--conversations", type=int, default=None, metavar="N",
                        help="the first N LoCoMo conversations and MADial users (a small run)")
    parser.add_argument("--questions", type=int, default=INJECT_QUESTIONS,
                        help="questions injected per LoCoMo conversation, evenly spread (0 = all)")
    parser.add_argument("--output", type=Path, default=RESULTS / "http_retrieval.json")
    parser.add_argument("--drain-timeout", type=float, default=DRAIN_TIMEOUT_S, metavar="S",
                        help="the longest wait for the queues to empty between passes (the JSON says if they did)")
    args = parser.parse_args(argv)
    if args.conversations is not None and args.conversations < 1:
        parser.error("--conversations must be >= 1")
    from benchmarks.peers import git_state
    from benchmarks.retrieval import machine_info

    # A SIGTERM unwinds like an exception, so the started stack is stopped and its temporary data dir removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    temporary = args.url is None and args.data_dir is None
    data_dir: Path = (Path(tempfile.mkdtemp(prefix="bench-http-")) if temporary
                      else (args.data_dir or DEFAULT_DATA_DIR)).resolve()
    commit = {**git_state(), "changed_files": git_changes()}
    outcome = against_stack(args.url, data_dir, temporary, lambda url: run(url, data_dir, args),
                            "leave URL= out")
    if isinstance(outcome, int):
        return outcome
    result = outcome

    print_report(result)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine_info(), **commit,
        "started_stack": args.url is None,
        "protocol": {"modes": list(args.modes), "datasets": list(args.datasets), "conversations": args.conversations,
                     "search_mode": SEARCH_MODE, "limit": DEPTH, "min_relevance_score": 0, "passes": list(PASSES),
                     "stable_k": STABLE_K, "inject_questions": args.questions, "batch_size": BATCH_SIZE},
        **result,
    }, indent=2, ensure_ascii=False, default=str) + "\n")
    print(f"\nwrote {args.output} ({result['elapsed_s']:.0f} s)")
    return 0


def _names(known: Sequence[str]) -> Any:
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"unknown: {', '.join(unknown) or '(none given)'}; "
                                             f"known: {', '.join(known)}")
        return names
    return parse


if __name__ == "__main__":
    sys.exit(main())
