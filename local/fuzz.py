"""`make fuzz`: schemathesis against the local stack, driven by the API's own OpenAPI document.

Starts `make run`'s stack on a free port with a throw-away data directory, runs every operation with
valid and invalid inputs (checks: no 5xx, and every response matches its documented schema), then stops
the stack. Exits with schemathesis's status: 0 only when nothing failed.

    python -m local.fuzz --examples 25
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKS = "not_a_server_error,response_schema_conformance"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, stack: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=30):  # 200: every part answers
                return
        except (urllib.error.URLError, OSError):
            if stack.poll() is not None:
                raise SystemExit(f"the local stack exited with {stack.returncode} before answering") from None
            if time.monotonic() > deadline:
                raise SystemExit(f"the local stack did not answer within {timeout:.0f} s") from None
            time.sleep(0.3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=25, help="examples per operation and phase")
    parser.add_argument("--seed", type=int, default=20261123, help="hypothesis seed, for reproducible runs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--report", type=Path, default=ROOT / ".data" / "fuzz", help="where the JUnit report goes")
    args = parser.parse_args(argv)

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    data_dir = Path(tempfile.mkdtemp(prefix="agent-memory-fuzz-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "LLM_", "ANTHROPIC_"))}
    env["PYTHONPATH"] = f"{ROOT / 'shared'}:{ROOT}"
    log = (data_dir / "stack.log").open("wb")
    stack = subprocess.Popen([sys.executable, "-m", "local.stack", "--port", str(port), "--data-dir", str(data_dir)],
                             cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_until_up(url, stack, timeout=180)
        print(f"fuzzing {url} ({args.examples} examples per operation, seed {args.seed})", flush=True)
        args.report.mkdir(parents=True, exist_ok=True)
        command = [str(Path(sys.executable).with_name("schemathesis")), "run", f"{url}/openapi.json",
                   "--checks", CHECKS, "--max-examples", str(args.examples), "--seed", str(args.seed),
                   "--workers", str(args.workers), "--header", "X-Tenant-Id: fuzz", "--request-timeout", "30",
                   "--suppress-health-check", "all", "--report", "junit",
                   "--report-junit-path", str(args.report / "junit.xml")]
        return subprocess.call(command, cwd=ROOT, env=env)
    finally:
        stack.terminate()
        try:
            stack.wait(timeout=120)
        except subprocess.TimeoutExpired:
            stack.kill()
        log.close()
        if stack.returncode not in (0, -15):
            print(f"stack log: {data_dir / 'stack.log'}", file=sys.stderr)
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
