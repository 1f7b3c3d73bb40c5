"""The error body every route shares: `{"error": {"code", "message", "details"}}`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ErrorBody(BaseModel):
    code: str = Field(description="machine-readable, e.g. validation_error, not_found, throttled")
    message: str
    details: Any = Field(default=None, description="for validation errors, a list of {field, message, type}")


class ErrorResponse(BaseModel):
    error: ErrorBody
