"""Hands the memory glibc keeps after it was freed back to the system, on a timer, in the local stack's API
and workers processes.

Under a mixed load the API's process grew for half an hour while most of what it held was free memory its
allocator kept: a full collection and `malloc_trim(0)` took an 8-minute run's API from 309 to 209 MiB. A trim
costs a few milliseconds and changes nothing the process uses. Lambda starts each container afresh and never
lives this long under one load, so only the local stack does this.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
import threading
from collections.abc import Callable
from functools import cache


@cache  # each ctypes.CDLL builds its function-pointer classes anew: one per trim grew the heap
def _libc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        return trim
    except (OSError, AttributeError):  # another C library (musl has no malloc_trim)
        return None


def trim_now() -> bool:
    """One young-generation collection, then the allocator's free memory handed back; False when the C
    library cannot trim."""
    trim = _libc_trim()
    if trim is None:
        return False
    gc.collect(1)
    trim(0)
    return True


def start_trimming(every_seconds: float) -> threading.Event | None:
    """Trims every `every_seconds` on a daemon thread until the returned event is set (None: 0 or no trim)."""
    if every_seconds <= 0 or _libc_trim() is None:
        return None
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_seconds):
            trim_now()

    threading.Thread(target=loop, name="memory-trim", daemon=True).start()
    return stop
