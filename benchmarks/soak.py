"""Soak: a bounded mixed load on the local stack for SOAK_MINUTES, its memory sampled as it runs (make soak).

Starts `python -m local.stack` on 127.0.0.1 with a temporary data directory (or uses a running stack: --url),
then for --minutes (SOAK_MINUTES, default 60) runs CLIENTS threads of mixed requests under a fresh tenant, each
thread the only writer of its users, so every user's last acknowledged state is known:

  saves       plain; with a conversation_id; with context (the turn before); batches of 10 (both)
  reads       search, load_context, profile summarize, inject (two turns of history and the current message)
  log         appends of a user and an assistant message; log search over the last minutes
  hot memory  PUT of one of five keys (the value counts up), GET of the whole hot memory
  memory tool create of one of five files, then str_replace of its revision line, view

With --profile lifecycle (make soak PROFILE=lifecycle) the same load also runs the data-lifecycle routes:

  export      every page of the user's export, imported into a copy of the user (each page 200, the copy's
              import counts the export's records)
  erase       DELETE of the user (verified, or continued until it is): everything acknowledged before reads
              404 or nothing afterwards, and the user starts again from a fresh seed
  purge       DELETE ?purge=true of one memory: it reads 404 from then on
  as of       a search as of an instant a little before now

The load is bounded: every user is first filled to MEMORY_CAP memories (batches of SEED_BATCH), then keeps at
most that many (past it, the oldest saved is deleted, which is one more write path), five hot-memory keys, five
memory files, conversations of at most LOG_PER_CONVERSATION messages; only the log grows with time (as it does
in service, until its TTL), and log searches name a time range so that they read the last minutes only.

Every SAMPLE_SECONDS the RSS of the stack's whole process tree (supervisor with moto's SQS, DynamoDB Local's
JVM, the API, the workers: the pids in <data-dir>/stack.json) is read from /proc, per part too, with the depth
of the queues. At the end, once the queues have drained (up to --drain-timeout), four checks:

  flat RSS      after the warm-up (the first third of the run), the least-squares slope of the whole-tree RSS
                is at most MAX_SLOPE_MIB_PER_MIN, and the last third's highest sample is within
                MAX_LAST_THIRD_GROWTH of the second third's highest
  no 5xx        no response with a status of 500 or more, and no request left unanswered
  readable      every acknowledged write reads back: each memory saved and not deleted (GET by key), each
                deleted one answers 404, each log message (log search of its conversation), each hot-memory
                key's last value, each memory file's last revision
  drained       the queues (access statistics, log embedding and extraction) are empty after the load

A table, benchmarks/results/soak.json and docs/soak.png (RSS over time, per part). Exit status: 0 when every
check passes, 3 when one fails, 1 without a stack, 2 when the stack stops answering.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.local_stack import (
    DEFAULT_DATA_DIR,
    RESULTS,
    ROOT,
    HttpFailure,
    RssProbe,
    against_stack,
    log,
    rss_by_part,
    tree_rss_kib,
)

DEFAULT_MINUTES = 60.0  # the bounded caches and memos fill for 15-20 minutes: a 30-minute run ends in its warm-up
SAMPLE_SECONDS = 10.0
CLIENTS = 3
USERS_PER_CLIENT = 3
MEMORY_CAP = 150
BATCH_SIZE = 10
SEED_BATCH = 50
HOT_KEYS = 5
MEMORY_FILES = 5
LOG_PER_CONVERSATION = 10  # a log search answers at most 20: every message of a conversation is one answer
LOG_SEARCH_WINDOW = timedelta(minutes=5)
PAUSE_S = 0.02  # between one client's requests: the machine is shared
DRAIN_TIMEOUT_S = 300.0
REQUEST_TIMEOUT_S = 120.0
# The checks (see the module docstring).
WARMUP_SHARE = 1 / 3
MAX_SLOPE_MIB_PER_MIN = 1.0
MAX_LAST_THIRD_GROWTH = 0.03
MIN_SAMPLES_PER_THIRD = 3
PLOT = ROOT / "docs" / "soak.png"
# How often each operation is drawn (relative weights).
MIX: dict[str, int] = {
    "save_plain": 8,
    "save_conversation": 5,
    "save_context": 5,
    "save_batch": 2,
    "search": 12,
    "load": 5,
    "summarize": 2,
    "inject": 6,
    "log_append": 6,
    "log_search": 3,
    "hot_put": 3,
    "hot_get": 3,
    "memory_tool": 4,
}


# The data-lifecycle routes, added to MIX by --profile lifecycle (an erasure re-seeds the user: rare).
LIFECYCLE_MIX: dict[str, int] = {"export_import": 2, "erase": 1, "purge": 2, "search_as_of": 4}
PROFILES = {"default": MIX, "lifecycle": {**MIX, **LIFECYCLE_MIX}}


# --- pure helpers ----------------------------------------------------------------------------------


def slope_per_minute(points: Sequence[tuple[float, float]]) -> float | None:
    """The least-squares slope of (seconds, MiB) points, in MiB per minute; None for fewer than two times."""
    if len({t for t, _ in points}) < 2:
        return None
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    covariance = sum((t - mean_t) * (y - mean_y) for t, y in points)
    variance = sum((t - mean_t) ** 2 for t, _ in points)
    return covariance / variance * 60.0


def flatness(points: Sequence[tuple[float, float]], duration_s: float) -> dict[str, Any]:
    """The flat-RSS check over (seconds since the load began, MiB) samples of a run of duration_s seconds:
    the slope after the warm-up, the second and last thirds' highest samples, and the verdict (None when a
    third holds fewer than MIN_SAMPLES_PER_THIRD samples: too short a run to tell)."""
    second = [p for p in points if duration_s * WARMUP_SHARE <= p[0] < duration_s * 2 / 3]
    last = [p for p in points if p[0] >= duration_s * 2 / 3]
    slope = slope_per_minute(second + last)
    out: dict[str, Any] = {
        "warmup_s": round(duration_s * WARMUP_SHARE, 1),
        "samples": len(points),
        "slope_mib_per_min": None if slope is None else round(slope, 3),
        "second_third_max_mib": max((y for _, y in second), default=None),
        "last_third_max_mib": max((y for _, y in last), default=None),
        "max_slope_mib_per_min": MAX_SLOPE_MIB_PER_MIN,
        "max_last_third_growth": MAX_LAST_THIRD_GROWTH,
    }
    if slope is None or min(len(second), len(last)) < MIN_SAMPLES_PER_THIRD:
        out.update(growth=None, flat=None)
        return out
    growth = out["last_third_max_mib"] / out["second_third_max_mib"] - 1
    out.update(growth=round(growth, 4), flat=slope <= MAX_SLOPE_MIB_PER_MIN and growth <= MAX_LAST_THIRD_GROWTH)
    return out


def text_for(texts: Sequence[str], n: int) -> str:
    """The n-th memory text: the corpus in order, then again with a round number (never identical content)."""
    base = texts[n % len(texts)]
    return base if n < len(texts) else f"{base} (round {n // len(texts) + 1})"


# --- HTTP ------------------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    body: Any
    seconds: float


class SoakClient:
    """One persistent connection; any status is an answer (the soak counts them), a dropped connection is
    reopened once, a second drop or a timeout is HttpFailure."""

    def __init__(self, url: str, tenant: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.tenant = parts.hostname or "127.0.0.1", parts.port or 80, tenant
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def call(self, method: str, path: str, body: Any = None) -> Answer:
        payload = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        headers = {"content-type": "application/json", "x-tenant-id": self.tenant}
        started = time.perf_counter()
        for attempt in (1, 2):
            try:
                if self._conn is None:
                    self._conn = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT_S)
                self._conn.request(method, path, body=payload, headers=headers)
                response = self._conn.getresponse()
                status, raw = response.status, response.read()
                break
            except (OSError, http.client.HTTPException) as error:
                self.close()
                if attempt == 2 or isinstance(error, TimeoutError):
                    raise HttpFailure(f"{method} {path}: {type(error).__name__}: {error}") from error
        text = raw.decode(errors="replace")
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return Answer(status, parsed, time.perf_counter() - started)


# --- what was acknowledged -------------------------------------------------------------------------


@dataclass
class UserState:
    """Everything the service acknowledged for one user (one client thread writes it)."""

    user_id: str
    memories: OrderedDict[str, None] = field(default_factory=OrderedDict)  # saved and not deleted, oldest first
    deleted: list[str] = field(default_factory=list)
    conversation: str = ""
    conversation_messages: int = 0
    log: dict[str, list[str]] = field(default_factory=dict)  # conversation -> message ids
    log_times: dict[str, list[str]] = field(default_factory=dict)  # conversation -> created_at of its messages
    hot: dict[str, int] = field(default_factory=dict)  # key -> last value
    files: dict[str, int] = field(default_factory=dict)  # path -> last revision
    previous_text: str = ""
    erased_log: list[str] = field(default_factory=list)  # conversations an erasure removed
    copies: int = 0  # export copies imported


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    by_op: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)  # "op status"
    server_errors: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def record(self, op: str, answer: Answer) -> None:
        with self.lock:
            self.by_op[op] += 1
            self.statuses[f"{op} {answer.status}"] += 1
            self.seconds[op] = self.seconds.get(op, 0.0) + answer.seconds
            if answer.status >= 500 and len(self.server_errors) < 50:
                self.server_errors.append({"op": op, "status": answer.status, "body": str(answer.body)[:300]})

    @property
    def requests(self) -> int:
        with self.lock:
            return sum(self.by_op.values())


# --- the load ----------------------------------------------------------------------------------------


class Loader(threading.Thread):
    """One client: draws operations from MIX for its own users until the deadline."""

    def __init__(
        self,
        index: int,
        url: str,
        tenant: str,
        texts: Sequence[str],
        queries: Sequence[str],
        tally: Tally,
        deadline: float,
        mix: dict[str, int] | None = None,
    ) -> None:
        super().__init__(name=f"soak-client-{index}", daemon=True)
        self.mix = mix or MIX
        self.client = SoakClient(url, tenant)
        self.users = [UserState(f"soak-{index}-{n}") for n in range(USERS_PER_CLIENT)]
        self.texts, self.queries, self.tally, self.deadline = texts, queries, tally, deadline
        self.random = random.Random(index)
        self.next_text = index * 997  # each client starts elsewhere in the corpus
        self.failure: str | None = None

    def run(self) -> None:
        ops, weights = list(self.mix), list(self.mix.values())
        try:
            for user in self.users:  # every user at the cap from the start: the data stops growing in the warm-up
                self.seed(user)
            while time.monotonic() < self.deadline:
                user = self.random.choice(self.users)
                op = self.random.choices(ops, weights)[0]
                getattr(self, op)(user)
                time.sleep(PAUSE_S)
        except HttpFailure as error:
            self.failure = str(error)
        finally:
            self.client.close()

    def _call(self, op: str, method: str, path: str, body: Any = None) -> Answer:
        answer = self.client.call(method, path, body)
        self.tally.record(op, answer)
        return answer

    def _text(self) -> str:
        text = text_for(self.texts, self.next_text)
        self.next_text += 1
        return text

    def _query(self) -> str:
        return self.random.choice(self.queries)[:2000]

    def _saved(self, user: UserState, keys: Sequence[str]) -> None:
        for key in keys:
            user.memories[key] = None
            user.memories.move_to_end(key)
        while len(user.memories) > MEMORY_CAP:
            oldest = next(iter(user.memories))
            answer = self._call("delete", "DELETE", f"/v1/users/{user.user_id}/memories/{oldest}")
            if answer.status != 200:
                break
            del user.memories[oldest]
            user.deleted.append(oldest)

    def _conversation(self, user: UserState) -> str:
        if not user.conversation or user.conversation_messages >= LOG_PER_CONVERSATION:
            user.conversation, user.conversation_messages = f"c-{uuid.uuid4().hex[:10]}", 0
        return user.conversation

    def _save(self, op: str, user: UserState, extra: dict[str, Any]) -> None:
        text = self._text()
        answer = self._call(
            op, "POST", f"/v1/users/{user.user_id}/memories", {"memoryType": "FACT", "content": text, **extra}
        )
        if answer.status in (200, 201):
            self._saved(user, [answer.body["memory"]["memory_key"]])
        user.previous_text = text

    def save_plain(self, user: UserState) -> None:
        self._save("save_plain", user, {})

    def save_conversation(self, user: UserState) -> None:
        self._save("save_conversation", user, {"conversationId": f"turns-{user.user_id}"})

    def save_context(self, user: UserState) -> None:
        self._save("save_context", user, {"context": user.previous_text} if user.previous_text else {})

    def seed(self, user: UserState) -> None:
        while len(user.memories) < MEMORY_CAP and time.monotonic() < self.deadline:
            size = min(SEED_BATCH, MEMORY_CAP - len(user.memories))
            answer = self._call(
                "seed",
                "POST",
                f"/v1/users/{user.user_id}/memories/batch",
                {"memories": [{"memoryType": "FACT", "content": self._text()} for _ in range(size)]},
            )
            if answer.status != 201:
                return
            self._saved(user, answer.body["memory_keys"])

    def save_batch(self, user: UserState) -> None:
        conversation = f"batch-{uuid.uuid4().hex[:8]}"
        texts = [self._text() for _ in range(BATCH_SIZE)]
        answer = self._call(
            "save_batch",
            "POST",
            f"/v1/users/{user.user_id}/memories/batch",
            {"memories": [{"memoryType": "FACT", "content": t, "conversationId": conversation} for t in texts]},
        )
        if answer.status == 201:
            self._saved(user, answer.body["memory_keys"])

    def search(self, user: UserState) -> None:
        self._call("search", "POST", f"/v1/users/{user.user_id}/memories/search", {"query": self._query(), "limit": 5})

    def load(self, user: UserState) -> None:
        self._call("load", "POST", f"/v1/users/{user.user_id}/context/load", {"query": self._query(), "limit": 20})

    def summarize(self, user: UserState) -> None:
        self._call("summarize", "POST", f"/v1/users/{user.user_id}/profile/summarize")

    def inject(self, user: UserState) -> None:
        self._call(
            "inject",
            "POST",
            "/v1/context/inject",
            {
                "user_id": user.user_id,
                "conversation_id": f"inject-{user.user_id}",
                "max_context_tokens": 32000,
                "messages": [
                    {"role": "user", "content": user.previous_text or "hello"},
                    {"role": "assistant", "content": "Noted."},
                ],
                "current_user_message": self._query(),
            },
        )

    def log_append(self, user: UserState) -> None:
        conversation = self._conversation(user)
        answer = self._call(
            "log_append",
            "POST",
            f"/v1/users/{user.user_id}/conversations/{conversation}/messages",
            {
                "messages": [
                    {"role": "user", "content": f"soak {self._text()}"},
                    {"role": "assistant", "content": "soak: noted, thank you"},
                ]
            },
        )
        if answer.status == 201:
            user.log.setdefault(conversation, []).extend(answer.body["message_ids"])
            user.log_times.setdefault(conversation, []).extend(m["created_at"] for m in answer.body["messages"])
            user.conversation_messages += len(answer.body["message_ids"])

    def log_search(self, user: UserState) -> None:
        now = datetime.now(UTC)
        self._call(
            "log_search",
            "POST",
            f"/v1/users/{user.user_id}/conversations/search",
            {
                "query": self._query(),
                "limit": 5,
                "time_range": [(now - LOG_SEARCH_WINDOW).isoformat(), now.isoformat()],
            },
        )

    def hot_put(self, user: UserState) -> None:
        key = f"k{self.random.randrange(HOT_KEYS)}"
        value = user.hot.get(key, 0) + 1
        answer = self._call(
            "hot_put", "PUT", f"/v1/users/{user.user_id}/hot-memory/status/{key}", {"value": {"count": value}}
        )
        if answer.status == 200:
            user.hot[key] = value

    def hot_get(self, user: UserState) -> None:
        self._call("hot_get", "GET", f"/v1/users/{user.user_id}/hot-memory")

    def export_import(self, user: UserState) -> None:
        """Every page of the user's export, imported into a copy of the user: the copy counts the records."""
        pages, cursor = [], ""
        while True:
            answer = self._call("export", "GET", f"/v1/users/{user.user_id}/export"
                                + (f"?cursor={cursor}" if cursor else ""))
            if answer.status != 200:
                return
            pages.append(answer.body)
            if not (cursor := answer.body.get("next_cursor")):
                break
        user.copies += 1
        copy = f"{user.user_id}-copy-{user.copies}"
        imported = 0
        for page in pages:
            answer = self._call("import", "POST", f"/v1/users/{copy}/import", page)
            if answer.status != 200:
                self.failure = self.failure or f"import of {copy}: {answer.status} {str(answer.body)[:200]}"
                return
            imported += answer.body["imported"]["memories"]
        exported = sum(len(page.get("memories", [])) for page in pages)
        if imported != exported:
            self.failure = self.failure or f"{copy}: imported {imported} memories of {exported} exported"

    def erase(self, user: UserState) -> None:
        """The user erased (continued while in progress): what was acknowledged reads as gone, then a new seed."""
        for _ in range(10):
            answer = self._call("erase", "DELETE", f"/v1/users/{user.user_id}")
            if answer.status == 200:
                break
            if answer.status != 202:
                return
        else:
            return
        if not answer.body.get("verified"):
            self.failure = self.failure or f"erasure of {user.user_id} not verified: {str(answer.body)[:300]}"
        user.deleted += list(user.memories)
        user.memories.clear()
        user.erased_log += list(user.log)
        user.log.clear()
        user.log_times.clear()
        user.conversation, user.conversation_messages = "", 0
        user.hot.clear()
        user.files.clear()
        self.seed(user)

    def purge(self, user: UserState) -> None:
        if not user.memories:
            return
        key = self.random.choice(list(user.memories))
        answer = self._call("purge", "DELETE", f"/v1/users/{user.user_id}/memories/{key}?purge=true")
        if answer.status == 200:
            del user.memories[key]
            user.deleted.append(key)

    def search_as_of(self, user: UserState) -> None:
        instant = (datetime.now(UTC) - timedelta(seconds=self.random.uniform(1, 120))).isoformat()
        self._call("search_as_of", "POST", f"/v1/users/{user.user_id}/memories/search",
                   {"query": self._query(), "as_of": instant, "limit": 5})

    def memory_tool(self, user: UserState) -> None:
        path = f"/memories/soak-{self.random.randrange(MEMORY_FILES)}.md"
        revision = user.files.get(path)
        if revision is None:
            command = {"command": "create", "path": path, "file_text": "soak file\nrev: 1\n"}
        elif self.random.random() < 0.5:
            command = {
                "command": "str_replace",
                "path": path,
                "old_str": f"rev: {revision}\n",
                "new_str": f"rev: {revision + 1}\n",
            }
        else:
            command = {"command": "view", "path": path}
        answer = self._call("memory_tool", "POST", f"/v1/users/{user.user_id}/memory-tool", command)
        if answer.status == 200 and command["command"] != "view" and not answer.body.get("is_error"):
            user.files[path] = 1 if revision is None else revision + 1


# --- sampling, draining, checking ----------------------------------------------------------------------


class Sampler(threading.Thread):
    """Every SAMPLE_SECONDS: whole-tree RSS, RSS per part, queued messages, requests so far."""

    def __init__(self, stack: dict[str, Any], queues: Any, tally: Tally, started: float) -> None:
        super().__init__(name="soak-sampler", daemon=True)
        self.stack, self.queues, self.tally, self.started = stack, queues, tally, started
        self.samples: list[dict[str, Any]] = []
        self.stopping = threading.Event()

    def sample(self) -> None:
        measured = tree_rss_kib(self.stack["pid"])
        if measured is None:
            return
        processes = self.stack.get("processes") or {}
        self.samples.append(
            {
                "t_s": round(time.monotonic() - self.started, 1),
                "rss_mib": round(measured[0] / 1024, 1),
                "processes": measured[1],
                "parts_mib": rss_by_part(processes, self.stack["pid"]),
                "queued": self.queues.count() if self.queues else None,
                "requests": self.tally.requests,
            }
        )

    def run(self) -> None:
        self.sample()
        while not self.stopping.wait(SAMPLE_SECONDS):
            self.sample()


@dataclass
class Queues:
    """The stack's queues (moto's SQS at stack.json's "queues"): how many messages they hold."""

    endpoint: str

    def __post_init__(self) -> None:
        from benchmarks.http_retrieval import queue_client, queue_urls

        self.sqs = queue_client(self.endpoint)
        self.urls = queue_urls(self.sqs)

    def count(self) -> int:
        from benchmarks.http_retrieval import queued

        return int(queued(self.sqs, self.urls))

    def drain(self, timeout_s: float) -> dict[str, Any]:
        started = time.monotonic()
        first = self.count()
        idle = 0
        while idle < 3 and time.monotonic() - started < timeout_s:
            idle = idle + 1 if self.count() == 0 else 0
            time.sleep(1.0)
        return {
            "queued_at_end_of_load": first,
            "drained": idle >= 3,
            "seconds": round(time.monotonic() - started, 1),
            "left": self.count(),
        }


def erased_log_answers(client: SoakClient, user: UserState, counts: Counter[str]) -> list[str]:
    """The conversations an erasure removed that a log search still answers for."""
    problems = []
    for conversation in user.erased_log:
        counts["erased_conversations"] += 1
        answer = client.call("POST", f"/v1/users/{user.user_id}/conversations/search",
                             {"query": "soak", "conversation_id": conversation, "limit": 20})
        if answer.status != 200 or (answer.body or {}).get("results"):
            problems.append(f"{user.user_id} erased log {conversation}: still answers ({answer.status})")
    return problems


def check_readable(client: SoakClient, users: Sequence[UserState]) -> dict[str, Any]:
    """Read back every acknowledged write; the counts checked and what did not read back."""
    problems: list[str] = []
    counts = Counter[str]()
    for user in users:
        base = f"/v1/users/{user.user_id}"
        for key in user.memories:
            counts["memories"] += 1
            if (status := client.call("GET", f"{base}/memories/{key}").status) != 200:
                problems.append(f"{user.user_id} memory {key}: {status}")
        for key in user.deleted:
            counts["deleted"] += 1
            if (status := client.call("GET", f"{base}/memories/{key}").status) != 404:
                problems.append(f"{user.user_id} deleted memory {key}: {status}, not 404")
        for conversation, ids in user.log.items():
            counts["log_messages"] += len(ids)
            times = sorted(user.log_times[conversation])
            answer = client.call(
                "POST",
                f"{base}/conversations/search",
                {"query": "soak", "conversation_id": conversation, "limit": 20, "time_range": [times[0], times[-1]]},
            )
            hits = (answer.body or {}).get("results", []) if answer.status == 200 else []
            found = {hit["message_id"] for hit in hits}
            if missing := [i for i in ids if i not in found]:
                problems.append(
                    f"{user.user_id} log {conversation}: {len(missing)} of {len(ids)} not found "
                    f"(status {answer.status})"
                )
        problems += erased_log_answers(client, user, counts)
        answer = client.call("GET", f"{base}/hot-memory")
        stored = {e["key"]: e["value"] for e in (answer.body or {}).get("entries", [])} if answer.status == 200 else {}
        for key, value in user.hot.items():
            counts["hot_memory"] += 1
            if stored.get(key) != {"count": value}:
                problems.append(f"{user.user_id} hot memory {key}: {stored.get(key)!r}, not count {value}")
        for path, revision in user.files.items():
            counts["memory_files"] += 1
            answer = client.call("POST", f"{base}/memory-tool", {"command": "view", "path": path})
            if answer.status != 200 or f"rev: {revision}" not in str(answer.body):
                problems.append(f"{user.user_id} file {path}: revision {revision} not read back ({answer.status})")
    return {"checked": dict(counts), "problems": problems[:50], "unreadable": len(problems), "readable": not problems}


# --- the run -------------------------------------------------------------------------------------------


def run(url: str, data_dir: Path, minutes: float, clients: int, profile: str = "default") -> dict[str, Any]:
    from benchmarks.common import corpus

    stack = RssProbe(data_dir=data_dir, url=url).read_stack_json()
    if stack is None:
        raise HttpFailure(f"no readable {data_dir / 'stack.json'}: the soak samples the stack it names")
    queues = Queues(stack["queues"]) if stack.get("queues") else None
    texts, queries, _ = corpus()
    tenant = f"soak-{uuid.uuid4().hex[:8]}"
    tally = Tally()
    started = time.monotonic()
    duration_s = minutes * 60
    mix = PROFILES[profile]
    loaders = [Loader(i, url, tenant, texts, queries, tally, started + duration_s, mix) for i in range(clients)]
    sampler = Sampler(stack, queues, tally, started)
    log(
        f"soak ({profile}): tenant {tenant} on {url}, {clients} clients x {USERS_PER_CLIENT} users, {minutes:g} min, "
        f"RSS every {SAMPLE_SECONDS:g} s; load average {os.getloadavg()[0]:.2f}"
    )
    sampler.start()
    for loader in loaders:
        loader.start()
    reported_minute = -1
    while any(loader.is_alive() for loader in loaders):
        time.sleep(5)
        if sampler.samples and int(sampler.samples[-1]["t_s"] // 60) > reported_minute:
            last = sampler.samples[-1]
            reported_minute = int(last["t_s"] // 60)
            log(
                f"  {last['t_s'] / 60:.1f} min: RSS {last['rss_mib']:.0f} MiB, {last['requests']} requests, "
                f"{last['queued']} queued, load average {os.getloadavg()[0]:.2f}"
            )
    load_s = time.monotonic() - started
    failures = [loader.failure for loader in loaders if loader.failure]
    drain = queues.drain(DRAIN_TIMEOUT_S) if queues else {"drained": None, "note": "no queues endpoint"}
    sampler.sample()  # after the drain
    sampler.stopping.set()
    sampler.join()
    client = SoakClient(url, tenant)
    try:
        readable = check_readable(client, [u for loader in loaders for u in loader.users])
    finally:
        client.close()
    in_load = [(s["t_s"], s["rss_mib"]) for s in sampler.samples if s["t_s"] <= load_s]
    flat = flatness(in_load, load_s)
    server_errors = sum(n for key, n in tally.statuses.items() if int(key.rsplit(" ", 1)[1]) >= 500)
    checks = {
        "flat_rss": flat["flat"],
        "no_5xx": server_errors == 0 and not failures,
        "readable": readable["readable"],
        "drained": drain.get("drained"),
    }
    parts = sorted({p for s in sampler.samples for p in s["parts_mib"]})
    per_part = {
        p: flatness(
            [(s["t_s"], s["parts_mib"][p]) for s in sampler.samples if s["t_s"] <= load_s and p in s["parts_mib"]],
            load_s,
        )
        for p in parts
    }
    return {
        "url": url,
        "tenant": tenant,
        "minutes": minutes,
        "clients": clients,
        "users": clients * USERS_PER_CLIENT,
        "load_s": round(load_s, 1),
        "requests": tally.requests,
        "requests_per_s": round(tally.requests / load_s, 2),
        "by_op": dict(tally.by_op),
        "statuses": dict(sorted(tally.statuses.items())),
        "mean_ms": {op: round(tally.seconds[op] / n * 1000, 1) for op, n in tally.by_op.items()},
        "server_errors": server_errors,
        "server_error_samples": tally.server_errors,
        "client_failures": failures,
        "rss": flat,
        "rss_by_part": per_part,
        "drain": drain,
        "readable": readable,
        "checks": checks,
        "samples": sampler.samples,
        "stack": stack,
        "profile": profile,
        "settings": {"sample_s": SAMPLE_SECONDS, "memory_cap": MEMORY_CAP, "mix": mix, "pause_s": PAUSE_S},
    }


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = result["samples"]
    minutes = [s["t_s"] / 60 for s in samples]
    figure, axis = plt.subplots(figsize=(9, 5))
    axis.plot(minutes, [s["rss_mib"] for s in samples], label="whole tree", linewidth=2, color="black")
    for part in sorted({p for s in samples for p in s["parts_mib"]}):
        axis.plot(minutes, [s["parts_mib"].get(part) for s in samples], label=part)
    load_min = result["load_s"] / 60
    axis.axvline(load_min * WARMUP_SHARE, color="grey", linestyle="--", linewidth=1)
    axis.axvline(load_min, color="grey", linestyle=":", linewidth=1)
    axis.text(load_min * WARMUP_SHARE, axis.get_ylim()[1] * 0.97, " warm-up ends", color="grey", va="top")
    axis.set_xlabel("minutes since the load began (dotted: load ends, queues drain)")
    axis.set_ylabel("RSS, MiB")
    rss = result["rss"]
    axis.set_title(
        f"make soak: {result['requests']:,} requests in {load_min:.0f} min, "
        f"slope after warm-up {rss['slope_mib_per_min']} MiB/min"
    )
    axis.legend(loc="center right", fontsize=8)
    axis.grid(alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def mark(ok: bool | None) -> str:
    return "-" if ok is None else ("✓" if ok else "✗")


def summary(result: dict[str, Any]) -> str:
    rss, drain, readable = result["rss"], result["drain"], result["readable"]
    growth = "-" if rss["growth"] is None else f"{rss['growth']:+.1%}"
    lines = [
        "| check | measured | goal | meets |",
        "|---|---|---|:---:|",
        f"| RSS slope after warm-up | {rss['slope_mib_per_min']} MiB/min | ≤ {MAX_SLOPE_MIB_PER_MIN:g} | "
        f"{mark(result['checks']['flat_rss'])} |",
        f"| last third max / second third max | {rss['last_third_max_mib']} / {rss['second_third_max_mib']} MiB"
        f" ({growth})"
        f" | ≤ +{MAX_LAST_THIRD_GROWTH:.0%} | {mark(result['checks']['flat_rss'])} |",
        f"| 5xx / unanswered | {result['server_errors']} / {len(result['client_failures'])} | 0 | "
        f"{mark(result['checks']['no_5xx'])} |",
        f"| acknowledged writes read back | {sum(readable['checked'].values()) - readable['unreadable']} of "
        f"{sum(readable['checked'].values())} | all | {mark(result['checks']['readable'])} |",
        f"| queues drained after the load | {drain.get('queued_at_end_of_load')} queued, "
        f"{drain.get('seconds')} s | empty | {mark(result['checks']['drained'])} |",
    ]
    parts = ["", "| part | slope after warm-up, MiB/min | second third max | last third max |", "|---|---:|---:|---:|"]
    parts += [
        f"| {name} | {p['slope_mib_per_min']} | {p['second_third_max_mib']} | {p['last_third_max_mib']} |"
        for name, p in result["rss_by_part"].items()
    ]
    return "\n".join(lines + parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES") or DEFAULT_MINUTES))
    parser.add_argument("--clients", type=int, default=CLIENTS, help="concurrent client threads")
    parser.add_argument("--url", default=None, help="a running stack (its data dir: --data-dir) instead of a new one")
    parser.add_argument("--data-dir", type=Path, default=None, help=f"with --url (default {DEFAULT_DATA_DIR})")
    parser.add_argument("--output", type=Path, default=RESULTS / "soak.json")
    parser.add_argument("--plot", type=Path, default=PLOT)
    parser.add_argument("--profile", choices=sorted(PROFILES), default=os.environ.get("SOAK_PROFILE") or "default",
                        help="lifecycle: the load with exports, imports, erasures, purges and as-of reads")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.clients < 1:
        parser.error("--minutes must be > 0 and --clients >= 1")
    from benchmarks.retrieval import machine_info

    temporary = args.url is None
    data_dir = (Path(tempfile.mkdtemp(prefix="soak-")) if temporary else (args.data_dir or DEFAULT_DATA_DIR)).resolve()
    load_before = os.getloadavg()
    outcome = against_stack(
        args.url,
        data_dir,
        temporary,
        lambda url: run(url, data_dir, args.minutes, args.clients, args.profile),
        "leave out --url to start one",
    )
    if isinstance(outcome, int):
        return outcome
    result = {
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        **outcome,
    }
    print(summary(result))
    print(
        f"\n{result['requests']:,} requests ({result['requests_per_s']}/s) in {result['load_s'] / 60:.1f} min; "
        f"load average before {result['load_average_before']}, after {result['load_average_after']}"
    )
    for problem in result["readable"]["problems"][:10]:
        print(f"  not read back: {problem}")
    for error in result["server_error_samples"][:5]:
        print(f"  5xx: {error}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    plot(result, args.plot)
    print(f"wrote {args.output} and {args.plot}")
    return 0 if all(ok is not False for ok in result["checks"].values()) else 3


if __name__ == "__main__":
    sys.exit(main())
