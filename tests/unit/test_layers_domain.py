"""The three layers' pure parts: scopes, hot-memory formatting, hybrid text relevance."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from agent_memory.domain.search.hybrid import hybrid_scores
from agent_memory.domain.tiers.memory_layers import (
    HotMemoryEntry,
    HotMemoryType,
    format_hot_memory,
    scope_label,
    scope_ref,
)

NOW = datetime(2026, 11, 22, tzinfo=UTC)


def entry(type_: str, key: str, value: object, priority: int = 0) -> HotMemoryEntry:
    return HotMemoryEntry(type=HotMemoryType(type_), key=key, value=value, priority=priority, created_at=NOW,
                          updated_at=NOW)


def test_given_a_project_and_a_user_with_the_same_id_then_their_scopes_differ():
    project, user = scope_ref("t", "projects", "p1"), scope_ref("t", "users", "p1")
    assert project != user and project.user_id == "project/p1"
    assert scope_label(project) == {"type": "project", "id": "p1"}
    assert scope_label(user) == {"type": "user", "id": "p1"}


def test_given_hot_memory_when_formatted_then_sections_come_in_order_with_json_values_by_priority():
    text = format_hot_memory([
        entry("meta", "name", "高血压研究", priority=1),
        entry("decision", "window", {"days": 3}, priority=9),
        entry("decision", "dose", "10mg", priority=2),
        entry("preference", "tone", "brief"),  # not one of a project's sections
    ], zh=True, project=True)
    assert text == ('## 项目信息\n- name: "高血压研究"\n\n'
                    '## 关键决策\n- window: {"days":3}\n- dose: "10mg"')


def test_given_an_english_user_scope_when_formatted_then_titles_are_english_and_preferences_follow():
    text = format_hot_memory([entry("preference", "tone", "brief"), entry("meta", "name", "Ann")],
                             zh=False, project=False)
    assert text == '## About\n- name: "Ann"\n\n## Preferences\n- tone: "brief"'


def test_given_no_vectors_then_relevance_is_bm25_normalised_to_the_best_match():
    scores = hybrid_scores("visit window", ["the visit window was widened", "weather is nice", "visit"])
    assert scores[0] == 1.0 and scores[1] == 0.0 and 0 < scores[2] < 1


def test_given_vectors_then_cosine_blends_in_and_missing_vectors_fall_back_to_lexical():
    query = np.array([1.0, 0.0])
    scores = hybrid_scores("x", ["x", "y"], query_vector=query, vectors=[np.array([1.0, 0.0]), None])
    assert scores == [1.0, 0.0]
    semantic_only = hybrid_scores("zzz", ["a", "b"], query_vector=query,
                                  vectors=[np.array([0.0, 1.0]), np.array([0.6, 0.8])])
    assert semantic_only[1] > semantic_only[0] == 0.0
