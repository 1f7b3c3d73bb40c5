"""Every call of the extraction lease answers a throttled or failing table with the service's own errors."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.memory_layers import DynamoLayerStore
from agent_memory.domain.models import ScopeRef
from agent_memory.errors import Throttled
from tests.conftest import TABLE

USER = ScopeRef(tenant_id="t", user_id="u")


class ThrottlingEveryWrite:
    """Throttles each single-item write; everything else is the real (moto) client's."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def _throttled(self, operation: str) -> None:
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, operation)

    def put_item(self, **_: Any) -> None:
        self._throttled("PutItem")

    def update_item(self, **_: Any) -> None:
        self._throttled("UpdateItem")

    def delete_item(self, **_: Any) -> None:
        self._throttled("DeleteItem")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.mark.parametrize("call", [
    lambda layers: layers.claim_extraction(USER, "m-1"),
    lambda layers: layers.finish_extraction(USER, "m-1", saved=1),
    lambda layers: layers.release_extraction(USER, "m-1"),
], ids=["claim", "finish", "release"])
def test_given_a_throttled_table_then_each_lease_call_raises_throttled(dynamodb_client, call):
    layers = DynamoLayerStore(table_name=TABLE, client=ThrottlingEveryWrite(dynamodb_client))

    with pytest.raises(Throttled):
        call(layers)
