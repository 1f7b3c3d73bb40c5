"""How much embedding work a request carries, so that no request the API accepts can run past the function's
timeout: the texts it would embed are costed before anything is written, and a request over the budget is
refused whole (413) instead of timing out part-way.

The cost is an estimate of the embedder's work that needs no model: the tokenizer estimate the context budget
uses (within ~10% of the bundled e5 model's own counts on English and Chinese, above it on symbols), each text
capped at what the embedder reads of it, and weighted up with its length as the model's attention is.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.domain.text.tokens import estimate_tokens
from agent_memory.errors import PayloadTooLarge

# The embedder reads at most this many tokens of a text (e5: 512); more costs nothing.
PASSAGE_TOKEN_CAP = 512
# A text's work grows faster than its tokens (attention is quadratic in its length): a token of a 512-token text
# costs the bundled model's CPU ~1.6 times one of a 32-token text (make bench-embed-cost). A text of t tokens costs
# t + t²/ATTENTION_TOKENS units, about a millisecond of one core each at any length.
ATTENTION_TOKENS = 800


def embedding_costs(texts: Sequence[str]) -> list[int]:
    """Each text's estimated embedding work, in units of about one token of a short text."""
    costs = []
    for text in texts:
        tokens = min(estimate_tokens(text), PASSAGE_TOKEN_CAP)
        costs.append(tokens + tokens * tokens // ATTENTION_TOKENS)
    return costs


def check_embedding_budget(texts: Sequence[str], limit: int, *, field: str) -> None:
    """Raises PayloadTooLarge (413) naming `field` when embedding `texts` would cost more than `limit` tokens;
    its details give the limit, the total and each item's cost, so a client can split the request to fit.
    `limit` 0 turns the check off."""
    if limit <= 0 or not texts:
        return
    costs = embedding_costs(texts)
    total = sum(costs)
    if total <= limit:
        return
    raise PayloadTooLarge(
        f"{field}: embedding these texts would take ~{total} units of work (a token each, more for long texts); "
        f"one request may carry at most {limit} (MAX_EMBEDDED_TOKENS_PER_REQUEST): split it into smaller requests",
        details=[{"field": field, "type": "embedding_budget", "limit": limit, "tokens": total,
                  "item_tokens": costs}],
    )
