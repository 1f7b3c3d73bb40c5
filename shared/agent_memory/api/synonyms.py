"""The tenant's keyword synonyms over HTTP: adding them and reading a keyword's."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from agent_memory.domain.requests import RequestModel


class AddSynonymsRequest(RequestModel):
    """Keyword synonyms: a keyword and its synonyms (stored both ways, per tenant)."""

    keyword: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
    synonyms: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]] = Field(
        min_length=1, max_length=50)
    similarity_score: float = Field(default=0.8, ge=0.0, le=1.0)


class SynonymQuery(RequestModel):
    keyword: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


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
