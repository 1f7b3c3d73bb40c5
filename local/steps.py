"""`make run`'s progress, one plain line per step: `[ 12.3s] starting DynamoDB Local`, timed from the start of
`make run` (the Makefile's `step` prints its own steps in the same form and hands its clock to local.stack), so
a first run that installs for minutes says what it is doing, and how long it has taken so far."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def step_line(elapsed_seconds: float, what: str) -> str:
    return f"[{elapsed_seconds:5.1f}s] {what}"


class Steps:
    def __init__(self, started_at: float | None = None, *, out: TextIO | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        """`started_at`: the epoch second the steps count from (`make run`'s start), else now."""
        self._clock = clock
        self.started_at = clock() if started_at is None else started_at
        self._out = out

    def __call__(self, what: str) -> None:
        print(step_line(self._clock() - self.started_at, what), file=self._out or sys.stdout, flush=True)
