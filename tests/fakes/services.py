"""The services as the composition root wires them over in-memory fakes: every table-backed part the test does
not hand in gets an in-memory adapter, so no DynamoDB client is made. And the save and load services built so,
for one user."""

from __future__ import annotations

from typing import Any

from agent_memory.bootstrap.services import Services, build_services, read_fields
from agent_memory.domain.models import ExtractedMemory, MemoryType, ScopeRef
from agent_memory.extraction import OfflineExtractor
from agent_memory.services.load import LoadService
from agent_memory.services.save import SaveService
from agent_memory.settings import Settings
from tests.fakes.erasure import FakeTableEraser
from tests.fakes.extractor import FakeExtractor
from tests.fakes.layer_store import FakeLayerStore
from tests.fakes.memory_files import FakeMemoryFileStore
from tests.fakes.store import InMemoryMemoryStore
from tests.fakes.synonyms import FakeSynonymStore

USER = ScopeRef(tenant_id="t", user_id="u")


def services_over_fakes(settings: Settings | None = None, **adapters: Any) -> Services:
    table_backed = {"store": InMemoryMemoryStore(), "synonyms": FakeSynonymStore(), "layers": FakeLayerStore(),
                    "memory_files": FakeMemoryFileStore(), "table_eraser": FakeTableEraser()}
    return build_services(settings or Settings(), **{**table_backed, **adapters})


def extracted(field: str | None, content: str, value: object = None, memory_type: str = "FACT") -> ExtractedMemory:
    return ExtractedMemory(memory_type=MemoryType(memory_type), content=content, field=field, value=value)


def services(memories: list[ExtractedMemory]) -> tuple[SaveService, LoadService, InMemoryMemoryStore, FakeExtractor]:
    """Save and load over one store, with an extractor that returns `memories`."""
    store, extractor = InMemoryMemoryStore(), FakeExtractor(memories)
    built = services_over_fakes(Settings(), store=store, extractor=extractor, embedder=None)
    return built.save, built.load, store, extractor


def inferring(store: InMemoryMemoryStore, extractor: object = None) -> SaveService:
    """A save service that reads a field from what a memory says when the caller names none."""
    return SaveService(store=store, extractor=lambda: extractor or OfflineExtractor(),  # type: ignore[arg-type,return-value]
                       field_reader=read_fields)
