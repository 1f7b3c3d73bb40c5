"""What the memory tools say to a model, in English (the default) and Chinese: each tool's description,
every property's description, and the system prompt that tells the model when to use them.

The schemas themselves are generated from the request models (api/tools.py); a test checks that
every property of every tool has a description here in both languages.
"""

from __future__ import annotations

from typing import Literal

Lang = Literal["en", "zh"]
LANGUAGES: tuple[Lang, ...] = ("en", "zh")

# The tools of the memory-tool contract, then those an agent with more of the API can use.
CORE_TOOLS = ("search_memories", "get_memory_detail", "save_user_memory", "get_user_context")
EXTENDED_TOOLS = ("log_message", "get_hot_memory", "set_hot_memory", "search_reports", "summarize_profile")

TOOL_DESCRIPTIONS: dict[str, dict[Lang, str]] = {
    "search_memories": {
        "en": "Search the user's long-term memories. Use it when the user refers to something discussed before "
              "(\"as we planned last time\"), when you need their preferences or past decisions, or when a "
              "reference is ambiguous. Example: \"same plan as before\" -> search_memories(query=\"plan\", "
              "search_mode=\"semantic\").",
        "zh": "检索用户的历史记忆。使用场景: 1. 用户提到之前讨论过的话题时 2. 需要了解用户偏好或历史操作时 "
              "3. 需要验证或引用之前的结论时 4. 上下文出现不明确的引用时。"
              '示例: "还是按之前的方案处理" -> search_memories(query="处理方案", search_mode="semantic")',
    },
    "get_memory_detail": {
        "en": "Get one memory in full, with its version history (older values it superseded).",
        "zh": "获取特定记忆的完整内容(含版本历史)",
    },
    "save_user_memory": {
        "en": "Save information about the user to long-term memory: a fact, a preference or an intent, with the "
              "related category if there is one. A new value for the same fact supersedes the old one; saving the "
              "same content twice stores it once.",
        "zh": "将用户信息保存到长期记忆存储。每条记忆包含类型、内容和相关类别。"
              "同一事实的新值会取代旧值,相同内容只保存一次。",
    },
    "get_user_context": {
        "en": "Get the user's memories and background, ordered by importance and relevance to a query, with a "
              "one-line profile summary.",
        "zh": "获取用户的历史记忆和背景信息。返回按重要性和相关性排序的记忆列表。",
    },
    "log_message": {
        "en": "Append a message to the conversation log (kept 30 days, searchable, rolled up into weekly "
              "reports). With extract=true, memories are extracted from a user message in the background.",
        "zh": "把一条消息写入对话日志(保留30天,可检索,每周汇总为周报)。extract=true 时在后台从用户消息中提取记忆。",
    },
    "get_hot_memory": {
        "en": "Get the user's hot memory: current status, decisions, preferences and metadata, always up to date.",
        "zh": "获取用户的热记忆: 当前状态、决策、偏好和元数据。",
    },
    "set_hot_memory": {
        "en": "Set one hot-memory entry (by section and key), e.g. status/current_stage = \"documents\".",
        "zh": "设置一条热记忆(按分区和键),如 status/current_stage = \"材料准备\"。",
    },
    "search_reports": {
        "en": "Search the weekly reports that summarise past conversations (what happened in earlier weeks).",
        "zh": "检索汇总历史对话的周报(之前几周发生了什么)。",
    },
    "summarize_profile": {
        "en": "Summarise the user's profile: structured fields, a completeness score and a short narrative.",
        "zh": "汇总用户画像: 结构化字段、完整度评分和一段简短叙述。",
    },
}

# The as_of argument of the reading tools (search_memories, get_user_context, summarize_profile).
AS_OF_EN = ("Only when asked what was known at a past moment: that instant (ISO 8601 with a timezone, e.g. "
            "2026-02-05T10:00:00Z); the memories as they were then. Leave unset for what is known now.")
AS_OF_ZH = "仅在被问到过去某一时刻已知的信息时使用: 该时刻(带时区的 ISO 8601 时间),返回当时的记忆。平时不要设置。"

PROPERTY_DESCRIPTIONS: dict[str, dict[str, dict[Lang, str]]] = {
    "search_memories": {
        "query": {"en": "What to look for, in the user's language.", "zh": "检索内容,使用用户的语言。"},
        "search_mode": {"en": "semantic (meaning), keyword (exact words) or hybrid (both; the default).",
                        "zh": "semantic(语义)、keyword(关键词)或 hybrid(两者结合,默认)。"},
        "keywords": {"en": "Exact words that must weigh in the match.", "zh": "需要精确匹配的关键词。"},
        "memory_types": {"en": "Only these types: FACT, PREFERENCE, INTENT.",
                         "zh": "只检索这些类型: FACT、PREFERENCE、INTENT。"},
        "time_range": {"en": "[start, end] as ISO 8601 times with a timezone; either may be null.",
                       "zh": "[开始, 结束],带时区的 ISO 8601 时间;任一端可为 null。"},
        "limit": {"en": "At most this many results (1-20, default 5).", "zh": "最多返回条数(1-20,默认5)。"},
        "min_relevance_score": {"en": "Leave out results scoring below this (0-1).",
                                "zh": "低于该相关性分数(0-1)的结果不返回。"},
        "as_of": {"en": AS_OF_EN, "zh": AS_OF_ZH},
    },
    "get_memory_detail": {
        "memory_key": {"en": "The memory's key, from a search_memories result (get_user_context answers none).",
                       "zh": "记忆的 memory_key(来自 search_memories 的结果;get_user_context 的结果不含它)。"},
    },
    "save_user_memory": {
        "memory_type": {"en": "FACT = something the user stated (age, education...); PREFERENCE = what they "
                              "prefer; INTENT = what they plan (timeline, budget...).",
                        "zh": "FACT=用户陈述的事实(年龄、学历等),PREFERENCE=用户偏好,"
                              "INTENT=用户意图(计划时间、预算等)。"},
        "content": {"en": "The memory as one short statement, e.g. \"User is 32, MSc in CS from Tsinghua\". "
                          "Keep the user's own language; do not translate.",
                    "zh": '要保存的记忆内容,用简洁的陈述句表达,如"用户32岁,清华大学计算机硕士"。'
                          "使用用户自己的语言,不要翻译。"},
        "category": {"en": "The related category, when the memory clearly belongs to one.",
                     "zh": "相关的类别(如果有明确关联)。"},
    },
    "get_user_context": {
        "query": {"en": "What the context is for, e.g. \"the user's background and goals\"; \"\" = by importance.",
                  "zh": '检索查询,如"用户的基本信息和意向";为空时按重要性排序。'},
        "limit": {"en": "At most this many memories (1-100, default 20).", "zh": "最多返回的记忆条数(1-100,默认20)。"},
        "as_of": {"en": AS_OF_EN, "zh": AS_OF_ZH},
    },
    "log_message": {
        "conversation_id": {"en": "The conversation the message belongs to.", "zh": "消息所属的对话。"},
        "role": {"en": "Who said it: user or assistant.", "zh": "说话方: user 或 assistant。"},
        "content": {"en": "The message text.", "zh": "消息内容。"},
        "extract": {"en": "Extract memories from it (user messages only) in the background.",
                    "zh": "是否在后台从中提取记忆(仅用户消息)。"},
    },
    "get_hot_memory": {},
    "set_hot_memory": {
        "type": {"en": "The section: meta, status, decision or preference.",
                 "zh": "分区: meta、status、decision 或 preference。"},
        "key": {"en": "The entry's name within its section, e.g. current_stage.",
                "zh": "分区内的键名,如 current_stage。"},
        "value": {"en": "Any JSON value (at most 4 KB).", "zh": "任意 JSON 值(最多 4 KB)。"},
        "priority": {"en": "Higher shows first (-1000 to 1000, default 0).",
                     "zh": "越大越靠前(-1000 到 1000,默认0)。"},
    },
    "search_reports": {
        "query": {"en": "What to look for in the weekly reports.", "zh": "在周报中检索的内容。"},
        "limit": {"en": "At most this many reports (1-20, default 3).", "zh": "最多返回的周报数(1-20,默认3)。"},
    },
    "summarize_profile": {"as_of": {"en": AS_OF_EN, "zh": AS_OF_ZH}},
}

SYSTEM_PROMPTS: dict[Lang, str] = {
    "en": """You can read and write the user's long-term memory with tools.

## When to search (search_memories)
1. The user refers to the past: "as configured before", "I asked this already", "last time's plan".
2. You need their preferences or habits: search with memory_types=["PREFERENCE"].
3. A multi-step task continues: search for the earlier steps by their keywords.
4. A reference is ambiguous: search with search_mode="semantic".

## How to search
- Exact words: pass keywords.
- Fuzzy meaning: search_mode="semantic".
- Narrow by type with memory_types, by time with time_range.

## Using the results
Each result has a relevance score (0-1) that orders the results of one search; it is not a probability. Measured
on held-out questions over short memories, about 8 in 10 results scoring 0.6 or more answered the question, about
half of those at 0.5-0.6, 1 in 4 at 0.4-0.5 and fewer than 1 in 20 below 0.4. Rely on results at 0.5 or more, treat
0.4-0.5 as hints to check against what the user says, weigh several related memories together, and call
get_memory_detail when you need one in full.

## Saving (save_user_memory)
Save facts, preferences and intents the user states, one short statement each, in their own language.
""",
    "zh": """你是一个智能助手,拥有访问用户历史记忆的能力。

## 记忆工具使用指南

当你需要以下信息时,请主动调用 `search_memories` 工具:

1. **用户提及历史内容**
   - 用户说:"按照之前的配置"、"我之前问过"、"上次的方案"
   - 动作:调用 search_memories 检索相关主题

2. **用户偏好与习惯**
   - 需要了解用户的风格偏好、常用设置
   - 动作:检索 memory_types=["PREFERENCE"] 的记忆

3. **多轮任务延续**
   - 多轮对话中需要引用之前步骤的结果
   - 动作:使用关键词检索相关步骤

4. **不确定性澄清**
   - 对用户请求中的模糊引用不确定时
   - 动作:使用 semantic 模式检索相关记忆

## 检索策略建议

- **精确查找**: 使用 keywords 参数指定确切词汇
- **模糊匹配**: 使用 search_mode="semantic" 进行语义检索
- **类型过滤**: 使用 memory_types 缩小检索范围
- **时间范围**: 对于近期事件使用时间过滤

## 检索结果使用

检索结果会显示相关性分数(0-1),用于排列同一次检索的结果,并非概率。在留出的短记忆问题上实测:分数 ≥ 0.6 的结果约八成
回答了问题,0.5-0.6 约一半,0.4-0.5 约四分之一,低于 0.4 不到二十分之一。建议:
- 优先使用分数 ≥ 0.5 的记忆
- 0.4-0.5 的记忆仅作参考,需结合对话核实
- 多个相关记忆时综合判断
- 需要完整内容时调用 get_memory_detail
""",
}
