"""Context injection as the inject service sees it: what a caller asks for (its conversation, with the
current message settled) and what comes out (the assembled request, the blocks it holds, the budget).
The HTTP request and answer are built from and into these in `api/inject.py`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, StringConstraints

from agent_memory.domain.inject.caller_state import AgentExecutionRecord, ConsultingState, DeviceInfo
from agent_memory.domain.inject.context import ContextBlock, Priority
from agent_memory.domain.inject.context_placement import Placement, SystemPrompt
from agent_memory.domain.inject.conversation import Message
from agent_memory.domain.requests import RequestModel
from agent_memory.domain.tiers.memory_layers import Intent


class KnowledgeItem(RequestModel):
    """A retrieved item, as a caller or a retriever gives it: `{content, source, similarity, category}`."""

    content: Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
    source: str | None = None
    similarity: float | None = None
    category: str | None = None


class ExperienceItem(KnowledgeItem):
    content: Annotated[str, StringConstraints(min_length=1, max_length=5_000)]


@dataclass(frozen=True)
class ContextRequest:
    """A caller's conversation and what it knows, for one injection. `current_user_message` is the
    message the blocks read (the last user turn's words when the caller sent none)."""

    messages: list[Message]
    current_user_message: str
    max_context_tokens: int
    # The caller's own reserves for the model's answer and its system prompt; None: the deployment's rule.
    reserved_output_tokens: int | None = None
    reserved_system_tokens: int | None = None
    placement: Placement = "pair"
    system: SystemPrompt = None  # the caller's own system prompt
    consulting_state: ConsultingState | None = None
    device_info: DeviceInfo | None = None
    agent_history: list[AgentExecutionRecord] | None = None
    # Caller-supplied knowledge and experiences; without them, a configured retriever is asked.
    relevant_knowledge: list[KnowledgeItem] | None = None
    similar_experiences: list[ExperienceItem] | None = None
    conversation_started_at: datetime | None = None
    project_id: str | None = None  # a project whose hot memory is injected besides the user's
    intent: Intent | None = None


class TokenUsage(BaseModel):
    available: int  # max_context_tokens - reserved_output - reserved_system: the history's and context's
    reserved_output: int  # kept for the model's answer
    reserved_system: int  # kept for the caller's system prompt
    messages_before: int
    messages_after: int
    context: int  # the injected blocks with their frame
    counted_by: Literal["estimate", "anthropic"]
    # messages_after + context <= available. False when the recent turns compaction keeps (and the P0
    # blocks, never dropped) are larger than the budget on their own: the request is sent over it.
    within_budget: bool = True


@dataclass(frozen=True)
class FailedSource:
    """A block whose source failed: `reason` is the error's kind, never its text (it may carry user data)."""

    type: str
    priority: Priority
    reason: str


@dataclass(frozen=True)
class Injection:
    """The Messages request to send (`messages`, and `system` for the system placement or the caller's own,
    echoed), the blocks in it and those left out, and whether the history was compacted."""

    messages: list[Message]
    system: list[dict[str, Any]] | None
    injected: list[ContextBlock]
    dropped: list[ContextBlock]
    failed: list[FailedSource]
    context_tokens: int  # the injected context as sent: the blocks and the frame around them
    compacted: bool
    compaction_steps: list[str]
    token_usage: TokenUsage
