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
from typing import TYPE_CHECKING, Any, Literal

import anthropic
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_memory.adapters.llm.messages import create_with_tools
from agent_memory.domain.models import ExtractedMemory, Keyword, MemoryType
from agent_memory.domain.packs import DomainPack, default_pack
from agent_memory.errors import LlmUnavailable
from agent_memory.observability import logger
from agent_memory.ports import ConversationTurn
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from types_boto3_secretsmanager.client import SecretsManagerClient


def extraction_tool(pack: DomainPack) -> dict[str, Any]:
    """The extraction prompt's save_user_memory tool in the pack's words (its wording and camelCase names are
    what the prompt was written and measured with; the public tool catalogue is api/tools.py), plus what
    extraction needs: the slot (`field`), its structured `value`, and weighted `keywords` for search (so keywords
    cost no extra LLM call). A pack with open categories takes any category text."""
    category: dict[str, Any] = {"type": "string", **({"enum": list(pack.categories)} if pack.categories else {}),
                                "description": pack.llm.category_description}
    return {
        "name": "save_user_memory",
        "description": pack.llm.tool_description,
        "input_schema": {
            "type": "object",
            "properties": {
                "memoryType": {
                    "type": "string",
                    "enum": [t.value for t in MemoryType],
                    "description": pack.llm.memory_type_description,
                },
                "content": {
                    "type": "string",
                    "description": pack.llm.content_description,
                },
                "category": category,
                "field": {
                    "type": "string",
                    "description": "这条记忆对应的字段名(每条记忆一个字段),核心字段之一: "
                    + ", ".join(pack.llm.core_fields)
                    + '; 不属于任何核心字段时用 "other"。',
                },
                "value": {
                    "description": "该字段的结构化取值,如 32、\"硕士\"、800000、true;模糊信息保留模糊,如 \"30+\"。",
                },
                "operation": {
                    "type": "string",
                    "enum": ["save", "retract"],
                    "description": pack.llm.operation_description,
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
            },
            "required": ["memoryType", "content", "field"],
        },
    }


# The immigration pack's (the default deployment's) tool, prompt and fields.
SAVE_USER_MEMORY_TOOL = extraction_tool(default_pack())
SYSTEM_PROMPT = default_pack().llm.system
CORE_FIELDS = default_pack().llm.core_fields


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
    operation: Literal["save", "retract"] = "save"
    keywords: list[_ToolKeyword] = Field(default_factory=list, max_length=5)


def make_client(settings: Settings, *, http_client: Any = None,
                secrets_client: SecretsManagerClient | None = None) -> Any:
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


def _api_key(settings: Settings, secrets_client: SecretsManagerClient | None) -> str:
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
    """Extraction with the pack's prompt and tool (by default the immigration pack's)."""

    def __init__(self, *, client: Any, model: str, max_tokens: int = 1000, temperature: float | None = 0.0,
                 pack: DomainPack | None = None) -> None:
        pack = pack or default_pack()
        self._system = pack.llm.system
        self._tool = extraction_tool(pack)
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
            system=self._system, tools=[self._tool], tool_choice={"type": "auto"}, content=prompt,
            unavailable="the LLM is unavailable; nothing was stored, retry this turn")
        return self._memories_from(message)

    def _memories_from(self, message: Any) -> list[ExtractedMemory]:
        memories = []
        for block in message.content:
            if getattr(block, "type", None) != "tool_use" or block.name != self._tool["name"]:
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
                    retraction=call.operation == "retract",
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
