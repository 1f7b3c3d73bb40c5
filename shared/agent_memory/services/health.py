"""`GET /health`: whether the parts a function needs answer, checked the cheap way (one read of each table;
the embedder's state as it stands, never loading its model), so a load balancer or a start-up script can
ask every few seconds."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from agent_memory.domain.health import EmbedderHealth, Health, SearchHealth, TableHealth
from agent_memory.errors import AgentMemoryError
from agent_memory.ports import TableProbe


class HealthService:
    def __init__(self, *, tables: Mapping[str, TableProbe], embedder: Callable[[], EmbedderHealth],
                 search: Callable[[], SearchHealth] | None = None, pack: str | None = None) -> None:
        """`search`: the search tier's probe (None: the serverless tier, which has nothing to probe)."""
        self._tables = dict(tables)
        self._embedder = embedder
        self._search = search
        self._pack = pack

    def check(self) -> Health:
        return Health.of(tables={name: _table(probe) for name, probe in self._tables.items()},
                         embedder=self._embedder(), search=self._search() if self._search else None,
                         pack=self._pack)


def _table(probe: TableProbe) -> TableHealth:
    started = time.perf_counter()
    try:
        probe.ping()
    except AgentMemoryError as error:
        return TableHealth(status="down", latency_ms=None, error=error.message)
    except Exception as error:  # a probe reports any failure as the part being down
        return TableHealth(status="down", latency_ms=None, error=type(error).__name__)
    return TableHealth(status="ok", latency_ms=round((time.perf_counter() - started) * 1000, 1))
