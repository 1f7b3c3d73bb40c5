"""Child processes of the local stack: apart from the terminal's signals, never outliving their parent."""

from __future__ import annotations

import ctypes
import signal
import subprocess
from typing import Any

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child, before exec: the kernel sends it SIGTERM when its parent dies (even by SIGKILL).
    Children also get a session of their own (start_new_session), so a Ctrl-C in the terminal reaches only
    the supervisor, which then stops each part in order: the table last, after the workers' drain."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def terminate(process: subprocess.Popen[Any], timeout: float) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
