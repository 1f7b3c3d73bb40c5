"""The local stack's memory trim: freed memory handed back on a timer, stoppable, off when set to 0."""

from __future__ import annotations

import sys

import pytest

from local.memory_trim import start_trimming, trim_now

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")


def _rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_freed_memory_is_handed_back():
    chunks = [bytearray(50_000) for _ in range(4_000)]  # ~200 MB in small blocks, below mmap's threshold
    for chunk in chunks[::2]:
        chunk[0] = 1
    held = _rss_kib()
    del chunks[:-1]  # all but the last: freed, but under a live block glibc keeps them unless trimmed

    assert trim_now()
    assert _rss_kib() < held - 100_000


def test_the_timer_trims_until_stopped_and_zero_turns_it_off():
    assert start_trimming(0) is None
    stop = start_trimming(0.01)
    assert stop is not None
    stop.set()


def test_the_c_library_is_loaded_once_however_often_it_trims():
    import tracemalloc

    trim_now()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(50):
            trim_now()
        grown = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename")
                    if stat.traceback[0].filename.endswith("ctypes/__init__.py"))
    finally:
        tracemalloc.stop()
    assert grown < 1_000  # a CDLL per call left ~250 bytes of classes behind each time
