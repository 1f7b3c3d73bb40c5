"""As-of reads in the domain: which versions were valid at an instant, a version as it stood then, and BM25 over
a subset scoring exactly as an index of just that subset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agent_memory.domain.models import Memory, MemoryType, deleted_version
from agent_memory.domain.search.bm25 import Bm25Index

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def version(key: str, start: datetime, end: datetime | None = None, by: str | None = None) -> Memory:
    return Memory(memory_key=key, tenant_id="t", user_id="u", memory_type=MemoryType.FACT, content=key,
                  importance=70, content_hash=key, created_at=start, updated_at=end or start, valid_from=start,
                  superseded_at=end, superseded_by=by)


def test_a_version_is_valid_from_its_valid_from_until_it_is_superseded():
    old = version("v1", T0, T0 + timedelta(days=10), by="v2")

    assert not old.valid_at(T0 - timedelta(seconds=1))
    assert old.valid_at(T0) and old.valid_at(T0 + timedelta(days=9))
    assert not old.valid_at(T0 + timedelta(days=10))  # the successor's from that instant on


def test_a_deleted_version_is_valid_until_the_delete_and_a_retired_one_keeps_its_end():
    current, retired = version("v2", T0), version("v1", T0, T0 + timedelta(days=3), by="v2")
    at = T0 + timedelta(days=5)

    deleted, deleted_retired = deleted_version(current, at), deleted_version(retired, at)

    assert deleted.superseded_at == deleted.deleted_at == at and deleted.superseded_by is None
    assert deleted.valid_at(at - timedelta(seconds=1)) and not deleted.valid_at(at)
    assert deleted_retired.superseded_at == T0 + timedelta(days=3) and deleted_retired.deleted_at == at


def test_a_version_as_it_stood_knows_nothing_of_what_retired_it_later():
    old = deleted_version(version("v1", T0, T0 + timedelta(days=10), by="v2"), T0 + timedelta(days=20))

    then = old.as_it_stood(T0 + timedelta(days=1))

    assert then.is_current and then.superseded_by is None and then.deleted_at is None
    assert old.as_it_stood(T0 + timedelta(days=11)) is old  # not valid then: unchanged


DOCS = ["我住在杭州", "我搬到了上海", "I work at Siemens", "I work at SAP as an engineer", "tennis on Sundays",
        "I work at Zalando", "杭州的西湖很美"]


@pytest.mark.parametrize("kept", [[0, 2, 4], [1, 3, 5, 6], [0, 1, 2, 3, 4, 5, 6], [6]])
@pytest.mark.parametrize("terms", [["work", "sap"], ["杭州"], ["tennis", "杭州", "engineer"], ["nothing"]])
def test_bm25_among_a_subset_scores_as_an_index_of_just_that_subset(kept, terms):
    from agent_memory.domain.text.text import tokenize

    query = [t for term in terms for t in tokenize(term)]
    mask = np.zeros(len(DOCS), dtype=bool)
    mask[kept] = True

    index = Bm25Index(DOCS)
    scored = index.scores(query, among=mask)

    assert (index.scores(query, among=index.among(mask)) == scored).all()  # the statistics made once, reused

    alone = Bm25Index([DOCS[i] for i in kept]).scores(query)
    assert scored[kept] == pytest.approx(alone, abs=1e-5)
    assert not scored[~mask].any()
