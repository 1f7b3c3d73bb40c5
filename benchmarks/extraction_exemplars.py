"""Builds the general pack's exemplars (`python -m benchmarks.extraction_exemplars`): the clauses of its two
development sets, each labelled with the field it states, the clauses stating nothing labelled `none`, and the
small talk of tests/data/extraction_general_none_clauses.txt and the clauses written for the exemplars
(extraction_general_written_exemplars.jsonl); then their vectors with the bundled embedder.

A label is placed on the clause holding its value; a value not written out (a number in words, yes to children)
on the clause the rules read that field from, else on the turn's only clause. The held-out set is never read.
Writes shared/agent_memory/domain/packs/general_exemplars.jsonl and .npz.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

from agent_memory.domain.models import MemoryType
from agent_memory.domain.packs import pack_named
from agent_memory.extraction import OfflineExtractor
from agent_memory.extraction.exemplars import NONE, PACKS_DIR, Exemplar, clauses, load_exemplars, save_vectors
from agent_memory.ports import ConversationTurn
from benchmarks.extraction import DATA, load_turns

SOURCES = [DATA / "extraction_general_dev.jsonl", DATA / "extraction_general_dev2.jsonl"]
NONE_CLAUSES = DATA / "extraction_general_none_clauses.txt"
# Clauses written for the exemplars alone, each labelled (or `none`), by an author who saw only the field table.
WRITTEN = DATA / "extraction_general_written_exemplars.jsonl"
NAME = "general_exemplars"


def _fold(value: Any) -> str:
    return unicodedata.normalize("NFKC", str(value)).casefold().strip()


def turn_exemplars(turn: dict[str, Any], rules: OfflineExtractor) -> list[Exemplar]:
    parts = clauses(unicodedata.normalize("NFKC", turn["user_message"]))
    labels: dict[int, dict[str, tuple[str, str | None]]] = {i: {} for i in range(len(parts))}
    for expected in turn["expected"]:
        value = expected.get("value")
        where = [i for i, part in enumerate(parts) if isinstance(value, str) and _fold(value) in _fold(part)]
        where = where or [i for i, part in enumerate(parts) if any(
            m.field == expected["field"] for m in rules.extract(ConversationTurn(user_message=part)))]
        where = where or ([0] if len(parts) == 1 else [])
        if where:
            written = next((part[i:i + len(str(value))] for part in [parts[where[0]]]
                            for i in [_fold(part).find(_fold(value))] if isinstance(value, str) and i >= 0), None)
            labels[where[0]][expected["field"]] = (expected["memory_type"], written)
    return [Exemplar(text=part, field=field, memory_type=MemoryType(label[0]) if label[0] else None,
                     value=label[1], source=turn["id"])
            for i, part in enumerate(parts) for field, label in (labels[i].items() or [(NONE, (None, None))])]


def build() -> list[Exemplar]:
    rules = OfflineExtractor(pack_named("general").extraction)
    exemplars = [e for path in SOURCES for turn in load_turns(path) for e in turn_exemplars(turn, rules)]
    small_talk = [line.strip() for line in NONE_CLAUSES.read_text(encoding="utf-8").splitlines() if line.strip()]
    small_talk_exemplars = [Exemplar(text=text, field=NONE, source="small-talk") for text in small_talk]
    return exemplars + small_talk_exemplars + load_exemplars(WRITTEN)


def write(exemplars: list[Exemplar], directory: Path = PACKS_DIR) -> None:
    from agent_memory.adapters.embeddings.local import LocalE5Embedder

    rows = [{"text": e.text, "field": e.field, **({"memory_type": e.memory_type.value} if e.memory_type else {}),
             **({"value": e.value} if e.value else {}), "source": e.source} for e in exemplars]
    (directory / f"{NAME}.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                                             encoding="utf-8")
    save_vectors(directory / f"{NAME}.npz", exemplars, LocalE5Embedder())


def main() -> None:
    exemplars = build()
    write(exemplars)
    labelled = sum(e.field != NONE for e in exemplars)
    print(f"wrote {len(exemplars)} exemplars ({labelled} labelled with a field, {len(exemplars) - labelled} none) "
          f"to {PACKS_DIR / NAME}.jsonl and .npz")


if __name__ == "__main__":
    main()
