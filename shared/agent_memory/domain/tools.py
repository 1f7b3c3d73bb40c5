"""Anthropic tool definitions for the memory tools, generated from the request models.

Kept free of the anthropic SDK so the read-only functions can serve them without importing it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent_memory.domain.models import KNOWN_CATEGORIES, MemoryType


class GetMemoryDetailInput(BaseModel):
    memory_key: str = Field(description="记忆的 memory_key(来自 search_memories 的结果)")


class GetUserContextInput(BaseModel):
    query: str = Field(description='检索查询,如"用户的基本信息和移民意向"')


SAVE_USER_MEMORY_TOOL: dict[str, Any] = {
    "name": "save_user_memory",
    "description": "将用户信息保存到长期记忆存储。每条记忆包含类型、内容和相关移民类别。",
    "input_schema": {
        "type": "object",
        "properties": {
            "memoryType": {
                "type": "string",
                "enum": [t.value for t in MemoryType],
                "description": "FACT=用户陈述的事实(年龄、学历等),PREFERENCE=用户偏好(倾向的移民方式),"
                "INTENT=用户意图(计划时间、预算等)",
            },
            "content": {
                "type": "string",
                "description": '要保存的记忆内容,用简洁的陈述句表达,如"用户32岁,清华大学计算机硕士"。'
                "使用用户自己的语言,不要翻译。",
            },
            "category": {
                "type": "string",
                "enum": list(KNOWN_CATEGORIES),
                "description": "相关的移民类别(如果有明确关联)",
            },
        },
        "required": ["memoryType", "content"],
    },
}

MEMORY_TOOLS_SYSTEM_PROMPT = """你是一个智能助手,拥有访问用户历史记忆的能力。

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

检索结果会显示相关性分数(0-1),建议:
- 优先使用分数 > 0.8 的记忆
- 0.6-0.8 的记忆作为参考
- 多个相关记忆时综合判断
- 需要完整内容时调用 get_memory_detail
"""


def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=False)
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def tool_definitions(search_input: type[BaseModel]) -> list[dict[str, Any]]:
    """The tools, `search_memories` taking `search_input` (the search service's request model)."""
    return [
        {
            "name": "search_memories",
            "description": (
                "检索用户的历史记忆。使用场景: 1. 用户提到之前讨论过的话题时 2. 需要了解用户偏好或历史操作时 "
                "3. 需要验证或引用之前的结论时 4. 上下文出现不明确的引用时。"
                '示例: "还是按之前的方案处理" -> search_memories(query="处理方案", search_mode="semantic")'
            ),
            "input_schema": _input_schema(search_input),
        },
        {
            "name": "get_memory_detail",
            "description": "获取特定记忆的完整内容(含版本历史)",
            "input_schema": _input_schema(GetMemoryDetailInput),
        },
        SAVE_USER_MEMORY_TOOL,
        {
            "name": "get_user_context",
            "description": "获取用户的历史记忆和背景信息。返回按重要性和相关性排序的记忆列表。",
            "input_schema": _input_schema(GetUserContextInput),
        },
    ]
