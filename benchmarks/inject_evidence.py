"""Does the injected context carry the evidence? The LoCoMo part of `make bench-inject`.

Each dev conversation's turns are stored once as one user's memories (the previous turn of a session
as the memory's search context, as the save path stores it); then every question of categories 1-4 is
sent as the current message with an empty history, once per selection setting of the user_memory
block. Settings are compared on the same stored data: only the block sources are rebuilt (with a
fresh context cache), so the import and its embeddings are paid once.

Per setting: evidence in context (at least one of the question's evidence turns is a line of the
injected user_memory block), full evidence (all of them), the injected tokens and their share of the
whole conversation as a Messages array (the mean of the per-question ratios), and inject's p50.
"before" is the previous rule, top 5 by importance plus 3 relevant (margin 0, no share).

The default share is chosen leaving one conversation out: on the other conversations, the share with
the most evidence in context among those whose injected tokens stay within TOKEN_TARGET of the history;
reported on the one left out, for each in turn. The default is the share most folds chose.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

TOKEN_TARGET = 0.05  # injected tokens at most 5% of the history ...
EVIDENCE_TARGET = 0.80  # ... with at least one evidence turn in context for 80% of the questions
DEFAULT_SHARES = (0.02, 0.03, 0.04, 0.06)
BEFORE = "before"


# --- pure helpers (unit-tested) --------------------------------------------------------------------


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One setting over some questions: evidence rates, mean tokens, the mean injected/full ratio."""
    if not records:
        raise ValueError("no records")
    return {
        "questions": len(records),
        "evidence_any": round(statistics.fmean(r["any"] for r in records), 4),
        "evidence_all": round(statistics.fmean(r["all"] for r in records), 4),
        "injected_tokens": round(statistics.fmean(r["injected"] for r in records), 1),
        "user_memory_tokens": round(statistics.fmean(r["memory_tokens"] for r in records), 1),
        "injected_over_full": round(statistics.fmean(r["injected"] / r["full"] for r in records), 4),
        "p50_ms": round(statistics.median(r["ms"] for r in records), 2),
    }


def choose_share(summaries: dict[float, dict[str, Any]], token_target: float = TOKEN_TARGET) -> float:
    """The share with the most evidence in context among those within the token target (the smaller
    share on a tie); the smallest share when none is within it."""
    if not summaries:
        raise ValueError("no shares")
    within = [s for s, row in summaries.items() if row["injected_over_full"] <= token_target]
    if not within:
        return min(summaries)
    return max(within, key=lambda s: (summaries[s]["evidence_any"], -s))


def folds(conversations: Sequence[str]) -> list[tuple[set[str], set[str]]]:
    """Leave one conversation out: (the others, the one), for each conversation in sorted order."""
    ordered = sorted(set(conversations))
    return [(set(ordered) - {held}, {held}) for held in ordered]


def cross_validate(records: dict[float, list[dict[str, Any]]],
                   token_target: float = TOKEN_TARGET) -> dict[str, Any]:
    """Choose the share on all conversations but one, report it on that one, for each in turn; the default
    is the share most folds chose (the smaller on a tie). `held_out_pooled` pools the held-out reports."""
    conversations = sorted({r["conversation"] for rows in records.values() for r in rows})
    results, pooled = [], []
    for tune, held in folds(conversations):
        tuning = {s: summarize([r for r in rows if r["conversation"] in tune]) for s, rows in records.items()}
        chosen = choose_share(tuning, token_target)
        held_rows = [r for r in records[chosen] if r["conversation"] in held]
        pooled.extend(held_rows)
        results.append({"tuned_on": sorted(tune), "held_out": sorted(held), "share": chosen,
                         "tuning": tuning[chosen], "held_out_result": summarize(held_rows)})
    votes = [f["share"] for f in results]
    default = max(sorted(set(votes)), key=lambda share: (votes.count(share), -share))
    return {"folds": results, "default": default, "token_target": token_target,
            "held_out_pooled": summarize(pooled)}


def pct(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


def format_curve(rows: dict[str, dict[str, Any]]) -> str:
    """The settings side by side; the last column is what each step buys: evidence points per extra
    100 injected tokens over the previous share."""
    lines = ["| setting | questions | evidence in context | full evidence | injected tok | user_memory tok | "
             "injected/history | p50 ms | +evidence per +100 tok |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    previous: dict[str, Any] | None = None
    for name, row in rows.items():
        gain = "-"
        if previous is not None and name != BEFORE and row["injected_tokens"] > previous["injected_tokens"]:
            points = (row["evidence_any"] - previous["evidence_any"]) * 100
            gain = f"{points * 100 / (row['injected_tokens'] - previous['injected_tokens']):+.2f} pt"
        lines.append(f"| {name} | {row['questions']} | {pct(row['evidence_any'])} | {pct(row['evidence_all'])} | "
                     f"{row['injected_tokens']:.0f} | {row['user_memory_tokens']:.0f} | "
                     f"{pct(row['injected_over_full'], 2)} | {row['p50_ms']:.1f} | {gain} |")
        if name != BEFORE:
            previous = row
    return "\n".join(lines)


def format_folds(cv: dict[str, Any]) -> str:
    lines = ["| tuned on | chosen share | tuning: evidence / injected | held out | held-out evidence in context | "
             "held-out full evidence | held-out injected/history |",
             "|---|---:|---:|---|---:|---:|---:|"]
    for fold in cv["folds"]:
        tuning, held = fold["tuning"], fold["held_out_result"]
        lines.append(f"| {', '.join(fold['tuned_on'])} | {fold['share']:g} | {pct(tuning['evidence_any'])} / "
                     f"{pct(tuning['injected_over_full'], 2)} | {', '.join(fold['held_out'])} | "
                     f"{pct(held['evidence_any'])} | {pct(held['evidence_all'])} | "
                     f"{pct(held['injected_over_full'], 2)} |")
    return "\n".join(lines)


def plot_curve(rows: dict[str, dict[str, Any]], path: Path) -> Path:
    """Evidence in context (any, all) against the injected share of the history, one point per
    setting, with the targets drawn in."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shares = [(name, row) for name, row in rows.items() if name != BEFORE]
    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    xs = [row["injected_over_full"] * 100 for _, row in shares]
    ax.plot(xs, [row["evidence_any"] for _, row in shares], "o-", label="evidence in context (≥1 evidence turn)")
    ax.plot(xs, [row["evidence_all"] for _, row in shares], "s--", label="full evidence (all evidence turns)")
    for (name, row), x in zip(shares, xs, strict=True):
        ax.annotate(name.replace("share ", ""), (x, row["evidence_any"]), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize=8)
    if BEFORE in rows:
        before = rows[BEFORE]
        ax.plot([before["injected_over_full"] * 100] * 2, [before["evidence_any"], before["evidence_all"]], "x",
                color="grey", markersize=9, label="before: top 5 by importance + 3 relevant")
    ax.axhline(EVIDENCE_TARGET, color="green", linewidth=0.8, linestyle=":")
    ax.axvline(TOKEN_TARGET * 100, color="red", linewidth=0.8, linestyle=":")
    ax.text(TOKEN_TARGET * 100, ax.get_ylim()[1], f" {TOKEN_TARGET:.0%} of the history", color="red",
            fontsize=8, va="top")
    ax.text(ax.get_xlim()[0], EVIDENCE_TARGET, f" {EVIDENCE_TARGET:.0%} target", color="green", fontsize=8,
            va="bottom")
    ax.set_xlabel("injected tokens, % of the conversation's history")
    ax.set_ylabel("share of questions")
    ax.set_title("LoCoMo dev: evidence in the injected context vs its size (labels: max share)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


# --- measuring -------------------------------------------------------------------------------------


def seed_conversations(client: Any, table: str, dataset: Any, enricher: Any, limit: int,
                       log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Store each conversation's turns as one user's memories; what the questions need to be scored."""
    from agent_memory.domain.models import ScopeRef
    from agent_memory.domain.text.tokens import estimate_message_tokens
    from benchmarks.common import progress
    from benchmarks.inject import TENANT, seed_memories, transcript_messages
    from benchmarks.retrieval import to_new_memory

    seeded = []
    users = dataset.users[:limit]
    for bench_user in progress(users, desc="seed (embed and store each turn)", total=len(users), unit="conversation"):
        user = ScopeRef(tenant_id=TENANT, user_id=f"locomo-{bench_user.user_id}")
        started = time.perf_counter()
        stored = seed_memories(client, table, user, [to_new_memory(m) for m in bench_user.memories], enricher)
        log(f"{bench_user.user_id}: seeded {stored} memories in {time.perf_counter() - started:.1f} s")
        transcript = transcript_messages(tuple(m.content.split(": ", 1)) if ": " in m.content else ("?", m.content)
                                         for m in bench_user.memories)
        seeded.append({"conversation": bench_user.user_id, "user": user, "memories": stored,
                       "full": estimate_message_tokens(transcript),
                       "contents": {m.source_id: m.content for m in bench_user.memories},
                       "queries": bench_user.queries})
    return seeded


def inject_service(services: Any, settings: Any, executor: Any, **selection: Any) -> Any:
    """An inject service over the benchmark's store and search index, with the user_memory selection
    overridden and a cache of its own (so no setting is served another's blocks)."""
    from agent_memory.adapters.context_cache import LayeredContextCache, LocalContextCache
    from agent_memory.domain.inject.summary import extractive_summary
    from agent_memory.services.blocks.registry import default_sources
    from agent_memory.services.inject import InjectService

    options: dict[str, Any] = {
        "top_memories": settings.context_top_memories, "relevant_memories": settings.context_relevant_memories,
        "relevant_search_mode": settings.context_relevant_search_mode or None,
        "importance_margin": settings.context_importance_margin,
        "user_memory_max_share": settings.context_user_memory_max_share,
        "user_memory_max_tokens": settings.context_user_memory_max_tokens, **selection}
    current = getattr(services.index, "current_memories", None)
    sources = default_sources(store=services.store, search=services.search, current_memories=current,
                              knowledge=None, experiences=None, memory_layers=services.memory_layers, **options)
    return InjectService(sources=sources, cache=LayeredContextCache(local=LocalContextCache(), shared=None),
                         executor=executor, summarizer=lambda: extractive_summary)


def chosen_queries(conversation: dict[str, Any], questions: int) -> list[Any]:
    from benchmarks.inject import sample_evenly

    queries = conversation["queries"]
    return list(queries) if questions <= 0 else sample_evenly(queries, questions)


def warm_query_embeddings(services: Any, seeded: Sequence[dict[str, Any]], questions: int) -> None:
    """Embed every question once, untimed: each setting then finds it in the embedder's query cache,
    so the settings' latencies compare the selection, not who embedded the question first (the latency
    part times a warm miss with its embedding)."""
    from benchmarks.retrieval import fit_query

    embedder = services.embedder_provider()
    if embedder is not None:
        for conversation in seeded:
            for query in chosen_queries(conversation, questions):
                embedder.embed_query(fit_query(query.text))


def evaluate(inject: Any, seeded: Sequence[dict[str, Any]], questions: int, desc: str = "inject"
             ) -> list[dict[str, Any]]:
    """Every sampled question of every conversation through `inject`: one record each."""
    from agent_memory.api.inject import InjectionRequest, inject_context
    from agent_memory.domain.inject.context import one_line
    from benchmarks.common import progress, timed
    from benchmarks.inject import _quiet_metrics, block_section, evidence_found
    from benchmarks.retrieval import fit_query

    records = []
    asked = [(conversation, query) for conversation in seeded for query in chosen_queries(conversation, questions)]
    for conversation, query in progress(asked, desc=desc, total=len(asked), unit="question"):
        user = conversation["user"]
        request = InjectionRequest(user_id=user.user_id, conversation_id=f"locomo-{query.query_id}", messages=[],
                                   current_user_message=fit_query(query.text))
        _quiet_metrics()
        result, ms = timed(lambda request=request, user=user: inject_context(inject, user, request))
        block = next((b for b in result.blocks if b.type == "user_memory"), None)
        context = result.messages[0]["content"] if result.injected_contexts else ""
        hit_any, hit_all = evidence_found(block_section(context, "user_memory"),
                                          [conversation["contents"][i] for i in sorted(query.relevant)], one_line)
        records.append({"conversation": conversation["conversation"], "any": hit_any, "all": hit_all,
                        "injected": result.total_context_tokens, "memory_tokens": block.tokens if block else 0,
                        "full": conversation["full"], "ms": ms})
    return records


def run_evidence(args: Any, client: Any, table: str, services: Any, settings: Any, enricher: Any, dataset: Any,
                 log: Callable[[str], None]) -> dict[str, Any]:
    """Seed once, evaluate "before" and every share, cross-validate the share, plot the curve."""
    seeded = seed_conversations(client, table, dataset, enricher, args.conversations, log)
    settings_grid: dict[str, dict[str, Any]] = {BEFORE: {"importance_margin": 0, "user_memory_max_share": 0.0}}
    settings_grid.update({f"share {share:g}": {"user_memory_max_share": share} for share in args.shares})
    warm_query_embeddings(services, seeded, args.questions)
    records: dict[str, list[dict[str, Any]]] = {}
    with ThreadPoolExecutor(max_workers=settings.context_fetch_threads) as executor:
        for name, selection in settings_grid.items():
            started = time.perf_counter()
            records[name] = evaluate(inject_service(services, settings, executor, **selection), seeded, args.questions,
                                     desc=name)
            log(f"{name}: {len(records[name])} questions in {time.perf_counter() - started:.0f} s")
    rows = {name: summarize(rs) for name, rs in records.items()}
    by_share = {share: records[f"share {share:g}"] for share in args.shares}
    cv = cross_validate(by_share)
    default = records[f"share {cv['default']:g}"]
    per_conversation = {c["conversation"]: {"memories": c["memories"], **summarize(
        [r for r in default if r["conversation"] == c["conversation"]]), "full_history_tokens": c["full"]}
        for c in seeded}
    plot = plot_curve(rows, args.plot) if args.plot else None
    return {"settings": settings_grid, "curve": rows, "cross_validation": cv,
            "per_conversation_at_default": per_conversation, "plot": str(plot) if plot else None}
