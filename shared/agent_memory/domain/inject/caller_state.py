"""What a caller tells context injection about its conversation: the consulting state it tracks, the
user's device, and the specialist agents it called. Values only; `request_blocks` formats them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from agent_memory.domain.requests import OpenRequestModel, RequestModel


class StageRecord(OpenRequestModel):
    stage_id: str
    turns_in_stage: int = Field(default=0, ge=0)


class AssessmentResult(OpenRequestModel):
    recommended_programs: list[str] = Field(default_factory=list)
    suitability_score: float | None = None
    highlights: list[str] = Field(default_factory=list)
    concerns: list[str] = Field(default_factory=list)


class ConsultingState(OpenRequestModel):
    collected_info: dict[str, Any] = Field(default_factory=dict)
    assessment_result: AssessmentResult | None = None
    current_stage_id: str | None = None
    stage_history: list[StageRecord] = Field(default_factory=list)
    stage_turn_count: int = Field(default=0, ge=0)


class DeviceInfo(OpenRequestModel):
    device_type: str | None = None  # mobile | desktop | tablet
    device_model: str | None = None
    os: str | None = None
    timezone: str | None = None  # IANA name (Asia/Shanghai) or an offset (UTC+8)
    region: str | None = None
    locale: str | None = None


class AgentExecutionRecord(RequestModel):
    agent_name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    invoked_at: int = Field(ge=0)  # epoch milliseconds
    duration_ms: int = Field(default=0, ge=0)
    input_summary: str = ""
    output_summary: str = ""
    tokens_used: int = Field(default=0, ge=0)
