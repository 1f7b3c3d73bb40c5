"""Every export page of a scope, following the cursors."""

from __future__ import annotations

from datetime import datetime

from agent_memory.domain.lifecycle.portable import ExportPage
from agent_memory.domain.models import ScopeRef
from agent_memory.services.portability import PortabilityService


def export_all(service: PortabilityService, scope: ScopeRef, now: datetime) -> list[ExportPage]:
    pages = [service.export_page(scope, now=now)]
    while pages[-1].next_cursor:
        pages.append(service.export_page(scope, pages[-1].next_cursor, now=now))
    return pages
