"""The whole local stack over HTTP: import speed as the table grows, memory footprint, warm search (make bench-local).

Runs against a stack that is already serving (`make run`, --url) or starts its own (--start: `python -m
local.stack` on a free port with a temporary data directory, stopped again at the end). Only HTTP is used,
so the figures include everything a client sees: the server, the functions, the store.

Workload, identical on every run, under a fresh tenant (X-Tenant-Id `bench-<8 hex>`) so data kept from
earlier runs never meets this one:

  warm-up     5 memories and one search for a throwaway user, untimed (model loads, first connections)
  import      1,000 memories for user-1 in 10 batches of 100 (POST /v1/users/{id}/memories/batch),
              then 300 each for user-2..user-4 in batches of 100; every batch is timed
  search      30 warm-up then 100 timed searches (POST /v1/users/user-1/memories/search) over user-1's
              1,000 memories, with LoCoMo's questions

Memory texts are LoCoMo's turns (../shared/bench), else synthetic text; every one is distinct, since the
service stores identical content once. RSS is summed over the stack's supervisor (its pid is in
<data-dir>/stack.json) and all of its descendants, DynamoDB Local's JVM included, read from /proc after
every batch; the maximum is reported.

Targets: batch 10 of user-1 takes at most 1.5x batch 1 (the store does not slow down as it fills), the
whole stack stays within 1.5 GiB, warm search p95 is at most 100 ms, import runs at 20 memories/s or
more. A missed target is a finding, not a failure: the exit status is 0 unless the stack is missing (1)
or an HTTP call fails (2).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.common import latency_row, progress, verdict

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DEFAULT_DATA_DIR = Path(os.environ.get("LOCAL_DATA_DIR") or ROOT / ".data")
BATCH_SIZE = 100
FIRST_USER_MEMORIES = 1000
OTHER_USERS = 3
OTHER_USER_MEMORIES = 300
SEARCH_WARMUP = 30  # a fresh JVM compiles its read paths and the index is built: not yet the warm path
REQUEST_TIMEOUT_S = 300.0
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0
MIB = 1024 * 1024
TARGETS: dict[str, dict[str, float]] = {
    "batch_growth": {"max": 1.5},
    "rss_max_mib": {"max": 1536.0},
    "search_p95_ms": {"max": 100.0},
    "import_per_s": {"min": 20.0},
}
TARGET_LABELS = {
    "batch_growth": ("user-1 batch 10 / batch 1", "≤ 1.5×"),
    "rss_max_mib": ("whole-stack RSS max, MiB", "≤ 1536"),
    "search_p95_ms": ("warm search p95, ms", "≤ 100"),
    "import_per_s": ("import, memories/s", "≥ 20"),
}


class HttpFailure(Exception):
    """A request that failed or answered with a non-2xx status."""


class NoStack(Exception):
    """Nothing serves HTTP at the target, or the started stack never came up."""


# --- pure helpers ----------------------------------------------------------------------------------


def process_tree(root_pid: int, proc: Path = Path("/proc")) -> list[int]:
    """root_pid and all of its descendants, from the ppid field of every <proc>/<pid>/stat."""
    children: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # exited meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
        fields = stat.rpartition(")")[2].split()
        if len(fields) < 2 or not fields[1].lstrip("-").isdigit():
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, pending = [], [root_pid]
    while pending:
        pid = pending.pop()
        if pid in tree:
            continue
        tree.append(pid)
        pending.extend(children.get(pid, []))
    return tree


def vm_rss_kib(pid: int, proc: Path = Path("/proc")) -> int | None:
    """VmRSS of one process in KiB; None when it has exited (or is a kernel thread, which has none)."""
    try:
        status = (proc / str(pid) / "status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def tree_rss_kib(root_pid: int, proc: Path = Path("/proc")) -> tuple[int, int] | None:
    """Summed VmRSS (KiB) over root_pid and its descendants, and how many processes counted; None if
    root_pid is not running."""
    if not (proc / str(root_pid)).is_dir():
        return None
    total, counted = 0, 0
    for pid in process_tree(root_pid, proc):
        rss = vm_rss_kib(pid, proc)
        if rss is not None:
            total += rss
            counted += 1
    return total, counted


def rss_by_part(processes: dict[str, Any], root_pid: int, proc: Path = Path("/proc")) -> dict[str, float]:
    """MiB per named part of stack.json's "processes": each part with its descendants, the supervisor alone."""
    parts: dict[str, float] = {}
    for name, pid in processes.items():
        if not isinstance(pid, int):
            continue
        if pid == root_pid:
            kib = vm_rss_kib(pid, proc)
        else:
            measured = tree_rss_kib(pid, proc)
            kib = measured[0] if measured else None
        if kib is not None:
            parts[name] = round(kib / 1024, 1)
    return parts


def distinct_texts(texts: Sequence[str], n: int) -> list[str]:
    """n texts in corpus order that the service will not take for duplicates (it compares content with case,
    width, spacing and punctuation folded); when the corpus has too few, it repeats with a round marker."""
    from agent_memory.domain.models import normalize_content

    unique = list(dict.fromkeys(t.strip() for t in texts if t.strip()))
    if not unique:
        raise ValueError("empty corpus")
    out: list[str] = []
    seen: set[str] = set()
    round_ = 1
    while len(out) < n:
        for text in unique:
            candidate = text if round_ == 1 else f"{text} (round {round_})"
            key = normalize_content(candidate)
            if key not in seen:
                seen.add(key)
                out.append(candidate)
                if len(out) == n:
                    break
        round_ += 1
    return out


def same_endpoint(a: str, b: str) -> bool:
    """Whether two base URLs name the same loopback-or-host port (localhost and 127.0.0.1 are one)."""
    loopback = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "::"}

    def key(url: str) -> tuple[str, int | None]:
        parts = urlsplit(url)
        host = parts.hostname or ""
        return ("loopback" if host in loopback else host, parts.port or (443 if parts.scheme == "https" else 80))

    return key(a) == key(b)


def measured_values(batches: Sequence[dict[str, Any]], rss_max_mib: float | None, search_p95_ms: float | None,
                    first_user: str) -> dict[str, float | None]:
    """The four figures the targets judge, from the batch rows and the other measurements."""
    first = [b for b in batches if b["user"] == first_user]
    growth = None
    if len(first) >= 10 and first[0]["seconds"] > 0:
        growth = round(first[9]["seconds"] / first[0]["seconds"], 3)
    seconds = sum(b["seconds"] for b in batches)
    memories = sum(b["size"] for b in batches)
    return {"batch_growth": growth, "rss_max_mib": rss_max_mib, "search_p95_ms": search_p95_ms,
            "import_per_s": round(memories / seconds, 2) if seconds > 0 else None}


def verdicts(values: dict[str, float | None]) -> dict[str, bool | None]:
    """True/False per target; None when the value could not be measured."""
    out: dict[str, bool | None] = {}
    for name, target in TARGETS.items():
        result = verdict(values.get(name), target)
        out[name] = None if result == "-" else result == "yes"
    return out


def mark(ok: bool | None) -> str:
    return "-" if ok is None else ("✓" if ok else "✗")


def batch_table(batches: Sequence[dict[str, Any]]) -> str:
    lines = ["| user | batch | memories | seconds | RSS MiB |", "|---|---:|---:|---:|---:|"]
    for b in batches:
        rss = "-" if b["rss_mib"] is None else f"{b['rss_mib']:.0f}"
        lines.append(f"| {b['user']} | {b['batch']} | {b['memories']} | {b['seconds']:.2f} | {rss} |")
    return "\n".join(lines)


def summary_table(values: dict[str, float | None], results: dict[str, bool | None]) -> str:
    lines = ["| target | measured | goal | meets |", "|---|---:|---:|:---:|"]
    for name, (label, goal) in TARGET_LABELS.items():
        value = values.get(name)
        lines.append(f"| {label} | {'-' if value is None else f'{value:g}'} | {goal} | {mark(results.get(name))} |")
    return "\n".join(lines)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- the stack -------------------------------------------------------------------------------------


def healthy(url: str, timeout: float = 30.0) -> bool:
    """Whether a stack at url answers GET /health with 200 (its table, queues and workers answer)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=timeout)
    try:
        conn.request("GET", "/health")
        response = conn.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def started_stack(data_dir: Path) -> Iterator[str]:
    """`python -m local.stack` on a free port with data_dir; yields its URL once it is healthy, then stops it."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "bench-stack.log"
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'shared'}{os.pathsep}{ROOT}"}
    with log_path.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "local.stack", "--port", str(port), "--data-dir", str(data_dir)],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        log(f"starting the stack on {url} (pid {process.pid}, log {log_path})")
        deadline = time.monotonic() + START_TIMEOUT_S
        while not healthy(url):
            if process.poll() is not None:
                raise NoStack(f"the stack exited with status {process.returncode} before answering:\n"
                              f"{tail(log_path)}")
            if time.monotonic() > deadline:
                raise NoStack(f"the stack did not answer on {url} within {START_TIMEOUT_S:.0f} s:\n{tail(log_path)}")
            time.sleep(0.5)
        state = data_dir / "stack.json"  # written just after the API is healthy
        deadline = time.monotonic() + 10
        while not state.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        yield url
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the supervisor; if it is still there after STOP_TIMEOUT_S, SIGKILL to its session."""
    if process.poll() is not None:
        return
    log(f"stopping the stack (pid {process.pid})")
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        log(f"the stack did not stop within {STOP_TIMEOUT_S:.0f} s: killing its process group")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class RssProbe:
    """Samples the stack's whole-tree RSS, located through <data-dir>/stack.json."""

    data_dir: Path
    url: str
    proc: Path = Path("/proc")
    samples_mib: list[float] = field(default_factory=list)
    parts_at_max: dict[str, float] = field(default_factory=dict)
    processes: int = 0
    note: str | None = None
    stack: dict[str, Any] | None = None

    def read_stack_json(self) -> dict[str, Any] | None:
        path = self.data_dir / "stack.json"
        try:
            info = json.loads(path.read_text())
        except FileNotFoundError:
            self.note = f"{path} not found: RSS not measured"
            return None
        except (OSError, ValueError) as error:
            self.note = f"{path} unreadable ({error}): RSS not measured"
            return None
        if not isinstance(info, dict) or not isinstance(info.get("pid"), int):
            self.note = f"{path} has no integer pid: RSS not measured"
            return None
        if isinstance(info.get("url"), str) and not same_endpoint(info["url"], self.url):
            self.note = f"{path} describes the stack at {info['url']}, not {self.url}: RSS not measured"
            return None
        return info

    def sample(self) -> float | None:
        info = self.read_stack_json()
        if info is None:
            return None
        self.stack = info
        measured = tree_rss_kib(info["pid"], self.proc)
        if measured is None:
            self.note = f"pid {info['pid']} from stack.json is not running: RSS not measured"
            return None
        kib, counted = measured
        self.note = None
        self.processes = max(self.processes, counted)
        mib = round(kib / 1024, 1)
        if not self.samples_mib or mib > max(self.samples_mib):
            processes = info.get("processes")
            self.parts_at_max = rss_by_part(processes, info["pid"], self.proc) if isinstance(processes, dict) else {}
        self.samples_mib.append(mib)
        return mib

    @property
    def max_mib(self) -> float | None:
        return max(self.samples_mib) if self.samples_mib else None


# --- HTTP ------------------------------------------------------------------------------------------


class Client:
    """One persistent HTTP/1.1 connection to the stack, reopened (and the request retried once) when it drops."""

    def __init__(self, url: str, tenant: str, timeout: float = REQUEST_TIMEOUT_S) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.tenant, self.timeout = tenant, timeout
        self.reconnects = 0
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def post(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """The JSON answer and the wall time in seconds; HttpFailure unless the status is 2xx."""
        payload = json.dumps(body, ensure_ascii=False).encode()
        headers = {"content-type": "application/json", "x-tenant-id": self.tenant}
        started = time.perf_counter()
        for attempt in (1, 2):
            try:
                conn = self._connection()
                conn.request("POST", path, body=payload, headers=headers)
                response = conn.getresponse()
                status, raw = response.status, response.read()
                break
            except TimeoutError as error:
                self.close()
                raise HttpFailure(f"POST {path}: no answer within {self.timeout:.0f} s") from error
            except (OSError, http.client.HTTPException) as error:
                self.close()
                if attempt == 2:
                    raise HttpFailure(f"POST {path}: {type(error).__name__}: {error}") from error
                self.reconnects += 1
        elapsed = time.perf_counter() - started
        text = raw.decode(errors="replace")
        if not 200 <= status < 300:
            raise HttpFailure(f"POST {path}: HTTP {status}\n{text}")
        try:
            answer = json.loads(text) if text else {}
        except ValueError as error:
            raise HttpFailure(f"POST {path}: HTTP {status} but not JSON:\n{text}") from error
        return answer, elapsed


# --- workload --------------------------------------------------------------------------------------


def import_user(client: Client, probe: RssProbe, user: str, texts: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for start in progress(range(0, len(texts), BATCH_SIZE), desc=f"import {user}", unit="batch"):
        chunk = texts[start:start + BATCH_SIZE]
        answer, seconds = client.post(f"/v1/users/{user}/memories/batch",
                                      {"memories": [{"memoryType": "FACT", "content": t} for t in chunk]})
        saved = answer.get("saved_count")
        if saved != len(chunk):
            log(f"  note: {user} batch {start // BATCH_SIZE + 1} saved {saved} of {len(chunk)}")
        row = {"user": user, "batch": start // BATCH_SIZE + 1, "size": len(chunk), "memories": start + len(chunk),
               "seconds": round(seconds, 3), "saved": saved, "rss_mib": probe.sample()}
        log(f"  {user} batch {row['batch']}: {row['memories']} memories, {seconds:.2f} s, RSS {row['rss_mib']} MiB")
        rows.append(row)
    return rows


def search_latency(client: Client, user: str, queries: Sequence[str], runs: int) -> tuple[dict[str, float], int]:
    """Warm-up searches, then `runs` timed ones; the latency row and the most results any returned."""
    samples, found = [], 0
    for i in range(SEARCH_WARMUP + runs):
        answer, seconds = client.post(f"/v1/users/{user}/memories/search",
                                      {"query": queries[i % len(queries)][:2000], "limit": 5})
        if i >= SEARCH_WARMUP:
            samples.append(seconds * 1000)
            found = max(found, len(answer.get("results") or []))
    return latency_row(samples), found


def run(url: str, data_dir: Path, searches: int) -> dict[str, Any]:
    from benchmarks.common import corpus

    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    first_user = "user-1"
    other_users = [f"user-{n}" for n in range(2, 2 + OTHER_USERS)]
    raw_texts, queries, _ = corpus()
    texts = distinct_texts(raw_texts, FIRST_USER_MEMORIES + OTHER_USERS * OTHER_USER_MEMORIES)
    probe = RssProbe(data_dir=data_dir, url=url)
    client = Client(url, tenant)
    started = time.perf_counter()
    try:
        idle = probe.sample()
        log(f"tenant {tenant} on {url}; RSS before the run: {idle} MiB{f' ({probe.note})' if probe.note else ''}")
        _, warmup_s = client.post("/v1/users/warm-up/memories/batch", {"memories": [
            {"memoryType": "FACT", "content": f"warm-up memory {i} about topic {i}"} for i in range(5)]})
        _, search_warmup_s = client.post("/v1/users/warm-up/memories/search", {"query": "topic 3", "limit": 5})
        log(f"warm-up: batch of 5 in {warmup_s:.2f} s, search in {search_warmup_s:.2f} s")
        log(f"importing {FIRST_USER_MEMORIES} memories for {first_user}")
        batches = import_user(client, probe, first_user, texts[:FIRST_USER_MEMORIES])
        for n, user in enumerate(other_users):
            offset = FIRST_USER_MEMORIES + n * OTHER_USER_MEMORIES
            log(f"importing {OTHER_USER_MEMORIES} memories for {user}")
            batches += import_user(client, probe, user, texts[offset:offset + OTHER_USER_MEMORIES])
        log(f"searching {first_user}'s {FIRST_USER_MEMORIES} memories {searches} times")
        search, found = search_latency(client, first_user, queries, searches)
        probe.sample()
    finally:
        client.close()
    elapsed = time.perf_counter() - started
    values = measured_values(batches, probe.max_mib, search["p95_ms"], first_user)
    import_seconds = sum(b["seconds"] for b in batches)
    return {
        "url": url, "tenant": tenant, "store": (probe.stack or {}).get("store"),
        "stack": probe.stack, "data_dir": str(data_dir),
        "warmup": {"batch_of_5_s": round(warmup_s, 3), "first_search_s": round(search_warmup_s, 3)},
        "batches": batches,
        "search": {**search, "memories": FIRST_USER_MEMORIES, "warmup_runs": SEARCH_WARMUP,
                   "max_results_returned": found},
        "import": {"memories": sum(b["size"] for b in batches), "seconds": round(import_seconds, 3),
                   "per_second": values["import_per_s"]},
        "rss": {"idle_mib": idle, "max_mib": probe.max_mib, "samples": len(probe.samples_mib),
                "processes": probe.processes or None, "by_part_at_max_mib": probe.parts_at_max or None,
                "note": probe.note},
        "targets": TARGETS, "measured": values, "verdicts": verdicts(values),
        "http_reconnects": client.reconnects, "elapsed_s": round(elapsed, 1),
    }


def against_stack(url: str | None, data_dir: Path, temporary: bool, run: Callable[[str], dict[str, Any]],
                  hint: str) -> dict[str, Any] | int:
    """`run(url)` on a stack of its own (url None: started on `data_dir`) or on the running one at `url`; the
    exit status instead when there is no stack (1) or an HTTP call fails (2). A temporary data dir is removed."""
    try:
        if url is None:
            with started_stack(data_dir) as started:
                return run(started)
        url = url.rstrip("/")
        if not healthy(url):
            raise NoStack(f"no healthy local stack on {url} (GET /health): start it with `make run`, or {hint}")
        return run(url)
    except NoStack as error:
        print(error, file=sys.stderr)
        return 1
    except HttpFailure as error:
        print(f"HTTP call failed: {error}", file=sys.stderr)
        return 2
    finally:
        if temporary:
            shutil.rmtree(data_dir, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=f"http://127.0.0.1:{os.environ.get('PORT') or 3000}",
                        help="the running stack (default http://127.0.0.1:$PORT, PORT default 3000)")
    parser.add_argument("--start", action="store_true",
                        help="start a stack of its own (python -m local.stack) on a free port and stop it after")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="the stack's data directory, holding stack.json (default LOCAL_DATA_DIR, else "
                             f"{ROOT / '.data'}; with --start, a temporary directory removed afterwards)")
    parser.add_argument("--searches", type=int, default=100, help="timed searches after the import")
    parser.add_argument("--output", type=Path, default=RESULTS / "local_stack.json")
    args = parser.parse_args(argv)
    if args.searches < 1:
        parser.error("--searches must be >= 1")
    from benchmarks.retrieval import machine_info

    temporary = args.start and args.data_dir is None
    data_dir: Path = (Path(tempfile.mkdtemp(prefix="bench-local-")) if temporary
                      else (args.data_dir or DEFAULT_DATA_DIR)).resolve()
    outcome = against_stack(None if args.start else args.url, data_dir, temporary,
                            lambda url: run(url, data_dir, args.searches), "pass --start")
    if isinstance(outcome, int):
        return outcome
    result = outcome

    print(batch_table(result["batches"]))
    print()
    print(f"search over {FIRST_USER_MEMORIES} memories: p50 {result['search']['p50_ms']:.1f} ms, "
          f"p95 {result['search']['p95_ms']:.1f} ms, max {result['search']['max_ms']:.1f} ms "
          f"({result['search']['runs']} runs)")
    if result["rss"]["note"]:
        print(f"RSS: {result['rss']['note']}")
    if parts := result["rss"]["by_part_at_max_mib"]:
        print("RSS at its max, MiB: " + ", ".join(f"{name} {mib:.0f}" for name, mib in parts.items()))
    print()
    print(summary_table(result["measured"], result["verdicts"]))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": machine_info(),
        "started_stack": args.start, **result,
    }, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {args.output} ({result['elapsed_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
