"""What embedding costs the CPU, by text length, against the request budget (make bench-embed-cost).

A request the API accepts must finish well inside the function's 29 s timeout. The bundled e5 model's work per
text grows faster than its tokens (attention is quadratic in the text's length), so the budget counts each text's
cost as the model spends it: `embedding_costs` (domain/search/embedding_budget.py). This measures, with the bundled
embedder on one thread (a Lambda of 1,769 MB has one vCPU), the CPU-seconds of a batch of texts at each length
the budget distinguishes, fits CPU-seconds to the budget's cost units, and reports the worst request the budget
admits (the texts that cost the most CPU per budget unit) and its margin under the timeout.

Timings are CPU time of this process (time.process_time), which a loaded machine inflates less than wall time;
Lambda's vCPU is assumed no faster than this machine's core.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import offline_aws_credentials

RESULTS = Path(__file__).resolve().parent / "results" / "embedding_cost.json"
TIMEOUT_SECONDS = 29.0
# The worst accepted request may take at most this share of the timeout in embedding CPU: the rest is the
# request's other work (reads, a transaction, extraction) and a slower or shared core.
TARGET_SHARE = 0.5
SENTENCE_EN = "The applicant has worked as a data engineer in Berlin for seven years and plans to move. "
SENTENCE_ZH = "申请人在柏林做了七年数据工程师，计划明年带家人移居香港并申请高才通计划。"


def text_of(tokens: int, zh: bool) -> str:
    from agent_memory.domain.text.tokens import estimate_tokens

    sentence = SENTENCE_ZH if zh else SENTENCE_EN
    text = ""
    while estimate_tokens(text + sentence) <= tokens:
        text += sentence
    return text or sentence


def measure(lengths: list[int], batch: int, rounds: int) -> list[dict[str, Any]]:
    from agent_memory.adapters.embeddings.local import LocalE5Embedder
    from agent_memory.domain.search.embedding_budget import embedding_costs
    from agent_memory.domain.text.tokens import estimate_tokens

    embedder = LocalE5Embedder()
    embedder.embed_documents(["warm up"])
    rows = []
    for tokens in lengths:
        for zh in (False, True):
            texts = [text_of(tokens, zh) + f" ({i})" for i in range(batch)]
            samples = []
            for _ in range(rounds):  # a few passages are embedded on one thread (FEW_PASSAGES), as on one vCPU
                started = time.process_time()
                embedder.embed_documents(texts)
                samples.append(time.process_time() - started)
            seconds = min(samples) / batch
            units = sum(embedding_costs(texts)) / batch
            rows.append({"tokens": sum(estimate_tokens(t) for t in texts) / batch, "language": "zh" if zh else "en",
                         "cpu_seconds_per_text": round(seconds, 4), "budget_units_per_text": units,
                         "cpu_ms_per_unit": round(1000 * seconds / units, 3)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="16,64,128,256,384,512")
    parser.add_argument("--batch", type=int, default=4, help="texts per call (at most 4: one thread)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    offline_aws_credentials()
    from agent_memory.settings import Settings

    budget = Settings().max_embedded_tokens_per_request
    rows = measure([int(n) for n in args.lengths.split(",")], args.batch, args.rounds)
    worst = max(rows, key=lambda r: r["cpu_ms_per_unit"])
    worst_seconds = budget * worst["cpu_ms_per_unit"] / 1000
    result = {"budget_units": budget, "rows": rows, "worst": worst,
              "worst_request_cpu_seconds": round(worst_seconds, 2),
              "timeout_seconds": TIMEOUT_SECONDS, "target_share": TARGET_SHARE,
              "margin_seconds": round(TIMEOUT_SECONDS - worst_seconds, 2),
              "met": worst_seconds <= TARGET_SHARE * TIMEOUT_SECONDS}
    print("| tokens per text | language | CPU s per text | budget units per text | CPU ms per unit |")
    print("|---:|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['tokens']:.0f} | {r['language']} | {r['cpu_seconds_per_text']:.4f} | "
              f"{r['budget_units_per_text']:.0f} | {r['cpu_ms_per_unit']:.3f} |")
    print(f"\nbudget {budget} units; the worst accepted request ({worst['tokens']:.0f}-token {worst['language']} "
          f"texts) takes ~{worst_seconds:.1f} CPU s of embedding, {TIMEOUT_SECONDS - worst_seconds:.1f} s inside the "
          f"{TIMEOUT_SECONDS:.0f} s timeout; target ≤ {TARGET_SHARE * TIMEOUT_SECONDS:.1f} s: "
          f"{'met' if result['met'] else 'NOT met'}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
