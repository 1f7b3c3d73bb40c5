"""Response bodies the handlers build themselves (the services' own outputs are models already),
and the error body every route shares."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent_memory.domain.models import Memory, SaveOutcome, SaveResult

# Outcomes that stored nothing: the memory answered is the one already there.
NOT_STORED = frozenset({SaveOutcome.DUPLICATE, SaveOutcome.MERGED})


class SavedMemoryResponse(BaseModel):
    outcome: SaveOutcome
    memory: Memory
    superseded: Memory | None
    skipped_fields: list[str]  # the field of the memory already there (an identical one, or one it restates)

    @classmethod
    def of(cls, result: SaveResult) -> SavedMemoryResponse:
        kept = result.outcome in NOT_STORED
        return cls(outcome=result.outcome, memory=result.memory, superseded=result.superseded,
                   skipped_fields=[result.memory.field or ""] if kept else [])

    @property
    def status(self) -> int:
        return 200 if self.outcome in NOT_STORED else 201


class BatchItemResult(BaseModel):
    index: int
    memory_key: str
    outcome: SaveOutcome
    superseded_key: str | None


class BatchSaveResponse(BaseModel):
    saved_count: int  # created or superseding: not the duplicates nor the merged
    memory_keys: list[str]
    results: list[BatchItemResult]

    @classmethod
    def of(cls, results: list[SaveResult]) -> BatchSaveResponse:
        return cls(
            saved_count=sum(1 for r in results if r.outcome not in NOT_STORED),
            memory_keys=[r.memory.memory_key for r in results],
            results=[BatchItemResult(index=i, memory_key=r.memory.memory_key, outcome=r.outcome,
                                     superseded_key=r.superseded.memory_key if r.superseded else None)
                     for i, r in enumerate(results)],
        )


class DeletedMemory(BaseModel):
    deleted: bool = True
    memory_key: str


class SynonymsAdded(BaseModel):
    keyword: str
    synonyms: list[str]
    stored_pairs: int


class SynonymEntry(BaseModel):
    synonym: str
    similarity_score: float


class SynonymList(BaseModel):
    keyword: str
    synonyms: list[SynonymEntry]


class ToolCatalogue(BaseModel):
    tools: list[dict[str, Any]] = Field(description="Anthropic tool definitions: name, description, input_schema")
    system_prompt: str


class ErrorBody(BaseModel):
    code: str = Field(description="machine-readable, e.g. validation_error, not_found, throttled")
    message: str
    details: Any = Field(default=None, description="for validation errors, a list of {field, message, type}")


class ErrorResponse(BaseModel):
    error: ErrorBody
