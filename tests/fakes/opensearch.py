"""OpenSearch indexes as older versions of the adapter made them."""

from __future__ import annotations

from typing import Any

from agent_memory.adapters.opensearch.admin import index_body


def legacy_index(client: Any, alias: str, dimension: int | None) -> str:
    """A physical index as ensure_index made it before the `text` field and its analyser, behind `alias`: the
    adapter searches its older fields. osmem-server runs only this kind (it has no custom analysers)."""
    body = index_body(dimension)
    del body["mappings"]["properties"]["text"]
    del body["settings"]["analysis"]
    client.indices.create(index=f"{alias}-v0", body=body)
    client.indices.put_alias(index=f"{alias}-v0", name=alias)
    return f"{alias}-v0"
