"""AWS's DynamoDB Local (the jar bundled in the npm package amplify-dynamodb-simulator).

More faithful than moto for transactions and concurrency, and far closer to DynamoDB's latency
profile than in-process moto. `make dynamodb-local` installs it under .cache/.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from local.template import ROOT

DEFAULT_DIR = ROOT / ".cache/dynamodb-local/node_modules/amplify-dynamodb-simulator/emulator"


def install_dir() -> Path:
    return Path(os.environ.get("DYNAMODB_LOCAL_DIR", DEFAULT_DIR))


def available() -> bool:
    return (install_dir() / "DynamoDBLocal.jar").exists() and shutil.which("java") is not None


class DynamoDBLocal:
    def __init__(self) -> None:
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> Any:
        import boto3

        return boto3.client("dynamodb", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="local", aws_secret_access_key="local")

    def start(self, timeout: float = 30.0) -> DynamoDBLocal:
        directory = install_dir()
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self._process = subprocess.Popen(
            ["java", f"-Djava.library.path={directory / 'DynamoDBLocal_lib'}", "-jar",
             str(directory / "DynamoDBLocal.jar"), "-inMemory", "-port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
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

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None

    def __enter__(self) -> DynamoDBLocal:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
