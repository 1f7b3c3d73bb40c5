"""The API's request models: snake and camel case, the content limit in bytes, import timestamps, the batch limit."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from agent_memory.api.load import ListMemoriesQuery
from agent_memory.api.portability import ExportQuery
from agent_memory.api.save import BatchRequest, CreateMemoryRequest, DeleteMemoryQuery, ExtractRequest
from agent_memory.api.synonyms import SynonymQuery
from agent_memory.api.tools import ToolsQuery
from agent_memory.domain.models import MemoryType

REPO = Path(__file__).resolve().parents[2]


def test_requests_accept_snake_and_camel_case():
    a = CreateMemoryRequest.model_validate({"memoryType": "FACT", "content": "x", "conversationId": "c"})
    b = CreateMemoryRequest.model_validate({"memory_type": "FACT", "content": "x", "conversation_id": "c"})
    assert a == b
    assert ExtractRequest.model_validate({"userMessage": "hi", "existingInfo": {"age": 3}}).existing_info == {"age": 3}


def test_content_limit_is_in_utf8_bytes():
    CreateMemoryRequest(memory_type=MemoryType.FACT, content="长" * 2730)  # 8,190 bytes
    with pytest.raises(ValidationError, match="8192 bytes"):
        CreateMemoryRequest(memory_type=MemoryType.FACT, content="长" * 2731)


def test_import_timestamps_must_have_a_timezone_and_are_stored_in_utc():
    request = CreateMemoryRequest.model_validate({"memoryType": "FACT", "content": "x",
                                                 "createdAt": "2026-02-05T18:00:00+08:00"})
    assert request.created_at == datetime(2026, 2, 5, 10, 0, tzinfo=UTC)


def test_batch_limit():
    item = {"memoryType": "FACT", "content": "x"}
    assert len(BatchRequest.model_validate({"memories": [item] * 100}).memories) == 100
    with pytest.raises(ValidationError):
        BatchRequest.model_validate({"memories": [item] * 101})


QUERY_MODELS = [DeleteMemoryQuery, ExportQuery, ListMemoriesQuery, SynonymQuery, ToolsQuery]


def test_every_query_model_is_listed_here():
    """What parse_query reads: a new query model joins QUERY_MODELS, so its flags are checked below."""
    read = set(re.findall(r"parse_query\(app, (\w+)\)", "\n".join(
        path.read_text() for path in (REPO / "functions").rglob("*.py"))))
    assert read == {model.__name__ for model in QUERY_MODELS}


@pytest.mark.parametrize("model", QUERY_MODELS)
def test_a_flag_in_a_query_string_is_true_or_false_and_nothing_else(model):
    for name, field in model.model_fields.items():
        if field.annotation is bool:
            for word in ("1", "yes", "TRUE", "on", ""):
                with pytest.raises(ValidationError, match="must be true or false"):
                    model.model_validate({name: word})
            assert model.model_validate({name: "true"}).model_dump()[name] is True
