"""The export and import's store: the table's archive, made on first use."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from agent_memory.ports import ScopeArchive
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient


def scope_archive(settings: Settings, dynamodb_client: DynamoDBClient | None) -> Callable[[], ScopeArchive]:
    """A provider of the table's archive: services built over fakes alone never make a client."""

    @cache
    def archive() -> ScopeArchive:
        from agent_memory.adapters.dynamodb.archive import DynamoScopeArchive
        from agent_memory.adapters.dynamodb.items import report_unavailable_store, table_client

        client = dynamodb_client
        if client is None:
            client = table_client(connect_seconds=settings.store_connect_timeout_seconds,
                                  read_seconds=settings.store_read_timeout_seconds,
                                  attempts=settings.store_call_attempts)
            report_unavailable_store(client)
        return DynamoScopeArchive(table_name=settings.memory_table_name, client=client)

    return archive
