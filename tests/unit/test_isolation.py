"""Tenant isolation as one invariant: every scope reference is checked where it is built, and two
different scopes never share a partition."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agent_memory.domain.keys import PROJECT_PREFIX, cache_partition_key, is_valid_id, partition_key
from agent_memory.domain.models import ScopeRef
from agent_memory.services.rollup import ScopeTask

# Ids as an attacker would send them: any text, with the key separator and the project prefix likely.
ids = st.one_of(st.text(max_size=140), st.text(alphabet="ab#/:.-@_ 中T#U", max_size=12),
                st.sampled_from(["", "#", "a#b", "T#x#U#y", "project/p1", "project/", "../u", "u\n", "a" * 129]))


def ref_or_refusal(tenant: str, user: str) -> ScopeRef | None:
    try:
        return ScopeRef(tenant_id=tenant, user_id=user)
    except ValidationError:
        return None


@given(tenant=ids, user=ids)
def test_any_strings_either_build_a_valid_scope_or_are_refused(tenant, user):
    ref = ref_or_refusal(tenant, user)
    scope_id = user.removeprefix(PROJECT_PREFIX)
    expected_valid = is_valid_id(tenant) and is_valid_id(scope_id)
    assert (ref is not None) == expected_valid
    if ref is not None:
        assert "#" not in ref.tenant_id + ref.user_id


@given(a=st.tuples(ids, ids), b=st.tuples(ids, ids))
def test_two_distinct_scopes_never_share_a_partition(a, b):
    first, second = ref_or_refusal(*a), ref_or_refusal(*b)
    if first is None or second is None or first == second:
        return
    assert partition_key(first) != partition_key(second)
    assert cache_partition_key(first) != cache_partition_key(second)
    assert cache_partition_key(first) != partition_key(second)


def test_a_user_and_a_project_of_the_same_name_are_different_scopes():
    user, project = ScopeRef(tenant_id="t", user_id="p1"), ScopeRef(tenant_id="t", user_id="project/p1")
    assert partition_key(user) != partition_key(project)


@pytest.mark.parametrize(("tenant", "scope"), [("t#1", "u"), ("t", "u#MEM"), ("", "u"), ("t", "project/a#b")])
def test_a_queued_rollup_task_with_a_forged_id_is_refused(tenant, scope):
    with pytest.raises(ValidationError):
        ScopeTask(week="2026-11-16", tenant_id=tenant, scope_id=scope)
