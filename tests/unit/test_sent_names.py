"""Error details name a field as the request spelled it: present fields as written, missing ones in the
convention of the object they belong in (snake_case unless its keys are camelCase)."""

from __future__ import annotations

import pytest

from agent_memory.api.sent_names import as_sent, details_as_sent


@pytest.mark.parametrize(("field", "body", "named"), [
    ("memoryType", {"memoryType": "X", "content": "x"}, "memoryType"),
    ("memory_type", {"memory_type": "X", "content": "x"}, "memory_type"),
    ("memoryType", {"content": "x"}, "memory_type"),  # no camelCase key: the documented form
    ("memoryType", {"content": "x", "created_at": "2026-01-01"}, "memory_type"),
    ("memoryType", {"content": "x", "createdAt": "2026-01-01"}, "memoryType"),
    ("max_context_tokens", {"userId": "u", "reservedOutputTokens": 1}, "maxContextTokens"),
    ("max_context_tokens", {"userId": "u", "max_context_tokens": 1}, "max_context_tokens"),
    ("memories.0.memoryType", {"memories": [{"content": "x", "conversationId": "c"}]}, "memories.0.memoryType"),
    ("memories.1.memoryType", {"memories": [{"conversationId": "c"}, {"content": "x"}]}, "memories.1.memory_type"),
    ("memories.0.memoryType", {"memories": [{"content": "x"}], "someFlag": 1}, "memories.0.memoryType"),
    ("timeRange.0", {"time_range": ["x"]}, "time_range.0"),
    ("consultingState.collectedInfo", {"userId": "u", "consultingState": 5}, "consultingState.collectedInfo"),
    ("X-Tenant-Id", {"user_id": "u"}, "X-Tenant-Id"),
    ("body", {}, "body"),
    ("", {"a": 1}, ""),
    ("messages.7.role", {"messages": []}, "messages.7.role"),
])
def test_a_field_is_named_as_the_body_spells_it(field, body, named):
    assert as_sent(field, body) == named


def test_details_keep_their_other_members_and_other_shapes():
    details = [{"field": "userId", "message": "m", "type": "missing"}, {"no": "field"}]
    assert details_as_sent(details, {"conversation_id": "c"}) == [
        {"field": "user_id", "message": "m", "type": "missing"}, {"no": "field"}]
    assert details_as_sent({"cause": "x"}, {}) == {"cause": "x"}
