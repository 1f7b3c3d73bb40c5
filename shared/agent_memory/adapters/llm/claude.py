"""Memory extraction with Claude (Anthropic API or Amazon Bedrock).

Temperature 0 (a setting), the `save_user_memory` tool (plus `field`/`value` so a memory has an
upsert slot and a structured value), through the one tool-call path (`messages.create_with_tools`):
when the LLM stays down it raises `LlmUnavailable`, so the caller gets a 503 and can retry the turn.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import anthropic
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_memory.adapters.llm.messages import create_with_tools
from agent_memory.domain.models import KNOWN_CATEGORIES, ExtractedMemory, Keyword, MemoryType
from agent_memory.errors import LlmUnavailable
from agent_memory.observability import logger
from agent_memory.ports import ConversationTurn
from agent_memory.settings import Settings

CORE_FIELDS = (
    "age", "education", "university", "major",
    "currentJobTitle", "currentIndustry", "currentCompany", "totalYearsOfExperience", "annualIncome",
    "currentLocation", "targetCategory", "hasHongKongEmployer", "hasTechBackground", "investmentAmount",
    "immigrationTimeline", "maritalStatus", "hasChildren", "familySupport",
)

# The extraction prompt's save_user_memory tool (its wording and camelCase names are what the prompt
# was written and measured with; the public tool catalogue is api/tools.py), plus what extraction
# needs: the slot (`field`), its structured `value`, and weighted `keywords` for search (so keywords cost
# no extra LLM call).
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
SAVE_USER_MEMORY_TOOL["input_schema"]["properties"].update({
    "field": {
        "type": "string",
        "description": "这条记忆对应的字段名(每条记忆一个字段),核心字段之一: "
        + ", ".join(CORE_FIELDS)
        + '; 不属于任何核心字段时用 "other"。',
    },
    "value": {
        "description": "该字段的结构化取值,如 32、\"硕士\"、800000、true;模糊信息保留模糊,如 \"30+\"。",
    },
    "keywords": {
        "type": "array",
        "maxItems": 5,
        "description": "最多5个检索关键词(核心概念、实体),每个带区分性权重 0.0-1.0,使用用户的语言",
        "items": {
            "type": "object",
            "properties": {"word": {"type": "string"}, "weight": {"type": "number"}},
            "required": ["word", "weight"],
        },
    },
})
SAVE_USER_MEMORY_TOOL["input_schema"]["required"] = ["memoryType", "content", "field"]

SYSTEM_PROMPT = """# 身份
你是记忆管理专员。你负责从对话中提取并保存用户信息。

# 核心原则
1. 只提取用户明确陈述的信息,不做推测(助手的话不是用户的陈述)
2. 模糊信息保留模糊性("三十多岁" → "30+岁",不要推测为35)
3. 同一信息不要重复保存;"已有信息"中值未变的字段不要再次提取,用户给出新值时提取新值
4. 每条记忆用简洁的陈述句表达,且只对应一个字段
5. 使用用户自己的语言书写记忆内容(中文保持中文,英文保持英文),绝不翻译
6. 正确分类 memoryType:
   - FACT: 客观事实(年龄、学历、工作、收入等)
   - PREFERENCE: 主观偏好(偏好的移民方式、时间偏好等)
   - INTENT: 行动意图(打算何时申请、预算范围、已在准备等)
7. 收入注明币种(如"年薪约80万人民币")

# 需要提取的核心信息字段
- 基础信息: age 年龄, education 最高学历(博士/硕士/学士/大专/高中), university 毕业院校, major 专业方向
- 职业信息: currentJobTitle 当前职位, currentIndustry 所属行业, currentCompany 当前公司,
  totalYearsOfExperience 工作年限, annualIncome 年收入
- 移民相关: targetCategory 感兴趣的移民类别, hasHongKongEmployer 是否有香港雇主,
  hasTechBackground 是否有科技背景, investmentAmount 可投资金额, immigrationTimeline 计划移民时间
- 家庭信息: maritalStatus 婚姻状况, hasChildren 是否有子女, familySupport 家人支持程度
- 个人与喜好: name 姓名, birthday 生日, allergy 过敏(每种一条), preference 其他喜好(每项一条),
  dislike 不喜欢的事物(每项一条)

# 操作
对每一条新信息调用一次 save_user_memory(可以在一次回复中并行调用多次)。
没有可保存的新信息时,不调用工具,直接回复"无新信息"。"""


class _ToolKeyword(BaseModel):
    word: str = Field(min_length=1, max_length=100)
    weight: float = Field(default=1.0, ge=0.0, le=1.0)


class _ToolInput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    memoryType: MemoryType
    content: str = Field(min_length=1, max_length=2000)
    category: str | None = None
    field: str | None = None
    value: Any = None
    keywords: list[_ToolKeyword] = Field(default_factory=list, max_length=5)


def make_client(settings: Settings, *, http_client: Any = None, secrets_client: Any = None) -> Any:
    common: dict[str, Any] = {"timeout": settings.llm_timeout_seconds, "max_retries": settings.llm_max_retries}
    if http_client is not None:
        common["http_client"] = http_client
    if settings.effective_llm_provider == "bedrock":
        return anthropic.AnthropicBedrock(aws_region=settings.aws_region, **common)
    if settings.anthropic_api_key is None and settings.anthropic_api_key_secret_arn:
        return KeyRefreshingClient(build=lambda key: anthropic.Anthropic(api_key=key, **common),
                                   read_key=lambda: _api_key(settings, secrets_client))
    return anthropic.Anthropic(api_key=_api_key(settings, secrets_client), **common)


class KeyRefreshingClient:
    """An Anthropic client whose key, kept in Secrets Manager, is read again once it is `ttl_seconds`
    old: a rotated key is picked up, and a SnapStart snapshot taken after the warm-up (wall time jumps
    forward at restore) never keeps using the key it was taken with."""

    def __init__(self, *, build: Callable[[str], Any], read_key: Callable[[], str], ttl_seconds: float = 300.0,
                 clock: Callable[[], float] = time.time) -> None:
        self._build = build
        self._read_key = read_key
        self._ttl = ttl_seconds
        self._clock = clock
        self._client: Any = None
        self._read_at = 0.0
        self._lock = threading.Lock()

    @property
    def messages(self) -> Any:
        return self._current().messages

    def _current(self) -> Any:
        with self._lock:
            now = self._clock()
            if self._client is None or now - self._read_at >= self._ttl:
                self._client = self._build(self._read_key())
                self._read_at = now
            return self._client


def _api_key(settings: Settings, secrets_client: Any) -> str:
    if settings.anthropic_api_key is not None:
        return settings.anthropic_api_key.get_secret_value()
    if settings.anthropic_api_key_secret_arn:
        if secrets_client is None:
            import boto3

            secrets_client = boto3.client("secretsmanager")
        secret = secrets_client.get_secret_value(SecretId=settings.anthropic_api_key_secret_arn)["SecretString"]
        # Accept a bare key or the console's JSON form {"ANTHROPIC_API_KEY": "..."}.
        if secret.lstrip().startswith("{"):
            secret = json.loads(secret).get("ANTHROPIC_API_KEY", "")
        if secret:
            return str(secret)
    raise LlmUnavailable(
        "LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY or ANTHROPIC_API_KEY_SECRET_ARN",
        details=[{"field": "ANTHROPIC_API_KEY"}],
    )


class ClaudeExtractor:
    def __init__(self, *, client: Any, model: str, max_tokens: int = 1000, temperature: float | None = 0.0) -> None:
        self._client = client
        self._model = model
        self._max_tokens = max_tokens
        self._temperature = temperature

    def extract(self, turn: ConversationTurn) -> list[ExtractedMemory]:
        prompt = (
            "从以下对话中提取用户信息。只提取能明确确定的信息,不要猜测。\n"
            "已有信息(值未变的不要重复提取;用户说出新值的字段照常提取新值):"
            f"{json.dumps(turn.existing_info, ensure_ascii=False, default=str)}\n"
            f"<user_message>\n{turn.user_message}\n</user_message>\n"
            f"<assistant_message>\n{turn.assistant_message}\n</assistant_message>"
        )
        message = create_with_tools(
            self._client, model=self._model, max_tokens=self._max_tokens, temperature=self._temperature,
            system=SYSTEM_PROMPT, tools=[SAVE_USER_MEMORY_TOOL], tool_choice={"type": "auto"}, content=prompt,
            unavailable="the LLM is unavailable; nothing was stored, retry this turn")
        return self._memories_from(message)

    def _memories_from(self, message: Any) -> list[ExtractedMemory]:
        memories = []
        for block in message.content:
            if getattr(block, "type", None) != "tool_use" or block.name != SAVE_USER_MEMORY_TOOL["name"]:
                continue
            try:
                call = _ToolInput.model_validate(block.input)
            except ValidationError:
                logger.warning("ignored a malformed save_user_memory call", extra={"tool_use_id": block.id})
                continue
            memories.append(
                ExtractedMemory(
                    memory_type=call.memoryType,
                    content=call.content.strip(),
                    field=call.field,
                    value=call.value,
                    category=call.category,
                    keywords=[Keyword(term=k.word, weight=k.weight) for k in call.keywords],
                    metadata={"keyword_source": "llm"} if call.keywords else {},
                )
            )
        return memories


NARRATIVE_SYSTEM_PROMPT = """你是记忆管理专员。根据给定的结构化用户画像写一段简洁的总结(2-4句)。
规则: 只使用画像中的信息,不推测;模糊信息保留模糊;用用户的语言书写(画像是中文就写中文,英文就写英文);
最后一句说明哪些重要信息尚未收集。只输出这段话本身。"""


class ClaudeNarrator:
    """The summarize narrative, written by Claude from the deterministic profile."""

    def __init__(self, *, client: Any, model: str, max_tokens: int = 600) -> None:
        self._client = client
        self._model = model
        self._max_tokens = max_tokens

    def __call__(self, profile: Any) -> str:
        payload = json.dumps({"user_profile": profile.user_profile,
                              "missing_fields": profile.completeness.missing_fields}, ensure_ascii=False)
        try:
            message = self._client.messages.create(
                model=self._model,
                max_tokens=self._max_tokens,
                system=[{"type": "text", "text": NARRATIVE_SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": payload}],
            )
        except anthropic.APIError as error:
            raise LlmUnavailable("the LLM is unavailable; retry the summary") from error
        text = "".join(getattr(block, "text", "") for block in message.content).strip()
        if not text:
            raise LlmUnavailable("the LLM returned no narrative; retry the summary")
        return text


COMPACTION_PROMPTS = {
    "zh": "请用200字以内概括以下对话的要点，保留关键信息（如用户背景、已讨论的方案、已做的决定）。只输出摘要本身。",
    "en": "Summarize the key points of the following conversation in under 150 words. Keep the key facts "
          "(the user's background, options discussed, decisions made). Output only the summary.",
}


def _transcript(messages: list[dict[str, Any]]) -> str:
    lines = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            text = content
        else:
            parts = []
            for block in content:
                if block.get("type") == "text":
                    parts.append(block.get("text", ""))
                elif block.get("type") == "tool_use":
                    parts.append(f"[tool {block.get('name')}]")
                elif block.get("type") == "tool_result":
                    result = block.get("content")
                    parts.append(f"[tool result] {result if isinstance(result, str) else json.dumps(result)[:300]}")
            text = " ".join(parts)
        lines.append(f"{message['role']}: {text}")
    return "\n".join(lines)


class ClaudeConversationSummarizer:
    """Compaction's early-turn summary (a Haiku-class model by default). When the LLM is down, the offline
    extractive summary stands in: compaction must not fail the inject request."""

    def __init__(self, *, client: Any, model: str, max_tokens: int = 500, fallback: Any) -> None:
        self._client = client
        self._model = model
        self._max_tokens = max_tokens
        self._fallback = fallback

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        transcript = _transcript(messages)
        from agent_memory.domain.models import is_cjk_text

        prompt = COMPACTION_PROMPTS["zh" if is_cjk_text(transcript) else "en"]
        try:
            message = self._client.messages.create(
                model=self._model, max_tokens=self._max_tokens,
                messages=[{"role": "user", "content": f"{prompt}\n\n{transcript[:200_000]}"}],
            )
            text = "".join(getattr(block, "text", "") for block in message.content).strip()
        except anthropic.APIError:
            logger.warning("compaction summary fell back to the extractive one: the LLM is unavailable")
            text = ""
        return text or str(self._fallback(messages))


class AnthropicTokenCounter:
    """Anthropic's count_tokens endpoint (free, rate limited). None on failure: the caller estimates."""

    def __init__(self, *, client: Any, model: str) -> None:
        self._client = client
        self._model = model

    def count(self, messages: list[dict[str, Any]]) -> int | None:
        if not messages:
            return 0
        try:
            return int(self._client.messages.count_tokens(model=self._model, messages=messages).input_tokens)
        except anthropic.APIError as error:
            logger.warning("count_tokens failed; estimating instead", error=type(error).__name__)
            return None
