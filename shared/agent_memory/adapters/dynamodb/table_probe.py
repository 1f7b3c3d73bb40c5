"""The health check's read of the table: one GetItem of a key nothing is ever written under (partition keys
of stored items all hold '#': see domain/keys.py), so it finds nothing, costs the least a read can (half a
read unit, eventually consistent) and needs no permission beyond the readers' GetItem."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from agent_memory.adapters.dynamodb.items import error_code
from agent_memory.errors import StoreUnavailable

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

PROBE_KEY = {"pk": {"S": "HEALTH"}, "sk": {"S": "HEALTH"}}


class DynamoTableProbe:
    def __init__(self, *, table_name: str, client: DynamoDBClient) -> None:
        self._table_name = table_name
        self._client = client

    def ping(self) -> None:
        """Returns when the table answered the read; StoreUnavailable when it did not (unreachable and 5xx
        are raised as such by the client's hooks; a missing table or a refused read here)."""
        try:
            self._client.get_item(TableName=self._table_name, Key=PROBE_KEY, ProjectionExpression="pk")
        except ClientError as error:
            code = error_code(error) or "ClientError"
            raise StoreUnavailable(f"the table refused the read: {code}", details={"code": code}) from error
