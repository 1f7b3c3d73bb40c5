"""The offline extractor: every field rule applied to the user's own words.

Deterministic and conservative: it reports only what the user states outright in
`turn.user_message` (Chinese or English) -- never the assistant's words -- as one memory per
profile field, worded in the user's own language. Vague statements keep their vagueness
("三十多岁" -> "30+"). Negated, hypothetical ("想读博") and third-person ("我老婆是博士") mentions
are ignored. Standard library only; every table and regex is compiled once at import.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from agent_memory.domain.models import ExtractedMemory, is_cjk_text
from agent_memory.extraction.fields.amounts import annual_income, investment_amount
from agent_memory.extraction.fields.career import company, industry, job_title, years_of_experience
from agent_memory.extraction.fields.education import education, major, university
from agent_memory.extraction.fields.family import has_children, marital_status
from agent_memory.extraction.fields.immigration import hk_employer, target_category, timeline
from agent_memory.extraction.fields.location import location
from agent_memory.extraction.fields.personal import age
from agent_memory.extraction.grammar import Utterance
from agent_memory.ports import ConversationTurn

# --------------------------------------------------------------------------------------
# The extractor
# --------------------------------------------------------------------------------------

# One rule per profile field (the seed's field names), in the order memories are reported.
_FIELD_RULES: tuple[Callable[[Utterance], ExtractedMemory | None], ...] = (
    age,
    education,
    university,
    major,
    job_title,
    company,
    industry,
    years_of_experience,
    annual_income,
    location,
    marital_status,
    has_children,
    target_category,
    timeline,
    hk_employer,
    investment_amount,
)


class OfflineExtractor:
    """Deterministic regex/dictionary extractor: the MemoryExtractor used without an LLM.

    Reads only `turn.user_message` (the assistant's reply is not the user's statement) and
    returns at most one memory per field. It does not filter `turn.existing_info`: the caller
    skips known fields and reports them as skipped.
    """

    def extract(self, turn: ConversationTurn) -> list[ExtractedMemory]:
        text = unicodedata.normalize("NFKC", turn.user_message or "").strip()
        if not text:
            return []
        ctx = Utterance(text=text, zh=is_cjk_text(turn.user_message))
        return [memory for rule in _FIELD_RULES if (memory := rule(ctx)) is not None]
