"""Warming up before the first request: the extractor is built once, and the snapshot hook registers only on
Lambda."""

from __future__ import annotations

from agent_memory.ports import ConversationTurn
from agent_memory.services.save import SaveService
from tests.fakes.extractor import FakeExtractor
from tests.fakes.services import USER
from tests.fakes.store import InMemoryMemoryStore


def test_warm_up_builds_the_extractor_once():
    built = []
    store = InMemoryMemoryStore()

    def provider() -> FakeExtractor:
        built.append(1)
        return FakeExtractor()

    from functools import cache

    save = SaveService(store=store, extractor=cache(provider))
    save.warm_up()
    save.extract_and_save(USER, ConversationTurn(user_message="hi"))
    assert built == [1]


def test_snapshot_warm_up_registers_only_on_lambda(monkeypatch):
    import sys
    import types

    from agent_memory.api.http import warm_before_snapshot
    from agent_memory.observability import tracer

    registered = []
    monkeypatch.setitem(sys.modules, "snapshot_restore_py",
                        types.SimpleNamespace(register_before_snapshot=registered.append))
    warm_before_snapshot(print)
    assert registered == [tracer.warm, print]  # the tracer's patching precedes the clients `warm` makes
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)  # not on Lambda: import fails
    warm_before_snapshot(print)
    assert registered == [tracer.warm, print]
