"""The user profile over HTTP: the summarize action's request and answer."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from agent_memory.api.search import AS_OF_DESCRIPTION
from agent_memory.domain.models import AsOf
from agent_memory.domain.profile.profile import Completeness
from agent_memory.domain.requests import RequestModel

if TYPE_CHECKING:
    from agent_memory.services.summarize import ProfileSummary


class SummarizeRequest(RequestModel):
    """The summarize action (optional body)."""

    action: Literal["summarize"] | None = None
    as_of: AsOf | None = Field(default=None, description=AS_OF_DESCRIPTION)


class SummarizeOutput(BaseModel):
    action: str = "summarize"
    user_profile: dict[str, dict[str, Any]]
    completeness: Completeness
    narrative_summary: str
    # Left out of the answer when no instant was asked for: the specified answer has no such member.
    as_of: datetime | None = Field(default=None, exclude_if=lambda at: at is None,
                                   description="The instant the profile was built as of (UTC), when one was asked for.")

    @classmethod
    def of(cls, summary: ProfileSummary, as_of: datetime | None = None) -> SummarizeOutput:
        return cls(user_profile=summary.profile.user_profile, completeness=summary.profile.completeness,
                   narrative_summary=summary.narrative, as_of=as_of)
