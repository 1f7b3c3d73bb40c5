"""The TransactWriteItems actions that store a decided save, and how saves are grouped into transactions.

Every action carries the condition that keeps concurrent writers safe: a new memory and its content
marker must not exist yet, the field pointer must still name the memory the save retires, and the
retired memory must still be current.
"""

from __future__ import annotations

from typing import Any

from agent_memory.adapters.dynamodb.items import memory_to_item, to_item, ttl_seconds
from agent_memory.domain.keys import content_sort_key, field_sort_key, keyword_sort_key, memory_sort_key, partition_key
from agent_memory.domain.models import Keyword, Memory, SaveOutcome, SaveResult
from agent_memory.domain.text.keywords import normalize_keyword

# DynamoDB's limits on one TransactWriteItems: 100 actions and 4 MB (kept well under, for the item overhead).
MAX_TRANSACTION_ACTIONS = 100
MAX_TRANSACTION_BYTES = 2_000_000


def keyword_sk(term: str, memory_key: str) -> str:
    return keyword_sort_key(normalize_keyword(term), memory_key)


def unique_keywords(memory: Memory) -> list[Keyword]:
    """One keyword item per distinct normalised term (a transaction may not touch an item twice)."""
    seen: dict[str, Keyword] = {}
    for keyword in memory.keywords:
        seen.setdefault(normalize_keyword(keyword.term), keyword)
    return list(seen.values())


def save_writes(table: str, result: SaveResult) -> list[dict[str, Any]]:
    """What storing a decided save takes, the user's version bump aside (nothing for a duplicate)."""
    if result.outcome is SaveOutcome.DUPLICATE:
        return []
    new, retired = result.memory, result.superseded
    pk = partition_key(new)
    # The items that find a memory go with it: its retention's TTL on each.
    ttl = {"expires_at": ttl_seconds(new.expires_at)} if new.expires_at is not None else {}
    actions: list[dict[str, Any]] = [
        {"Put": {"TableName": table, "Item": memory_to_item(new), "ConditionExpression": "attribute_not_exists(pk)"}},
        {
            "Put": {
                "TableName": table,
                "Item": to_item(
                    {"pk": pk, "sk": content_sort_key(new.content_hash), "kind": "content",
                     "memory_key": new.memory_key, **ttl}
                ),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
    ]
    if new.field:
        pointer: dict[str, Any] = {
            "TableName": table,
            "Item": to_item(
                {
                    "pk": pk,
                    "sk": field_sort_key(new.field),
                    "kind": "field",
                    "memory_key": new.memory_key,
                    "updated_at": new.updated_at.isoformat(),
                    **ttl,
                }
            ),
        }
        if retired is None:
            pointer["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            pointer["ConditionExpression"] = "memory_key = :previous"
            pointer["ExpressionAttributeValues"] = to_item({":previous": retired.memory_key})
        actions.append({"Put": pointer})
    if retired is not None and retired.superseded_at is not None:
        actions.append(
            {
                "Update": {
                    "TableName": table,
                    "Key": to_item({"pk": pk, "sk": memory_sort_key(retired.memory_key)}),
                    "UpdateExpression": "SET superseded_at = :at, superseded_by = :by, updated_at = :updated",
                    "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(superseded_at)",
                    "ExpressionAttributeValues": to_item(
                        {
                            ":at": retired.superseded_at.isoformat(),
                            ":by": retired.superseded_by,
                            ":updated": retired.updated_at.isoformat(),
                        }
                    ),
                }
            }
        )
        actions.append(delete_if_points_to(table, pk, content_sort_key(retired.content_hash), retired.memory_key))
        actions.extend(keyword_deletes(table, pk, retired))
    actions.extend(
        {
            "Put": {
                "TableName": table,
                "Item": to_item(
                    {
                        "pk": pk,
                        "sk": keyword_sk(keyword.term, new.memory_key),
                        "kind": "keyword",
                        "memory_key": new.memory_key,
                        "keyword": keyword.term,
                        "weight": f"{keyword.weight:.4f}",
                        "extraction_source": _keyword_source(new),
                        **ttl,
                    }
                ),
            }
        }
        for keyword in unique_keywords(new)
    )
    return actions


def _keyword_source(memory: Memory) -> str:
    """Who chose the keywords, as `metadata.keyword_source` says (free-form metadata: anything but text is "system")."""
    source = memory.metadata.get("keyword_source")
    return source if isinstance(source, str) and source else "system"


def written_bytes(result: SaveResult) -> int:
    """Roughly what a save adds to a transaction's size: its new memory, embedding included, twice (the memory
    and its copy in the change log), and the version it retires as the log records it."""
    if result.outcome is SaveOutcome.DUPLICATE:
        return 0

    def size(memory: Memory) -> int:
        return len(memory.model_dump_json()) + len(memory.embedding or b"")

    return 2 * size(result.memory) + (size(result.superseded) if result.superseded is not None else 0)


def touched_items(actions: list[dict[str, Any]]) -> set[str]:
    """The sort keys these actions write (one transaction may touch an item once)."""
    touched = set()
    for action in actions:
        body = next(iter(action.values()))
        touched.add(str((body.get("Item") or body["Key"])["sk"]["S"]))
    return touched


def keyword_deletes(table: str, pk: str, memory: Memory) -> list[dict[str, Any]]:
    return [
        {"Delete": {"TableName": table, "Key": to_item({"pk": pk, "sk": keyword_sk(k.term, memory.memory_key)})}}
        for k in unique_keywords(memory)
    ]


def delete_if_points_to(table: str, pk: str, sk: str, memory_key: str, *, or_absent: bool = False) -> dict[str, Any]:
    condition = "attribute_not_exists(pk) OR memory_key = :key" if or_absent else "memory_key = :key"
    return {
        "Delete": {
            "TableName": table,
            "Key": to_item({"pk": pk, "sk": sk}),
            "ConditionExpression": condition,
            "ExpressionAttributeValues": to_item({":key": memory_key}),
        }
    }

