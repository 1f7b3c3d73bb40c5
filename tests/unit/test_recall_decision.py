"""The recall decision read from a message: its intent and whether to recall, its keywords and queries, its
urgency and complexity."""

from __future__ import annotations

import pytest

from agent_memory.domain.search.recall import IntentType, RecallQuery, analyze
from agent_memory.domain.search.search import MAX_QUERY_CHARS


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("还是按之前的方案处理吧", IntentType.TASK_CONTINUATION),
        ("let's do it as before", IntentType.TASK_CONTINUATION),
        ("重新执行上次的训练命令", IntentType.COMMAND_EXECUTION),
        ("我上次说的那个配置是什么?", IntentType.INFORMATION_SEEKING),
        ("What did I tell you about my sister last time?", IntentType.INFORMATION_SEEKING),
        ("按我的习惯来安排", IntentType.PREFERENCE_BASED),
        ("I usually prefer morning flights", IntentType.PREFERENCE_BASED),
        ("今天天气不错", IntentType.GENERAL_CHAT),
        ("hello there", IntentType.GENERAL_CHAT),
    ],
)
def test_recall_decision_reads_the_cues(message, intent):
    decision = analyze(RecallQuery(message=message))
    assert decision.intent_type is intent
    assert decision.needs_recall is (intent is not IntentType.GENERAL_CHAT)


def test_recall_at_conversation_start_always_loads_and_queries_drop_cue_words():
    assert analyze(RecallQuery(message="hello", context_type="initialization")).needs_recall
    decision = analyze(RecallQuery(message="还是按之前说的高才通方案吧"))
    assert "高才通方案" in decision.keywords
    assert all("之前" not in q for q in decision.search_queries)


def test_recall_reads_urgency_and_complexity():
    assert analyze(RecallQuery(message="马上按上次的配置重新部署")).urgency == "high"
    assert analyze(RecallQuery(message="rerun the training script", context_type="command")).urgency == "high"
    assert analyze(RecallQuery(message="今天天气不错")).urgency == "low"
    long = ("Last time we discussed the visa, the budget and the schools; what did I say about the budget, "
            "which school did I prefer, and when did I plan to move?")
    assert analyze(RecallQuery(message=long)).is_complex_query
    assert not analyze(RecallQuery(message="what did I say about tennis?")).is_complex_query


def test_a_message_longer_than_a_search_query_is_searched_by_its_opening_cut_at_a_space():
    words = "the deploy command from last time " + " ".join(f"step{i}" for i in range(900))
    cjk = "上次说的部署命令" + "很长的消息" * 600

    for message in (words, cjk):
        queries = analyze(RecallQuery(message=message, context_type="mid_conversation")).search_queries
        assert queries and all(0 < len(q) <= MAX_QUERY_CHARS for q in queries)
    topic = analyze(RecallQuery(message=words, context_type="mid_conversation")).search_queries[0]
    assert topic.startswith("deploy command") and topic.split()[-1].startswith("step")  # whole words only
