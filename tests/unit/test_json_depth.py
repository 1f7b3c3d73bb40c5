"""Free JSON in requests nests at most MAX_JSON_DEPTH levels, and hot memory stored deeper still reads."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from agent_memory.api.inject import InjectionRequest
from agent_memory.api.memory_layers import HotMemoryView, IntentContextRequest, PutHotMemoryRequest
from agent_memory.api.memory_tool import MemoryToolRequest
from agent_memory.api.save import CreateMemoryRequest, ExtractRequest
from agent_memory.api.tools import ToolUseBlock
from agent_memory.domain.models import ScopeRef
from agent_memory.domain.requests import MAX_JSON_DEPTH, json_depth
from agent_memory.domain.tiers.memory_layers import HotMemoryEntry, HotMemoryType
from agent_memory.services.conversation_log import ConversationLogService
from agent_memory.services.memory_layers import MemoryLayersService
from tests.fakes.layer_store import FakeLayerStore

SCOPE = ScopeRef(tenant_id="t", user_id="u-1")
MOMENT = datetime(2026, 11, 20, tzinfo=UTC)


def nested(levels: int) -> Any:
    value: Any = "x"
    for i in range(levels):
        value = {"a": value} if i % 2 else [value]
    return value


@pytest.mark.parametrize(
    ("value", "depth"), [("x", 0), ([], 1), ({}, 1), ({"a": [1]}, 2), ([[], [[{}]]], 4), (nested(10_000), 10_000)]
)
def test_json_depth_counts_arrays_and_objects(value, depth):
    assert json_depth(value) == depth


def test_given_a_stop_then_json_depth_stops_counting_past_it():
    assert json_depth(nested(10_000), stop_above=32) == 33


@pytest.mark.parametrize(
    ("model", "data", "field"),
    [
        (PutHotMemoryRequest, {"value": nested(MAX_JSON_DEPTH + 1)}, "value"),
        (
            CreateMemoryRequest,
            {"memoryType": "FACT", "content": "x", "metadata": {"m": nested(MAX_JSON_DEPTH)}},
            "metadata",
        ),
        (ExtractRequest, {"userMessage": "hi", "existingInfo": {"m": nested(MAX_JSON_DEPTH)}}, "existingInfo"),
        (ToolUseBlock, {"type": "tool_use", "id": "t1", "name": "set_hot_memory", "input": {"v": nested(40)}}, "input"),
        (IntentContextRequest, {"intent": {"type": "qa", "entities": {"e": nested(40)}}}, "intent"),
        (IntentContextRequest, {"intent": {"type": "qa", "anything": nested(40)}}, "intent"),  # a caller's own field
        (
            InjectionRequest,
            {
                "userId": "u-1",
                "conversationId": "c",
                "currentUserMessage": "hi",
                "consultingState": {"collected_info": nested(40)},
            },
            "consultingState",
        ),
        (
            InjectionRequest,
            {
                "userId": "u-1",
                "conversationId": "c",
                "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "x": nested(40)}]}],
            },
            "messages",
        ),
    ],
)
def test_given_json_nested_past_the_limit_then_validation_names_the_field(model, data, field):
    with pytest.raises(ValidationError) as raised:
        model.model_validate(data)

    error = raised.value.errors()[0]
    assert error["loc"][0] == field and f"deeper than {MAX_JSON_DEPTH} levels" in error["msg"]


def test_given_json_at_the_limit_then_it_is_accepted():
    assert PutHotMemoryRequest.model_validate({"value": nested(MAX_JSON_DEPTH)}).value == nested(MAX_JSON_DEPTH)


def test_given_a_memory_tool_field_nested_past_the_limit_then_the_message_names_it():
    with pytest.raises(ValidationError, match=f"x: nests deeper than {MAX_JSON_DEPTH} levels"):
        MemoryToolRequest.model_validate({"command": "view", "path": "/memories", "x": nested(40)})


# ---- an entry stored before the limit ---------------------------------------------------------------


def layers_with(*values: Any) -> MemoryLayersService:
    store = FakeLayerStore()
    for i, value in enumerate(values):
        store.put_hot(
            SCOPE,
            HotMemoryEntry(type=HotMemoryType.STATUS, key=f"k{i}", value=value, created_at=MOMENT, updated_at=MOMENT),
        )
    return MemoryLayersService(
        layers=store,
        log=ConversationLogService(layers=store, embedder=lambda: None),
        embedder=lambda: None,
        question_intents=frozenset(),
    )


def test_given_a_stored_entry_too_deep_to_write_out_then_hot_memory_reports_it_and_returns_the_rest():
    service = layers_with("签证材料准备中", nested(300))

    view = HotMemoryView.of(SCOPE, service.hot_memory(SCOPE))

    assert [e.key for e in view.entries] == ["k0"] and [e.key for e in view.status] == ["k0"]
    assert [(u.type, u.key) for u in view.unreadable] == [(HotMemoryType.STATUS, "k1")]
    assert "delete the entry or set it again" in view.unreadable[0].reason
    assert view.model_dump_json()  # the whole view writes out (the entry itself could not)


def test_given_a_stored_entry_too_deep_then_the_prompt_text_leaves_it_out():
    text = layers_with("签证材料准备中", nested(300)).hot_memory_text(SCOPE, zh=True)

    assert "签证材料准备中" in text and "k1" not in text
