"""Loaders for the retrieval benchmarks' data: LoCoMo and MADial zh (../shared/bench, see its README), and the
short extracted facts written for this repo (benchmarks/data/short_facts).

LoCoMo and MADial are read in place, never copied into the repo (licences). Each loader turns a dataset into
users, each with the memories to import and the queries to run against them; a memory and a
query's relevant set are named by the dataset's own ids (LoCoMo dia_ids, MADial memory ids), so the
scoring never depends on how the store names what it saved. Nothing here needs the network or
imports the service code.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# ../shared/bench beside the repo; BENCH_DATA_DIR overrides it.
DEFAULT_DATA_DIR = ROOT.parent / "shared" / "bench"

LOCOMO_FILE = Path("locomo") / "locomo_dev.json"
MADIAL_MEMORY_FILE = Path("madial_zh") / "memory.jsonl"
MADIAL_DIALOGUE_FILE = Path("madial_zh") / "dialogue_dev.jsonl"

# Category 5 (adversarial, unanswerable) has no evidence to retrieve and is left out, as usual.
LOCOMO_CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

_MONTHS = {name: i for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], start=1)}
_LOCOMO_DATE = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$",
                          re.IGNORECASE)
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_WELL_FORMED_EVIDENCE = re.compile(r"^D[1-9]\d*:[1-9]\d*$")
_DIALOGUE_TURN = re.compile(r'^\s*<([^<>]+)>\s*:\s*(.*?)\s*$', re.DOTALL)
_DIALOGUE_MARKERS = ("<BOD>", "<EOD>")


def data_dir() -> Path:
    return Path(os.environ.get("BENCH_DATA_DIR") or DEFAULT_DATA_DIR)


@dataclass(frozen=True)
class BenchMemory:
    source_id: str  # the dataset's id: a LoCoMo dia_id, a MADial memory id
    content: str
    created_at: datetime
    conversation_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    memory_type: str = "FACT"


@dataclass(frozen=True)
class BenchQuery:
    query_id: str
    text: str
    relevant: frozenset[str]  # source ids of the memories that answer it
    category: str | None = None


@dataclass
class BenchUser:
    user_id: str
    memories: list[BenchMemory] = field(default_factory=list)
    queries: list[BenchQuery] = field(default_factory=list)
    # Questions in the same register that none of the memories answers, and queries about no person at all:
    # a search for them should come back empty (category "never_mentioned" / "out_of_domain").
    unanswerable: list[BenchQuery] = field(default_factory=list)
    group: str | None = None  # what figures are reported by beside the whole set (short facts: "pack/language")


@dataclass
class BenchDataset:
    name: str
    language: str
    users: list[BenchUser]
    # What the loader left out and why (malformed evidence, questions with nothing to retrieve, ...).
    notes: dict[str, int] = field(default_factory=dict)

    @property
    def memory_count(self) -> int:
        return sum(len(u.memories) for u in self.users)

    @property
    def query_count(self) -> int:
        return sum(len(u.queries) for u in self.users)

    def sizes(self) -> dict[str, Any]:
        return {"users": len(self.users), "memories": self.memory_count, "queries": self.query_count,
                **self.notes}


# --- LoCoMo -------------------------------------------------------------------------------------


def parse_locomo_datetime(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" -> 2023-05-08 13:56 UTC (no locale involved)."""
    found = _LOCOMO_DATE.match(text)
    if not found:
        raise ValueError(f"not a LoCoMo session date: {text!r}")
    hour, minute, half, day, month, year = found.groups()
    month_number = _MONTHS.get(month.lower()) or next(
        (n for name, n in _MONTHS.items() if len(month) >= 3 and name.startswith(month.lower())), None)
    if month_number is None:
        raise ValueError(f"unknown month in LoCoMo date: {text!r}")
    hour_24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return datetime(int(year), month_number, int(day), hour_24, int(minute), tzinfo=UTC)


def normalize_evidence(raw: list[str] | str | None) -> list[str]:
    """Evidence dia_ids, malformed ones repaired: "D8:6; D9:17" -> two ids, "D:11:26" -> "D11:26",
    "D30:05" -> "D30:5"; strings with no id in them ("D") give nothing. Order kept, duplicates dropped."""
    items = [raw] if isinstance(raw, str) else list(raw or [])
    found: list[str] = []
    for item in items:
        for session, turn in _EVIDENCE.findall(str(item)):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id not in found:
                found.append(dia_id)
    return found


def locomo_memory_content(turn: dict[str, Any]) -> str:
    content = f"{turn['speaker']}: {turn['text']}"
    caption = (turn.get("blip_caption") or "").strip()
    return f"{content} [image: {caption}]" if caption else content


def load_locomo(root: Path | None = None, *, limit_conversations: int | None = None) -> BenchDataset:
    """Each conversation is a user; each turn a memory; each question of categories 1-4 a query."""
    samples = json.loads((Path(root or data_dir()) / LOCOMO_FILE).read_text(encoding="utf-8"))
    if limit_conversations is not None:
        samples = samples[:limit_conversations]
    notes = {"questions_adversarial_excluded": 0, "questions_without_evidence": 0, "evidence_strings_malformed": 0,
             "evidence_ids_unknown": 0}
    users = []
    for sample in samples:
        sample_id = str(sample["sample_id"])
        conversation = sample["conversation"]
        user = BenchUser(user_id=sample_id)
        sessions = sorted((int(m.group(1)), key) for key in conversation if (m := _SESSION_KEY.match(key)))
        for number, key in sessions:
            turns = conversation[key]
            if not isinstance(turns, list) or not turns:
                continue
            created_at = parse_locomo_datetime(conversation[f"{key}_date_time"])
            for turn in turns:
                user.memories.append(BenchMemory(
                    source_id=turn["dia_id"], content=locomo_memory_content(turn), created_at=created_at,
                    conversation_id=f"{sample_id}-s{number}", metadata={"dia_id": turn["dia_id"], "session": number}))
        known = {m.source_id for m in user.memories}
        for index, qa in enumerate(sample.get("qa", [])):
            category = int(qa.get("category", 0))
            if category not in LOCOMO_CATEGORIES:
                notes["questions_adversarial_excluded"] += 1
                continue
            raw = [str(e) for e in qa.get("evidence") or []]
            evidence = normalize_evidence(raw)
            notes["evidence_strings_malformed"] += sum(1 for e in raw if not _WELL_FORMED_EVIDENCE.match(e))
            relevant = [e for e in evidence if e in known]
            notes["evidence_ids_unknown"] += len(evidence) - len(relevant)
            if not relevant:
                notes["questions_without_evidence"] += 1
                continue
            user.queries.append(BenchQuery(query_id=f"{sample_id}#q{index}", text=str(qa["question"]),
                                           relevant=frozenset(relevant), category=LOCOMO_CATEGORIES[category]))
        users.append(user)
    return BenchDataset(name="locomo", language="en", users=users, notes=notes)


# --- MADial-Bench (zh) --------------------------------------------------------------------------


def parse_madial_date(text: str) -> datetime:
    """"2023-12-25" (or an ISO date-time) -> UTC."""
    parsed = datetime.fromisoformat(str(text).strip())
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def dialogue_turn_text(turn: str) -> tuple[str, str] | None:
    """'<Bart>:"今天..."' -> ("Bart", "今天..."); the <BOD>/<EOD> markers -> None."""
    stripped = turn.strip()
    if not stripped or stripped in _DIALOGUE_MARKERS:
        return None
    found = _DIALOGUE_TURN.match(stripped)
    if not found:
        return ("", stripped)
    text = found.group(2).strip()
    for left, right in (('"', '"'), ("“", "”"), ("「", "」")):
        if len(text) >= 2 and text.startswith(left) and text.endswith(right):
            text = text[1:-1].strip()
            break
    return (found.group(1).strip(), text)


def madial_query(dialogue: list[str], test_turns: list[int]) -> str:
    """The dialogue's text before its first test turn (indices count the <BOD> marker), one turn a line."""
    first = min(int(t) for t in test_turns)
    texts = [parsed[1] for turn in dialogue[:first] if (parsed := dialogue_turn_text(turn)) and parsed[1]]
    return "\n".join(texts)


def _read_jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_madial(root: Path | None = None, *, limit_users: int | None = None) -> BenchDataset:
    """Each MADial user is a user; their remembered events the memories; each dialogue a query."""
    base = Path(root or data_dir())
    records = [value for line in _read_jsonl(base / MADIAL_MEMORY_FILE) for value in line.values()]
    by_user: dict[str, BenchUser] = {}
    owner: dict[str, str] = {}
    for record in sorted(records, key=lambda r: (str(r["user-id"]), int(r["id"]) if str(r["id"]).isdigit() else 0)):
        user_id, memory_id = str(record["user-id"]), str(record["id"])
        user = by_user.setdefault(user_id, BenchUser(user_id=user_id))
        owner[memory_id] = user_id
        user.memories.append(BenchMemory(
            source_id=memory_id, content=str(record["event"]).strip(), created_at=parse_madial_date(record["time"]),
            metadata={"memory_id": memory_id, "scene": record.get("scene"), "emotion": record.get("emotion")}))
    notes = {"relevant_ids_unknown": 0, "dialogues_without_relevant": 0}
    for dialogue in _read_jsonl(base / MADIAL_DIALOGUE_FILE):
        user_id = str(dialogue["user-id"])
        relevant = [str(r) for r in dialogue.get("relevant-id") or []]
        known = [r for r in relevant if owner.get(r) == user_id]
        notes["relevant_ids_unknown"] += len(relevant) - len(known)
        if not known or user_id not in by_user:
            notes["dialogues_without_relevant"] += 1
            continue
        by_user[user_id].queries.append(BenchQuery(
            query_id=f"dialogue-{dialogue['id']}", text=madial_query(dialogue["dialogue"], dialogue["test-turn"]),
            relevant=frozenset(known)))
    users = sorted(by_user.values(), key=lambda u: (len(u.user_id), u.user_id))
    if limit_users is not None:
        users = users[:limit_users]
    return BenchDataset(name="madial_zh", language="zh", users=users, notes=notes)


# --- short extracted facts ------------------------------------------------------------------------

SHORT_FACTS_DIR = ROOT / "benchmarks" / "data" / "short_facts"
_SHORT_FACTS_SAVED_AT = datetime(2026, 6, 1, tzinfo=UTC)


def load_short_facts(root: Path | None = None, *, split: str = "dev", limit_users: int | None = None
                     ) -> BenchDataset:
    """Users made of short extracted facts, preferences and intents (benchmarks/data/short_facts/SPLIT.json), each
    question asked in English and in Chinese: category `same_language` or `cross_language` for the user's
    memories. Memories are saved a minute apart, in order."""
    from datetime import timedelta

    path = (root or SHORT_FACTS_DIR) / f"{split}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    out_of_domain = [str(q) for q in raw.get("out_of_domain", [])]
    users = []
    for entry in raw["users"][:limit_users]:
        language = entry["language"]
        user = BenchUser(user_id=entry["user_id"], group=f"{entry['pack']}/{language}")
        for i, memory in enumerate(entry["memories"]):
            user.memories.append(BenchMemory(
                source_id=memory["id"], content=memory["content"], memory_type=memory.get("memory_type", "FACT"),
                created_at=_SHORT_FACTS_SAVED_AT + timedelta(minutes=i)))
        known = {m.source_id for m in user.memories}
        for question in entry["questions"]:
            answers = frozenset(question["answers"])
            if not answers or not answers <= known:
                raise ValueError(f"{path.name}: {entry['user_id']}/{question['id']} names unknown answers")
            for asked in ("en", "zh"):
                direction = "same_language" if asked == language else "cross_language"
                user.queries.append(BenchQuery(f"{question['id']}:{asked}", question[asked], answers, direction))
        for i, question in enumerate(entry.get("never_mentioned", [])):
            user.unanswerable += [BenchQuery(f"n{i + 1}:{asked}", question[asked], frozenset(), "never_mentioned")
                                  for asked in ("en", "zh")]
        user.unanswerable += [BenchQuery(f"o{i + 1}", text, frozenset(), "out_of_domain")
                              for i, text in enumerate(out_of_domain)]
        users.append(user)
    return BenchDataset(name="short_facts", language="en+zh", users=users)


LOADERS = {"locomo": load_locomo, "madial_zh": load_madial}


def load(name: str, root: Path | None = None, *, limit_conversations: int | None = None) -> BenchDataset:
    """A dataset by name. The limit is conversations for LoCoMo and users for MADial (2 in all)."""
    if name == "locomo":
        return load_locomo(root, limit_conversations=limit_conversations)
    if name == "madial_zh":
        return load_madial(root, limit_users=limit_conversations)
    raise KeyError(f"unknown dataset {name!r}; known: {', '.join(LOADERS)}")
