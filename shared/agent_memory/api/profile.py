"""The user profile over HTTP: the summarize action's request and answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from agent_memory.domain.profile import Completeness
from agent_memory.domain.requests import RequestModel

if TYPE_CHECKING:
    from agent_memory.services.summarize import ProfileSummary


class SummarizeRequest(RequestModel):
    """The summarize action (optional body)."""

    action: Literal["summarize"] | None = None


class SummarizeOutput(BaseModel):
    action: str = "summarize"
    user_profile: dict[str, dict[str, Any]]
    completeness: Completeness
    narrative_summary: str

    @classmethod
    def of(cls, summary: ProfileSummary) -> SummarizeOutput:
        return cls(user_profile=summary.profile.user_profile, completeness=summary.profile.completeness,
                   narrative_summary=summary.narrative)
