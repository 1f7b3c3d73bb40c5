"""Export and import over HTTP: the export's query and the import's answer (the page itself is the export
format, domain/lifecycle/portable.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from agent_memory.domain.lifecycle.portable import PAGE_MAX_BYTES
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.requests import RequestModel
from agent_memory.domain.tiers.memory_layers import scope_label

if TYPE_CHECKING:
    from agent_memory.services.portability import ImportCounts, Imported

# An import body is an export page, which is at most PAGE_MAX_BYTES as the API writes it; a client that escapes
# non-ASCII text (\u4e2d) makes it up to six times larger. Under Lambda's 6 MB request payload.
MAX_IMPORT_BODY_BYTES = 5 * PAGE_MAX_BYTES


class ExportQuery(RequestModel):
    cursor: str | None = Field(default=None, max_length=4096,
                               description="The previous page's next_cursor; none for the first page")


class ImportedCounts(BaseModel):
    """Per section: memories (records, as an export page lists them) and their versions, log messages, hot-memory
    entries, reports, memory-tool entries, synonyms."""

    memories: int = 0
    memory_versions: int = 0
    log: int = 0
    hot_memory: int = 0
    reports: int = 0
    files: int = 0
    synonyms: int = 0

    @classmethod
    def of(cls, counts: ImportCounts) -> ImportedCounts:
        return cls(memories=counts.memories, memory_versions=counts.memory_versions, log=counts.log,
                   hot_memory=counts.hot_memory, reports=counts.reports,
                   files=counts.files, synonyms=counts.synonyms)


class ImportResult(BaseModel):
    """What the page wrote (`imported`), and what the scope held already or had expired (`skipped`): a page sent
    again imports nothing."""

    scope: dict[str, str]
    imported: ImportedCounts
    skipped: ImportedCounts

    @classmethod
    def of(cls, scope: ScopeRef, result: Imported) -> ImportResult:
        return cls(scope=scope_label(scope), imported=ImportedCounts.of(result.written),
                   skipped=ImportedCounts.of(result.skipped))
