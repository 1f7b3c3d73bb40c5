"""Loading a user's memories over HTTP: load_context, the memory listing and placeholder resolution, their
requests and answers, and how they map to the load service."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from agent_memory.api.schemas import MAX_MESSAGE_BYTES
from agent_memory.api.search import AS_OF_DESCRIPTION
from agent_memory.domain.models import AsOf, MemoryType
from agent_memory.domain.requests import RequestModel, max_utf8_bytes

if TYPE_CHECKING:
    from agent_memory.services.load import LoadedContext, ResolvedPlaceholders


class LoadContextRequest(RequestModel):
    """The load_context action: a user's memories, ordered for a query."""

    action: Literal["load_context"] | None = None
    query: Annotated[str, StringConstraints(max_length=2000)] = ""
    limit: int = Field(default=20, ge=1, le=100)
    as_of: AsOf | None = Field(default=None, description=AS_OF_DESCRIPTION)


class ListMemoriesQuery(RequestModel):
    memory_type: MemoryType | None = None
    limit: int = Field(default=20, ge=1, le=100)
    cursor: Annotated[str, StringConstraints(max_length=200)] | None = None


class ResolveRequest(RequestModel):
    text: Annotated[str, AfterValidator(max_utf8_bytes(MAX_MESSAGE_BYTES))]


class LoadedMemory(BaseModel):
    """A memory as load_context (and the get_user_context tool) answers it: `type` and `createdAt` are the names
    the load_context action's output specifies (`memory_type` and `created_at` in every other answer)."""

    type: MemoryType
    content: str
    importance: int
    category: str | None = None
    createdAt: datetime | None = Field(default=None, description="When the memory was created; `created_at` in "
                                                                 "every other answer (load_context's specified name).")


class LoadContextOutput(BaseModel):
    """The load_context action's answer, in the load_context action's specified shape: snake_case members, with
    `memories[].createdAt` in camelCase."""

    action: str = "load_context"
    memories: list[LoadedMemory]
    user_profile_summary: str | None = None
    total_memories: int
    # Left out of the answer when no instant was asked for: the specified answer has no such member.
    as_of: datetime | None = Field(default=None, exclude_if=lambda at: at is None,
                                   description="The instant loaded as of (UTC), only when one was requested.")

    @classmethod
    def of(cls, loaded: LoadedContext, as_of: datetime | None = None) -> LoadContextOutput:
        return cls(memories=[LoadedMemory(type=m.memory_type, content=m.content, importance=m.importance,
                                          category=m.category, createdAt=m.created_at) for m in loaded.memories],
                   user_profile_summary=loaded.profile_summary, total_memories=loaded.total_memories, as_of=as_of)


class ResolvedText(BaseModel):
    text: str
    placeholders: list[str]
    missing: list[str]

    @classmethod
    def of(cls, resolved: ResolvedPlaceholders) -> ResolvedText:
        return cls(text=resolved.text, placeholders=resolved.placeholders, missing=resolved.missing)
