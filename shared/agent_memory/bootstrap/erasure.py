"""The erasure service's graph: the table's eraser, the OpenSearch tier's index eraser, and what the
process holds of the user dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.ports import IndexEraser, SearchIndex, TableEraser
from agent_memory.services.erasure import ErasureService
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient


def build_erasure(settings: Settings, dynamodb_client: DynamoDBClient | None, index: SearchIndex,
                  table: TableEraser | None = None) -> ErasureService:
    """`table`: the table's eraser (tests hand in a fake); else the DynamoDB one over the client."""
    from agent_memory.adapters.dynamodb.erasure import DynamoScopeEraser

    index_eraser: IndexEraser | None = None
    if settings.search_tier == "opensearch":
        from agent_memory.adapters.opensearch.erasure import OpenSearchScopeEraser
        from agent_memory.adapters.opensearch.index import make_client

        index_eraser = OpenSearchScopeEraser(client=make_client(settings), alias=settings.opensearch_index)
    if table is None:
        if dynamodb_client is None:
            raise ValueError("the table's eraser needs a DynamoDB client, or an eraser given")
        table = DynamoScopeEraser(table_name=settings.memory_table_name, client=dynamodb_client,
                                  shards=settings.rollup_shards)
    return ErasureService(
        table=table,
        index=index_eraser, forget=cache.forget if (cache := index.memory_cache()) is not None else lambda _: None,
        tombstone_days=settings.erasure_tombstone_days, receipt_days=settings.erasure_receipt_days,
        budget_seconds=settings.erasure_budget_seconds)


def erased_scopes(settings: Settings, dynamodb_client: DynamoDBClient) -> ErasureService:
    """The erasure service as a worker needs it: only to read the erased scopes' tombstones (work queued before
    its scope was erased is dropped), with no index to erase."""
    from agent_memory.adapters.dynamodb.erasure import DynamoScopeEraser

    return ErasureService(table=DynamoScopeEraser(table_name=settings.memory_table_name, client=dynamodb_client,
                                                  shards=settings.rollup_shards))
