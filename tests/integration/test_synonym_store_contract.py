"""One contract for the synonym store: the DynamoDB store on moto and on DynamoDB Local, and the fake the unit
tests use, so a fake cannot drift from the real store."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from agent_memory.adapters.dynamodb.synonyms import DynamoSynonymStore
from agent_memory.ports import SynonymStore
from tests.conftest import TABLE
from tests.fakes.synonyms import FakeSynonymStore


@pytest.fixture(params=["moto", "dynamodb-local", "fake"])
def synonyms(request: pytest.FixtureRequest) -> Iterator[SynonymStore]:
    if request.param == "fake":
        yield FakeSynonymStore()
    else:
        client = request.getfixturevalue("dynamodb_client" if request.param == "moto" else "dynamodb_local_client")
        yield DynamoSynonymStore(table_name=TABLE, client=client, cache_seconds=0)


@pytest.fixture
def tenant() -> str:
    """A tenant of its own: DynamoDB Local is shared by the session."""
    return f"t-syn-{uuid.uuid4().hex[:8]}"


def test_each_synonym_is_stored_both_ways_with_its_keyword(synonyms: SynonymStore, tenant: str):
    written = synonyms.add(tenant, "高才通", ["TTPS", "Top Talent Pass"], 0.9)

    assert written == 4
    assert synonyms.synonyms_for(tenant, ["高才通"]) == {"高才通": [("top talent pass", 0.9), ("ttps", 0.9)]}
    assert synonyms.synonyms_for(tenant, ["ttps"]) == {"ttps": [("高才通", 0.9)]}


def test_lookups_are_normalised_and_keep_the_callers_term(synonyms: SynonymStore, tenant: str):
    synonyms.add(tenant, "  Visa ", ["签证"], 0.8)

    assert synonyms.synonyms_for(tenant, ["VISA", "unknown"]) == {"VISA": [("签证", 0.8)]}


def test_the_stronger_synonym_comes_first_and_the_similarity_keeps_four_decimals(synonyms: SynonymStore,
                                                                                 tenant: str):
    synonyms.add(tenant, "job", ["work"], 0.61234567)
    synonyms.add(tenant, "job", ["employment"], 0.95)

    assert synonyms.synonyms_for(tenant, ["job"]) == {"job": [("employment", 0.95), ("work", 0.6123)]}


def test_a_newer_similarity_replaces_the_pair_and_a_keyword_is_never_its_own_synonym(synonyms: SynonymStore,
                                                                                    tenant: str):
    synonyms.add(tenant, "job", ["work"], 0.5)
    written = synonyms.add(tenant, "job", ["work", "JOB", " "], 0.7)

    assert written == 2
    assert synonyms.synonyms_for(tenant, ["job"]) == {"job": [("work", 0.7)]}


def test_tenants_do_not_share_synonyms(synonyms: SynonymStore, tenant: str):
    synonyms.add(tenant, "job", ["work"], 0.7)

    assert synonyms.synonyms_for(f"{tenant}-other", ["job"]) == {}
