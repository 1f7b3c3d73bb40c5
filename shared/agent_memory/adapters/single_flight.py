"""One computation per key at a time, for the adapters that share work between a request's threads."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future


class SingleFlight[K: Hashable, V]:
    """Per key, one computation under way: a caller of a key already being computed waits for the first
    caller's result, or gets its error raised too. With `keep`, a result also answers every later caller
    (a failure never does: the next caller computes again); without, the key is free once it is done."""

    def __init__(self, *, keep: bool = False) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._flights: dict[K, Future[V]] = {}

    def run(self, key: K, compute: Callable[[], V]) -> V:
        with self._lock:
            flight = self._flights.get(key)
            mine = flight is None
            if flight is None:
                flight = self._flights[key] = Future()
        if not mine:
            return flight.result()
        try:
            value = compute()
        except BaseException as error:
            with self._lock:
                del self._flights[key]
            flight.set_exception(error)
            raise
        if not self._keep:
            with self._lock:
                del self._flights[key]
        flight.set_result(value)
        return value

    def under_way(self, key: K) -> bool:
        """A computation of `key` is running (or, with `keep`, has answered)."""
        with self._lock:
            return key in self._flights
