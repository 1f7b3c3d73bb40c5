"""Index administration, run at deploy time or by hand, never from a constructor.

    python -m agent_memory.adapters.opensearch.admin ensure    # create index + alias if missing
    python -m agent_memory.adapters.opensearch.admin ensure --backfill   # ... and fill a new one from the table
    python -m agent_memory.adapters.opensearch.admin reindex   # rebuild from DynamoDB, swap the alias

The alias (settings.opensearch_index) is what the application reads and writes; it points at one
versioned physical index (``<alias>-v<timestamp>``), so a rebuild never interrupts search.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from agent_memory.adapters.dynamodb.items import memory_from_item
from agent_memory.adapters.opensearch.documents import document_id, with_current_embeddings
from agent_memory.adapters.opensearch.index import (
    LINK_FIELDS,
    MEMORY_TEXT_ANALYZER,
    OpenSearchIndex,
    add_missing_properties,
    dimension_mismatch,
)
from agent_memory.domain.keys import MEMORY_PREFIX
from agent_memory.domain.models import Memory
from agent_memory.domain.text.text import STOPWORDS
from agent_memory.errors import SearchIndexMismatch
from agent_memory.ports import Embedder

if TYPE_CHECKING:
    from types_boto3_dynamodb.client import DynamoDBClient

Engine = Literal["lucene", "faiss"]
_BATCH = 200


def memory_text_analyzer() -> dict[str, Any]:
    """The serverless tier's analyser (domain/text/text.tokenize) in OpenSearch's terms: CJK character bigrams (a
    lone character stays a unigram), Latin words lower-cased, possessives cut, our stop words dropped, then
    Snowball's English stems. The same tokens on both tiers mean the same BM25 candidates."""
    return {
        "analyzer": {"memory_text": {"type": "custom", "tokenizer": "standard", "filter": [
            "cjk_width", "lowercase", "cjk_bigram", "memory_possessive", "memory_stop", "memory_stem"]}},
        "filter": {
            "memory_possessive": {"type": "stemmer", "language": "possessive_english"},
            "memory_stop": {"type": "stop", "stopwords": sorted(STOPWORDS)},
            "memory_stem": {"type": "snowball", "language": "English"},
        },
    }


def index_body(dimension: int | None, *, engine: Engine = "lucene") -> dict[str, Any]:
    """Settings and mapping of a physical index. `dimension=None`: no vector field (keyword-only)."""
    text = {"type": "text", "analyzer": "cjk", "fields": {"english": {"type": "text", "analyzer": "english"}}}
    properties: dict[str, Any] = {
        "doc_id": {"type": "keyword"},
        "tenant_id": {"type": "keyword"},
        "user_id": {"type": "keyword"},
        "memory_key": {"type": "keyword"},
        "memory_type": {"type": "keyword"},
        "category": {"type": "keyword"},
        "field": {"type": "keyword"},
        "created_at": {"type": "date"},
        # What BM25 searches: the memory's searchable text, analysed as the serverless tier analyses it.
        "text": {"type": "text", "analyzer": MEMORY_TEXT_ANALYZER},
        # Kept for indexes made before `text` (searched until `make reindex` rebuilds them).
        "content": text,
        "extras": text,
        "embedding_model": {"type": "keyword"},
        # Stored for rebuilding the Memory, never searched.
        "memory": {"type": "object", "enabled": False},
        **LINK_FIELDS,
    }
    settings: dict[str, Any] = {"analysis": memory_text_analyzer()}
    if dimension is not None:
        settings["index"] = {"knn": True}
        properties["embedding"] = {
            "type": "knn_vector",
            "dimension": dimension,
            # HNSW with cosine; lucene and faiss both filter inside the graph search.
            "method": {"name": "hnsw", "engine": engine, "space_type": "cosinesimil",
                       "parameters": {"m": 16, "ef_construction": 128}},
        }
    return {"settings": settings, "mappings": {"dynamic": "strict", "properties": properties}}


def _new_index_name(alias: str) -> str:
    return f"{alias}-v{datetime.now(UTC).strftime('%Y%m%d%H%M%S%f')}"


def _alias_target(client: Any, alias: str) -> str | None:
    if not client.indices.exists_alias(name=alias):
        return None
    targets = sorted(client.indices.get_alias(name=alias))
    return targets[0] if targets else None


def ensure_index(client: Any, alias: str, dimension: int | None, *, engine: Engine = "lucene") -> str:
    """Create a physical index and point `alias` at it, unless the alias exists (its index then gains the
    fields of the current mapping it lacks); returns the index. An index whose vectors have another dimension
    than `dimension` is refused (SearchIndexMismatch, naming the reindex): it could never match a query."""
    existing = _alias_target(client, alias)
    if existing is not None:
        indexed = vector_dimension(client, existing)
        if dimension is not None and indexed is not None and indexed != dimension:
            raise dimension_mismatch(dimension, indexed)
        add_missing_properties(client, alias, LINK_FIELDS)
        return existing
    if client.indices.exists(index=alias):
        raise RuntimeError(f"{alias} is a concrete index, not an alias: reindex into a new name first")
    name = _new_index_name(alias)
    client.indices.create(index=name, body=index_body(dimension, engine=engine))
    client.indices.put_alias(index=name, name=alias)
    return name


def vector_dimension(client: Any, index: str) -> int | None:
    """The dimension of the index's vector field, or None when it has none."""
    mapping = client.indices.get_mapping(index=index)[index]["mappings"].get("properties", {})
    embedding = mapping.get("embedding")
    return int(embedding["dimension"]) if embedding else None


def current_memory_items(dynamodb_client: DynamoDBClient, table_name: str) -> Iterator[dict[str, Any]]:
    """Every current memory item of the table (all tenants), page by page."""
    params: dict[str, Any] = {
        "TableName": table_name,
        "FilterExpression": "begins_with(sk, :mem) AND attribute_not_exists(superseded_at)",
        "ExpressionAttributeValues": {":mem": {"S": MEMORY_PREFIX}},
    }
    while True:
        page = dynamodb_client.scan(**params)
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _with_progress(items: Iterator[dict[str, Any]], dynamodb_client: DynamoDBClient, table_name: str
                   ) -> Iterator[dict[str, Any]]:
    """A progress bar with an ETA on stderr where tqdm is installed (the operator's machine; the Lambda layer
    has no use for it). The total is the table's approximate item count (DynamoDB refreshes it ~6-hourly)."""
    try:
        from tqdm import tqdm
    except ImportError:
        yield from items
        return
    try:
        total = int(dynamodb_client.describe_table(TableName=table_name)["Table"].get("ItemCount") or 0) or None
    except Exception:  # the count only feeds the ETA
        total = None
    yield from tqdm(items, desc="reindex: table items", total=total, unit="item", file=sys.stderr, mininterval=1.0)


def _fingerprint(memory_json: dict[str, Any]) -> str:
    # embedding_model is left out: the index holds the re-embedded copy of a stale-vector memory.
    kept = {k: v for k, v in memory_json.items() if k != "embedding_model"}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def indexed_documents(client: Any, index: str) -> dict[str, str]:
    """doc_id -> fingerprint of the indexed Memory, paged with search_after (Serverless has no scroll)."""
    found: dict[str, str] = {}
    body: dict[str, Any] = {"size": 1000, "_source": ["doc_id", "memory"], "sort": [{"doc_id": "asc"}],
                            "query": {"match_all": {}}}
    while True:
        hits = client.search(index=index, body=body)["hits"]["hits"]
        found.update((hit["_source"]["doc_id"], _fingerprint(hit["_source"]["memory"])) for hit in hits)
        if len(hits) < body["size"]:
            return found
        body["search_after"] = hits[-1]["sort"]


def make_searchable(client: Any, index: str, documents: int, *, timeout: float = 120.0) -> None:
    """Wait until what was written to `index` can be searched: a refresh where the engine has one (a domain, a
    local node); OpenSearch Serverless has none and makes writes searchable within seconds, so there the count
    is polled until it reaches `documents`. The reindex reads its first pass back: unsearchable writes would
    look missing, be embedded again, and hide the documents the catch-up must delete."""
    try:
        client.indices.refresh(index=index)
        return
    except Exception:  # Serverless: no refresh API
        pass
    deadline = time.monotonic() + timeout
    while int(client.count(index=index)["count"]) < documents:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{index}: fewer than {documents} documents searchable after {timeout:g} s")
        time.sleep(1.0)


def _index_table(dynamodb_client: DynamoDBClient, table_name: str, index: OpenSearchIndex, embedder: Embedder | None,
                 *, unchanged: dict[str, str] | None = None) -> set[str]:
    """Upsert every current memory of the table, except those indexed exactly as they are now
    (`unchanged`: doc_id -> fingerprint), so nothing is embedded twice; returns the table's doc_ids."""
    seen: set[str] = set()
    batch: list[Memory] = []

    def flush() -> None:
        index.bulk_upsert(with_current_embeddings(batch, embedder))
        batch.clear()

    for item in _with_progress(current_memory_items(dynamodb_client, table_name), dynamodb_client, table_name):
        memory = memory_from_item(item)
        doc_id = document_id(memory.tenant_id, memory.user_id, memory.memory_key)
        seen.add(doc_id)
        if unchanged and unchanged.get(doc_id) == _fingerprint(memory.model_dump(mode="json")):
            continue
        batch.append(memory)
        if len(batch) >= _BATCH:
            flush()
    if batch:
        flush()
    return seen


def reindex_from_table(dynamodb_client: DynamoDBClient, table_name: str, os_client: Any, alias: str,
                       embedder: Embedder | None, *, engine: Engine = "lucene", custom_ids: bool = True,
                       delete_old: bool = True) -> str:
    """Rebuild the index from DynamoDB into a fresh physical index, then swap the alias to it.

    The stream indexer keeps writing through the alias (to the old index) while the table is
    scanned, so after the swap a second pass catches up: it upserts the current memories that
    changed since the first pass and deletes the documents that were in the new index before the
    pass but are no longer current. Documents the indexer adds after the swap are never touched
    by that clean-up (they were not in the snapshot it deletes from).
    """
    new_index = _new_index_name(alias)
    os_client.indices.create(index=new_index, body=index_body(embedder.dimension if embedder else None,
                                                               engine=engine))
    first_pass = _index_table(dynamodb_client, table_name, OpenSearchIndex(client=os_client, alias=new_index,
                                                                           custom_ids=custom_ids), embedder)
    make_searchable(os_client, new_index, len(first_pass))
    old_index = _alias_target(os_client, alias)
    actions: list[dict[str, Any]] = [{"add": {"index": new_index, "alias": alias}}]
    if old_index is not None:
        actions.insert(0, {"remove": {"index": old_index, "alias": alias}})
    os_client.indices.update_aliases(body={"actions": actions})  # atomic: readers see one or the other

    # Catch-up pass through the alias, over changes made while the first pass ran.
    live = OpenSearchIndex(client=os_client, alias=alias, custom_ids=custom_ids)
    before = indexed_documents(os_client, new_index)
    current = _index_table(dynamodb_client, table_name, live, embedder, unchanged=before)
    for doc_id in sorted(set(before) - current):
        live.delete_document(doc_id)
    if delete_old and old_index is not None:
        os_client.indices.delete(index=old_index)
    return new_index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_memory.adapters.opensearch.admin")
    parser.add_argument("command", choices=["ensure", "reindex"])
    parser.add_argument("--engine", choices=["lucene", "faiss"], default="lucene")
    parser.add_argument("--keep-old", action="store_true", help="reindex: keep the previous physical index")
    parser.add_argument("--backfill", action="store_true",
                        help="ensure: a newly created index is filled with the table's current memories")
    args = parser.parse_args(argv)

    import boto3

    from agent_memory.adapters.embeddings import build_embedder
    from agent_memory.adapters.opensearch.index import make_client
    from agent_memory.settings import get_settings

    settings = get_settings()
    if not settings.opensearch_endpoint:
        print("OPENSEARCH_ENDPOINT is not set: the serverless search tier needs no index", file=sys.stderr)
        return 2
    client = make_client(settings)
    embedder = build_embedder(settings)
    if args.command == "ensure":
        existed = _alias_target(client, settings.opensearch_index) is not None
        try:
            name = ensure_index(client, settings.opensearch_index, embedder.dimension if embedder else None,
                                engine=args.engine)
        except SearchIndexMismatch as error:
            print(error.message, file=sys.stderr)
            return 1
        if args.backfill and not existed:
            backfilled = _index_table(boto3.client("dynamodb", region_name=settings.aws_region),
                                      settings.memory_table_name,
                                      OpenSearchIndex(client=client, alias=settings.opensearch_index,
                                                      custom_ids=settings.opensearch_service != "aoss"), embedder)
            print(f"{settings.opensearch_index}: {len(backfilled)} current memories indexed from the table")
    else:
        name = reindex_from_table(boto3.client("dynamodb", region_name=settings.aws_region),
                                  settings.memory_table_name, client, settings.opensearch_index, embedder,
                                  engine=args.engine, custom_ids=settings.opensearch_service != "aoss",
                                  delete_old=not args.keep_old)
    print(f"{settings.opensearch_index} -> {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
