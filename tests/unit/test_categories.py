"""The configured intent categories: a save outside them is refused, and the setting reads a list or commas."""

from __future__ import annotations

import pytest

from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.services.save import SaveService
from agent_memory.settings import Settings
from tests.fakes.store import InMemoryMemoryStore


def test_given_a_category_outside_the_configured_set_then_the_save_is_a_422_and_nothing_is_written():
    from agent_memory.errors import InvalidInput

    store = InMemoryMemoryStore()
    service = SaveService(store=store, extractor=lambda: None, categories=["TTPS", "QMAS"])  # type: ignore[arg-type]
    who = ScopeRef(tenant_id="t", user_id="categories")
    with pytest.raises(InvalidInput) as raised:
        service.save_batch(who, [NewMemory(memory_type=MemoryType.INTENT, content="想走高才通", category="ttps"),
                                 NewMemory(memory_type=MemoryType.INTENT, content="想走EB5", category="EB5")])
    assert raised.value.details == [{"field": "memories.1.category", "type": "enum",
                                     "message": "must be one of TTPS, QMAS"}]
    assert store.all_current(who) == []
    saved = service.save(who, NewMemory(memory_type=MemoryType.INTENT, content="想走高才通", category="ttps"))
    assert saved.memory.category == "TTPS"  # the configured spelling
    anything = SaveService(store=store, extractor=lambda: None, categories=[])  # type: ignore[arg-type]
    assert anything.save(who, NewMemory(memory_type=MemoryType.INTENT, content="想走EB5", category="EB5")).memory


def test_categories_come_from_the_environment_as_a_list_or_comma_separated(monkeypatch):

    monkeypatch.setenv("MEMORY_CATEGORIES", "PHASE1, PHASE2")
    assert Settings().memory_categories == ["PHASE1", "PHASE2"]
    monkeypatch.setenv("MEMORY_CATEGORIES", '["A","B"]')
    assert Settings().memory_categories == ["A", "B"]
    monkeypatch.delenv("MEMORY_CATEGORIES")
    assert Settings().memory_categories == ["QMAS", "GEP", "IANG", "TTPS", "CIES", "TECHTAS"]
