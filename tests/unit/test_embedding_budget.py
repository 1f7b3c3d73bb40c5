"""The embedding work a save may carry: costed before anything is written, refused whole over the budget."""

from __future__ import annotations

import pytest

from agent_memory.domain.models import MemoryType, NewMemory, ScopeRef
from agent_memory.domain.search.embedding_budget import (
    ATTENTION_TOKENS,
    PASSAGE_TOKEN_CAP,
    check_embedding_budget,
    embedding_costs,
)
from agent_memory.domain.text.tokens import estimate_tokens
from agent_memory.errors import PayloadTooLarge
from agent_memory.services.save import SaveService
from tests.fakes.store import InMemoryMemoryStore

USER = ScopeRef(tenant_id="t", user_id="u")


def test_each_text_costs_its_estimated_tokens_more_for_long_ones_up_to_what_the_embedder_reads():
    middle_text = "word " * 200
    short, chinese, middle, long = embedding_costs(["Likes tea", "用户32岁，在杭州做前端开发", middle_text,
                                                    "word " * 2000])

    assert 0 < short < 10 and 10 < chinese < 40
    assert long == PASSAGE_TOKEN_CAP + PASSAGE_TOKEN_CAP ** 2 // ATTENTION_TOKENS  # read up to the cap, no more
    assert long / PASSAGE_TOKEN_CAP > 1.5 > middle / estimate_tokens(middle_text) > 1.2  # longer: dearer per token


def test_over_the_budget_the_refusal_names_the_field_the_limit_and_each_items_cost():
    texts = ["word " * 300] * 3  # ~400 tokens, ~590 units each

    check_embedding_budget(texts, 2000, field="memories")  # fits
    check_embedding_budget(texts * 10, 0, field="memories")  # 0: no limit
    with pytest.raises(PayloadTooLarge) as refused:
        check_embedding_budget(texts, 1000, field="memories")

    [detail] = refused.value.details
    assert detail["field"] == "memories" and detail["type"] == "embedding_budget" and detail["limit"] == 1000
    assert detail["item_tokens"] == embedding_costs(texts) and detail["tokens"] == sum(embedding_costs(texts))
    assert "memories" in refused.value.message and "1000" in refused.value.message


class _CountingEmbedder:
    model_id, dimension = "counting", 4

    def __init__(self) -> None:
        self.texts = 0

    def embed_documents(self, texts: list[str]):
        import numpy as np

        self.texts += len(texts)
        return np.ones((len(texts), 4), dtype=np.float32) / 2

    def embed_query(self, text: str):
        import numpy as np

        return np.ones(4, dtype=np.float32) / 2


def test_a_batch_over_the_budget_embeds_nothing_and_writes_nothing():
    store, embedder = InMemoryMemoryStore(), _CountingEmbedder()
    save = SaveService(store=store, extractor=lambda: None, embedder=lambda: embedder, max_embedded_tokens=1200)
    batch = [NewMemory(memory_type=MemoryType.FACT, content=f"fact {i}: " + "word " * 200) for i in range(5)]

    with pytest.raises(PayloadTooLarge):
        save.save_batch(USER, batch)

    assert store.all_current(USER) == [] and embedder.texts == 0
    assert len(save.save_batch(USER, batch[:3])) == 3
