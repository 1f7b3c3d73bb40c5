"""Context injection's request and result: what a caller sends to /v1/context/inject and gets back, and
how they map to the inject service's `ContextRequest` and `Injection`.

The caller's conversation state (consulting state, device, agent calls) is the domain's
`caller_state`; the items a caller or a retriever supplies are the domain's `injection` items.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from agent_memory.domain.inject.caller_state import AgentExecutionRecord, ConsultingState, DeviceInfo
from agent_memory.domain.inject.context_budget import ReserveRule
from agent_memory.domain.inject.context_placement import Placement
from agent_memory.domain.inject.conversation import Message
from agent_memory.domain.inject.current_message import user_texts
from agent_memory.domain.inject.injection import ContextRequest, ExperienceItem, Injection, KnowledgeItem, TokenUsage
from agent_memory.domain.keys import Id
from agent_memory.domain.models import ScopeRef, require_utc
from agent_memory.domain.requests import RequestModel
from agent_memory.domain.tiers.memory_layers import Intent

if TYPE_CHECKING:
    from agent_memory.services.inject import InjectService

MAX_MESSAGES = 5000
MAX_AGENT_RECORDS = 200
MAX_CALLER_ITEMS = 50


class MessageParam(RequestModel):
    role: Literal["user", "assistant"]
    content: str | Annotated[list[dict[str, Any]], Field(min_length=1)]

    @field_validator("content")
    @classmethod
    def _blocks_have_types(cls, value: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
        if isinstance(value, list):
            for i, block in enumerate(value):
                if not isinstance(block.get("type"), str):
                    raise ValueError(f"content[{i}] needs a string 'type' (text, image, tool_use, tool_result, ...)")
        return value


def _window_description() -> str:
    """max_context_tokens' description, its figures computed from the default rule."""
    rule = ReserveRule()

    def left(window: int) -> str:
        return f"{rule.reserves(window).available:,} of {window:,}"

    full = rule.output_cap + rule.system_cap
    capped = max(math.ceil(rule.output_cap / rule.output_share), math.ceil(rule.system_cap / rule.system_share))
    return (f"The model's context window in tokens. By default it keeps a reserve for the model's answer "
            f"({rule.output_share:.0%} of the window, at most {rule.output_cap:,}) and one for your system prompt "
            f"({rule.system_share:.0%}, at most {rule.system_cap:,}); the history and the injected context share "
            f"the rest, `token_usage.available`: {left(4000)}, {left(8000)}, {left(16_000)}, {left(32_000)}, and "
            f"from {capped:,} tokens up the window less {full:,} ({left(200_000)}). The shares and caps are settings "
            "(CONTEXT_RESERVED_OUTPUT_SHARE, CONTEXT_RESERVED_OUTPUT_TOKENS, CONTEXT_RESERVED_SYSTEM_SHARE, "
            "CONTEXT_RESERVED_SYSTEM_TOKENS); reserved_output_tokens and reserved_system_tokens replace them "
            "for one request.")


_WINDOW_DESCRIPTION = _window_description()


class InjectionRequest(RequestModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "user_id": "u-1001", "conversation_id": "conv-1",
        "messages": [{"role": "user", "content": "你好，我想了解香港身份"},
                     {"role": "assistant", "content": "好的。请问您的学历和工作年限？"}],
        "current_user_message": "我浙大硕士，工作8年，我适合高才通吗?", "max_context_tokens": 8000,
    }]})

    user_id: Id
    conversation_id: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
    messages: Annotated[list[MessageParam], Field(max_length=MAX_MESSAGES)] = Field(default_factory=list)
    current_user_message: Annotated[str, StringConstraints(max_length=100_000)] = ""
    consulting_state: ConsultingState | None = None
    device_info: DeviceInfo | None = None
    agent_history: Annotated[list[AgentExecutionRecord], Field(max_length=MAX_AGENT_RECORDS)] | None = None
    max_context_tokens: int = Field(default=180_000, ge=1_000, le=2_000_000, description=_WINDOW_DESCRIPTION)
    reserved_output_tokens: int | None = Field(
        default=None, ge=0, le=2_000_000,
        description="Your own reserve for the model's answer (the max_tokens you will send), instead of the rule's. "
                    "With reserved_system_tokens, it must leave part of max_context_tokens.")
    reserved_system_tokens: int | None = Field(
        default=None, ge=0, le=2_000_000,
        description="Your own reserve for your system prompt (its size in tokens), instead of the rule's.")
    placement: Placement = "pair"
    # The caller's own system prompt: the `system` placement puts the context after it.
    system: str | list[dict[str, Any]] | None = None
    # Caller-supplied knowledge and experiences; without them, a configured retriever is asked.
    relevant_knowledge: Annotated[list[KnowledgeItem], Field(max_length=MAX_CALLER_ITEMS)] | None = None
    similar_experiences: Annotated[list[ExperienceItem], Field(max_length=MAX_CALLER_ITEMS)] | None = None
    conversation_started_at: Annotated[datetime | None, AfterValidator(require_utc)] = None
    # A project whose hot memory is injected besides the user's, and the intent of the current message
    # (question-like intents bring the weekly reports and the conversation log).
    project_id: Id | None = None
    intent: Intent | None = None

    @model_validator(mode="after")
    def _ends_with_the_user(self) -> InjectionRequest:
        last = self.messages[-1] if self.messages else None
        if not self.current_user_message.strip() and (last is None or last.role != "user"):
            raise ValueError("current_user_message: required when messages is empty or ends with an assistant turn")
        if not self.current_user_message.strip() and last is not None:
            # The history ends with the user's turn: that turn's text is the current message every block reads
            # (the memories it recalls, the intent's SOPs), not an empty one.
            self.current_user_message = _text_of(last.content)
        return self

    def to_context_request(self) -> ContextRequest:
        return ContextRequest(
            messages=[m.model_dump() for m in self.messages], current_user_message=self.current_user_message,
            max_context_tokens=self.max_context_tokens, reserved_output_tokens=self.reserved_output_tokens,
            reserved_system_tokens=self.reserved_system_tokens, placement=self.placement, system=self.system,
            consulting_state=self.consulting_state, device_info=self.device_info, agent_history=self.agent_history,
            relevant_knowledge=self.relevant_knowledge, similar_experiences=self.similar_experiences,
            conversation_started_at=self.conversation_started_at, project_id=self.project_id, intent=self.intent)


def _text_of(content: str | list[dict[str, Any]]) -> str:
    """A user message's words: its text, or its text blocks' (tool results and images have none)."""
    texts = user_texts([{"role": "user", "content": content}])
    return "\n".join(text.strip() for text in texts if isinstance(text, str)).strip()


class InjectedBlock(BaseModel):
    type: str
    priority: str  # P0 | P1 | P2
    tokens: int
    cache_ttl_seconds: float
    cached: bool


class FailedBlock(BaseModel):
    type: str
    priority: str
    reason: str  # the error's kind, never its text (it may carry user data)


class InjectionResult(BaseModel):
    messages: list[Message]
    system: list[dict[str, Any]] | None = None  # the `system` placement's blocks, or the caller's own, echoed
    injected_contexts: list[str]
    dropped_contexts: list[str]
    # Blocks whose source failed: their content is missing from this context (a retry may bring it).
    failed_contexts: list[FailedBlock] = Field(default_factory=list)
    total_context_tokens: int  # the injected context as sent: the blocks and the frame around them
    blocks_tokens: int  # the blocks' own tokens summed, without the frame
    compacted: bool
    compaction_steps: list[str]
    blocks: list[InjectedBlock]
    token_usage: TokenUsage

    @classmethod
    def of(cls, injection: Injection) -> InjectionResult:
        return cls(
            messages=injection.messages,
            system=injection.system,
            injected_contexts=[b.type for b in injection.injected],
            dropped_contexts=[b.type for b in injection.dropped],
            failed_contexts=[FailedBlock(type=f.type, priority=f"P{int(f.priority)}", reason=f.reason)
                             for f in injection.failed],
            total_context_tokens=injection.context_tokens,
            blocks_tokens=sum(b.estimated_tokens for b in injection.injected),
            compacted=injection.compacted,
            compaction_steps=injection.compaction_steps,
            blocks=[InjectedBlock(type=b.type, priority=f"P{int(b.priority)}", tokens=b.estimated_tokens,
                                  cache_ttl_seconds=b.cache_ttl_seconds, cached=b.cached) for b in injection.injected],
            token_usage=injection.token_usage,
        )


def inject_context(service: InjectService, user: ScopeRef, request: InjectionRequest) -> InjectionResult:
    """The inject operation: the request as the service takes it, the service's injection as the answer."""
    return InjectionResult.of(service.inject(user, request.to_context_request()))
