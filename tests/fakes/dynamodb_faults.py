"""DynamoDB clients that fail the way the service does under load, around a real (moto) client."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from agent_memory.domain.models import Keyword


class ThrottlingDynamo:
    """A DynamoDB client whose writes are throttled; reads pass through to the real (moto) client."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def transact_write_items(self, **_: Any) -> None:
        raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
                          "TransactWriteItems")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class ThrottlingAfter(ThrottlingDynamo):
    """Lets the first `allowed` transactions through, then throttles every write."""

    def __init__(self, client: Any, allowed: int) -> None:
        super().__init__(client)
        self.allowed = allowed

    def transact_write_items(self, **kwargs: Any) -> None:
        if self.allowed <= 0:
            super().transact_write_items(**kwargs)
        self.allowed -= 1
        self._client.transact_write_items(**kwargs)


# 60 keyword items each: two such memories are more than one transaction's 100 actions, so a batch of them
# is written a transaction per memory and a fault can fall between two of its items.
ONE_TRANSACTION_EACH = [Keyword(term=f"kw{i}") for i in range(60)]
