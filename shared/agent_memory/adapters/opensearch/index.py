"""The OpenSearch search tier: BM25 and filtered kNN candidates from a derived index.

DynamoDB is the source of truth; the index holds one document per *current* memory, written by the stream indexer
(``agent_memory.adapters.opensearch.sync``) and rebuilt by ``admin reindex``.

Every query carries the tenant + user filter; for kNN it sits *inside* the ``knn`` clause (the engine visits only the
user's vectors), never as a post-filter that could return fewer than k hits when other users' vectors are nearer.

Nothing here relies on ``refresh`` (Serverless has none): writes become visible when the engine refreshes on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from agent_memory.adapters.opensearch.documents import document_id, to_document
from agent_memory.adapters.opensearch.unindexed import unindexed_scores
from agent_memory.domain.models import Memory, ScopeRef
from agent_memory.domain.search.neighbours import previous_turns, turn_link, with_neighbours
from agent_memory.domain.search.ranking import Candidate
from agent_memory.domain.text.text import tokenize
from agent_memory.errors import AgentMemoryError, SearchIndexMismatch, SearchUnavailable, Throttled
from agent_memory.observability import logger
from agent_memory.ports import CandidateQuery, SearchIndex

if TYPE_CHECKING:
    from agent_memory.settings import Settings

MEMORY_TEXT_ANALYZER = "memory_text"  # admin.memory_text_analyzer: the serverless tier's analyser
# An index made before the `text` field searches these instead. `content` uses the built-in `cjk` analyzer
# (CJK character bigrams, like domain/text/text.tokenize, so 高才通 matches 高才通B类, plus lower-cased Latin words);
# its `english` sub-field adds stemming (runs ~ running) that `cjk` lacks. `best_fields` with a
# tie-breaker keeps the two views of one text from counting twice.
LEXICAL_FIELDS = ["content", "content.english", "extras", "extras.english"]
_TIE_BREAKER = 0.3
_SOURCE = ["memory"]  # only the rebuilt Memory comes back, never the vector
# Conversation links (domain/search/neighbours.turn_link): a transcript turn's own, and the one of the turn before it.
# Added to an index made before them on its first write (mappings only ever gain fields).
LINK_FIELDS: dict[str, Any] = {"turn_id": {"type": "keyword"}, "previous_turn_id": {"type": "keyword"}}
# Neighbours fetched per lexical hit at most (the turn before it and the turns answering it).
_NEIGHBOURS_PER_HIT = 3


class SearchIndexError(AgentMemoryError):
    """The search index rejected a write; the stream indexer reports the record as failed."""

    code = "search_index_error"


def cosine_from_score(score: float) -> float:
    """OpenSearch's cosinesimil score is (2 - d) / 2 with d = 1 - cos, i.e. (1 + cos) / 2."""
    return max(-1.0, min(1.0, 2.0 * score - 1.0))


def add_missing_properties(client: Any, index: str, properties: dict[str, Any]) -> list[str]:
    """Add to the mapping of `index` (an alias: each index behind it) the properties it lacks; the names
    added. Adding a field is the one mapping change an existing index accepts; documents indexed before
    it simply lack the field."""
    added: list[str] = []
    for name, body in client.indices.get_mapping(index=index).items():
        present = body.get("mappings", {}).get("properties", {})
        missing = {field: spec for field, spec in properties.items() if field not in present}
        if missing:
            client.indices.put_mapping(index=name, body={"properties": missing})
            added += [f"{name}.{field}" for field in missing]
    return added


REINDEX_HINT = ("rebuild it from the table with `make reindex` (deployed: python -m "
                "agent_memory.adapters.opensearch.admin reindex)")


def dimension_mismatch(expected: int, indexed: int) -> SearchIndexMismatch:
    return SearchIndexMismatch(f"the search index holds {indexed}-dimensional vectors but the embedder makes "
                               f"{expected}-dimensional ones: {REINDEX_HINT}",
                               details={"index_dimension": indexed, "embedder_dimension": expected})


def _raise_for(error: Exception) -> NoReturn:
    """Translate an opensearch-py error into a domain error, in one place: 429 is a throttle; an index
    that cannot be reached (connection refused, timeout) or answers 5xx is unavailable (503, retry); a vector
    of another dimension than the index's means the index was built for another embedder."""
    import opensearchpy

    status = getattr(error, "status_code", None)
    if status == 400 and "dimension" in str(getattr(error, "info", error)).lower():
        raise SearchIndexMismatch(f"the search index was built for another embedder (vector dimension): "
                                  f"{REINDEX_HINT}", details={"engine": str(getattr(error, "error", ""))}) from error
    if status == 429:
        raise Throttled("the search index is busy, retry shortly") from error
    unreachable = isinstance(error, opensearchpy.ConnectionError | ConnectionError | TimeoutError)
    if unreachable or (isinstance(status, int) and status >= 500):
        raise SearchUnavailable("the search index is unavailable; nothing was changed, retry shortly") from error
    raise error


class OpenSearchIndex(SearchIndex):  # the memories are in the cluster: no memory_cache
    """A SearchIndex over one alias. The client is built elsewhere (`make_client`).

    `custom_ids=False` is for OpenSearch Serverless vector collections, which reject custom
    document ids: documents are then found by their `doc_id` keyword field instead. There a
    replaced document is deleted only once the new one is written, and a search right after a
    write may not see it yet (Serverless makes writes searchable within seconds).
    """

    def __init__(self, *, client: Any, alias: str, custom_ids: bool = True) -> None:
        self._client = client
        self._alias = alias
        self._custom_ids = custom_ids
        # Checked once, before this instance's first read or write: the index has LINK_FIELDS (added when
        # missing), and whether it has the `text` field (an index made before it has not, until a reindex).
        self._mapping_checked = False
        self._memory_text = True
        self._mapping_lock = threading.Lock()

    # ---- reads --------------------------------------------------------------------------

    def candidates(self, user: ScopeRef, query: CandidateQuery) -> list[Candidate]:
        try:
            self._check_mapping()
        except Exception as error:  # opensearch-py errors: translated (or re-raised) in one place
            _raise_for(error)
        found: dict[str, Candidate] = {}
        if self._lexical_query(query) is not None:
            for hit in self._search(self.lexical_request(user, query)):
                candidate = self._candidate(found, hit)
                candidate.lexical = max(candidate.lexical or 0.0, float(hit["_score"]))
            if query.neighbour_share > 0 and found:
                self._share_with_neighbours(user, query, found)
        vector = query.query_vector()  # after the lexical request: the embedding may have run meanwhile
        if vector is not None:
            for hit in self._search(self.knn_request(user, query)):
                self._candidate(found, hit).vector = cosine_from_score(float(hit["_score"]))
            self._complete_signals(user, query, found)
        return list(found.values())

    def _complete_signals(self, user: ScopeRef, query: CandidateQuery, found: dict[str, Candidate]) -> None:
        """Each candidate with both signals, as the serverless tier gives them: the cosine of a lexical hit
        outside the kNN's k, and the BM25 score of a kNN hit outside the lexical k (none when it shares no
        word with the query). Without them such a candidate scores 0 on the signal it was not found by,
        which the ranking's normalisation reads as the worst match of all. One msearch, two requests over
        the few keys concerned (the kNN one exact: its filter leaves fewer documents than k)."""
        no_vector = sorted(key for key, c in found.items() if c.vector is None)
        no_lexical = (sorted(key for key, c in found.items() if c.lexical is None)
                      if self._lexical_query(query) is not None else [])
        requests = []
        if no_vector:
            requests.append(("vector", self.knn_request(user, query, only=no_vector)))
        if no_lexical:
            requests.append(("lexical", self.lexical_request(user, query, only=no_lexical)))
        if not requests:
            return
        try:
            body = [line for _, request in requests for line in ({}, request)]
            responses = self._client.msearch(index=self._alias, body=body)["responses"]
        except Exception as error:  # opensearch-py errors: translated (or re-raised) in one place
            _raise_for(error)
        for (signal, _), response in zip(requests, responses, strict=True):
            if "error" in response:
                raise SearchIndexError("the search index refused a request", details=response["error"])
            for hit in response.get("hits", {}).get("hits", []):
                candidate = found.get(str(hit["_source"]["memory_key"]))
                if candidate is None:
                    continue
                if signal == "vector":
                    candidate.vector = cosine_from_score(float(hit["_score"]))
                elif candidate.lexical is None:
                    candidate.lexical = float(hit["_score"])

    def vectors(self, user: ScopeRef, memory_keys: list[str]) -> dict[str, np.ndarray]:
        """One request for the few memories a ranking diversifies (their vectors stay out of the candidate
        requests: a hundred of them per query would be most of the response)."""
        if not memory_keys:
            return {}
        hits = self._search({
            "size": 2 * len(memory_keys), "_source": ["memory_key", "embedding"],  # a memory may briefly have two
            "query": {"bool": {"filter": [{"term": {"tenant_id": user.tenant_id}}, {"term": {"user_id": user.user_id}},
                                          {"terms": {"memory_key": sorted(set(memory_keys))}}]}},
        })
        found: dict[str, np.ndarray] = {}
        for hit in hits:
            source = hit.get("_source") or {}
            if source.get("embedding"):
                vector = np.asarray(source["embedding"], dtype=np.float32)
                norm = float(np.linalg.norm(vector))
                if norm > 0:
                    found[str(source["memory_key"])] = vector / norm
        return found

    def nearest(self, user: ScopeRef, vectors: np.ndarray, k: int) -> list[list[Candidate]]:
        """One msearch: a kNN request per vector. A memory saved a moment ago may not be searchable yet."""
        if not len(vectors) or k <= 0:
            return [[] for _ in range(len(vectors))]
        try:
            self._check_mapping()
            body = [line for vector in vectors
                    for line in ({}, self.knn_request(user, CandidateQuery(text="", vector=vector, k=k)))]
            responses = self._client.msearch(index=self._alias, body=body)["responses"]
        except Exception as error:  # opensearch-py errors: translated (or re-raised) in one place
            _raise_for(error)
        found = []
        for response in responses:
            if "error" in response:
                raise SearchIndexError("the search index refused a request", details=response["error"])
            hits: dict[str, Candidate] = {}
            for hit in response.get("hits", {}).get("hits", []):
                self._candidate(hits, hit).vector = cosine_from_score(float(hit["_score"]))
            found.append(list(hits.values()))
        return found

    def _share_with_neighbours(self, user: ScopeRef, query: CandidateQuery, found: dict[str, Candidate]) -> None:
        """The serverless tier's neighbour sharing (domain/search/neighbours.py) over the lexical hits: their
        conversation neighbours are fetched, then every one adds `neighbour_share` of its best neighbour's
        BM25 score. A neighbour outside the hits counts as scoring 0 itself (it ranked below them), so a
        turn answering a hit becomes a candidate through the hit alone."""
        request = self.neighbours_request(user, query, [c.memory for c in found.values()])
        if request is None:
            return
        for hit in self._search(request):
            self._candidate(found, hit)
        candidates = list(found.values())
        own = np.array([c.lexical or 0.0 for c in candidates], dtype=np.float32)
        shared = with_neighbours(own, previous_turns([c.memory for c in candidates]), query.neighbour_share)
        for candidate, score in zip(candidates, shared, strict=True):
            candidate.lexical = float(score) if score > 0 else None

    def neighbours_request(self, user: ScopeRef, query: CandidateQuery, hits: list[Memory]) -> dict[str, Any] | None:
        """The turns before the hits and the turns answering them, under the query's filters; None when no
        hit is a transcript turn."""
        before = sorted({turn_link(m.conversation_id, m.context) for m in hits if m.conversation_id and m.context})
        own = sorted({turn_link(m.conversation_id, m.content) for m in hits if m.conversation_id})
        if not own:
            return None
        linked = [{"terms": {"turn_id": before}}] if before else []
        linked.append({"terms": {"previous_turn_id": own}})
        return {
            "size": _NEIGHBOURS_PER_HIT * len(hits),
            "_source": _SOURCE,
            "query": {"bool": {"filter": [*self.filters(user, query),
                                          {"bool": {"should": linked, "minimum_should_match": 1}}]}},
        }

    @staticmethod
    def filters(user: ScopeRef, query: CandidateQuery) -> list[dict[str, Any]]:
        """Tenant + user always; memory types and the creation window when asked for."""
        clauses: list[dict[str, Any]] = [
            {"term": {"tenant_id": user.tenant_id}},
            {"term": {"user_id": user.user_id}},
        ]
        if query.memory_types:
            clauses.append({"terms": {"memory_type": [t.value for t in query.memory_types]}})
        window: dict[str, str] = {}
        if query.created_from:
            window["gte"] = query.created_from.isoformat()
        if query.created_to:
            window["lte"] = query.created_to.isoformat()
        if window:
            clauses.append({"range": {"created_at": window}})
        expired = [{"bool": {"filter": [{"term": {"memory_type": t.value}}, {"range": {"created_at": {
            "lt": cutoff.isoformat()}}}]}} for t, cutoff in sorted(query.expired_before.items())]
        return [*clauses, {"bool": {"must_not": expired}}] if expired else clauses

    def lexical_request(self, user: ScopeRef, query: CandidateQuery, *, only: list[str] | None = None
                        ) -> dict[str, Any]:
        """BM25 over the user's memories (`only`: over these memory keys)."""
        filters = self.filters(user, query) + ([{"terms": {"memory_key": only}}] if only else [])
        return {
            "size": len(only) if only else query.k,
            "_source": ["memory_key"] if only else _SOURCE,
            "query": {"bool": {"must": [self._lexical_query(query)], "filter": filters}},
        }

    def _lexical_query(self, query: CandidateQuery) -> dict[str, Any] | None:
        """The BM25 clause, or None when the query has nothing to match. Over `text`: each distinct analysed
        query term (the query's, its keywords' and synonyms') once, their scores summed, as the serverless
        tier's BM25 does; on an index made before `text`, the query over the older fields."""
        if not self._memory_text:
            if not query.text.strip():
                return None
            return {"multi_match": {"query": query.text, "fields": LEXICAL_FIELDS, "type": "best_fields",
                                    "tie_breaker": _TIE_BREAKER}}
        terms = list(dict.fromkeys(query.terms or tokenize(query.text)))
        if not terms:
            return None
        return {"bool": {"should": [{"term": {"text": term}} for term in terms], "minimum_should_match": 1}}

    def knn_request(self, user: ScopeRef, query: CandidateQuery, *, only: list[str] | None = None
                    ) -> dict[str, Any]:
        """The nearest of the user's memories (`only`: the similarity of these memory keys, all of them)."""
        vector = query.query_vector()
        if vector is None:
            raise ValueError("knn_request needs query.vector")
        filters = self.filters(user, query) + ([{"terms": {"memory_key": only}}] if only else [])
        k = len(only) if only else query.k
        return {
            "size": k,
            "_source": ["memory_key"] if only else _SOURCE,
            "query": {
                "knn": {
                    "embedding": {
                        "vector": [float(x) for x in vector],
                        "k": k,
                        # Inside the clause: filtered during the graph search, not after it.
                        "filter": {"bool": {"filter": filters}},
                    }
                }
            },
        }

    def unindexed_lexical(self, query: CandidateQuery, texts: list[str]) -> list[float | None]:
        """The BM25 score each text (a memory not indexed yet) will get for the query once indexed (unindexed.py);
        None where no term matches, or on an index made before `text` (no statistics of it to lend)."""
        terms = list(dict.fromkeys(query.terms or tokenize(query.text))) if self._memory_text else []
        return unindexed_scores(self._client, self._alias, terms, texts, on_error=_raise_for)

    def _search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            response = self._client.search(index=self._alias, body=body)
        except Exception as error:  # opensearch-py errors: translated (or re-raised) in one place
            _raise_for(error)
        hits: list[dict[str, Any]] = response.get("hits", {}).get("hits", [])
        return hits

    @staticmethod
    def _candidate(found: dict[str, Candidate], hit: dict[str, Any]) -> Candidate:
        memory = Memory.model_validate(hit["_source"]["memory"])
        # Keyed by memory_key: on Serverless a memory can briefly have two documents.
        if memory.memory_key not in found:
            found[memory.memory_key] = Candidate(memory=memory)
        return found[memory.memory_key]

    # ---- writes -------------------------------------------------------------------------

    def upsert(self, memory: Memory) -> None:
        self.bulk_upsert([memory])

    def bulk_upsert(self, memories: Iterable[Memory]) -> None:
        """Index current memories (a superseded one is removed instead: only current ones are indexed)."""
        memories = list(memories)
        current = [m for m in memories if m.is_current]
        for gone in (m for m in memories if not m.is_current):
            self.delete(gone.tenant_id, gone.user_id, gone.memory_key)
        if not current:
            return
        try:
            self._check_mapping()
        except Exception as error:  # the write itself then fails and is retried like any other
            logger.warning("search index mapping check failed", error_type=type(error).__name__)
        replaced = [] if self._custom_ids else self._existing_ids([to_document(m)["doc_id"] for m in current])
        operations: list[dict[str, Any]] = []
        for memory in current:
            doc = to_document(memory)
            # The fields this index searches: `text`, or on an index made before it (whose strict mapping
            # would refuse a document carrying it) the older ones.
            for unsearched in (("content", "extras") if self._memory_text else ("text",)):
                del doc[unsearched]
            action: dict[str, Any] = {"_id": doc["doc_id"]} if self._custom_ids else {}
            operations += [{"index": action}, doc]
        self._bulk(operations)
        if replaced:
            self._bulk([{"delete": {"_id": _id}} for _id in replaced])

    def _check_mapping(self) -> None:
        """Once per instance: an index made before LINK_FIELDS (its mapping is strict) would refuse documents
        carrying them, so they are added to it; an index made before the `text` field (whose analyser can
        only be set at creation) is searched and written without it until `make reindex` rebuilds it."""
        if self._mapping_checked:
            return
        with self._mapping_lock:
            if self._mapping_checked:
                return
            added = add_missing_properties(self._client, self._alias, LINK_FIELDS)
            if added:
                logger.info("search index mapping extended", fields=added)
            mappings = self._client.indices.get_mapping(index=self._alias).values()
            self._memory_text = all(
                body.get("mappings", {}).get("properties", {}).get("text", {}).get("analyzer") == MEMORY_TEXT_ANALYZER
                for body in mappings)
            if not self._memory_text:
                logger.warning("search index made before the memory_text analyser: BM25 differs from the "
                               "serverless tier's until `make reindex`", index=self._alias)
            self._mapping_checked = True

    def delete(self, tenant_id: str, user_id: str, memory_key: str) -> None:
        self.delete_document(document_id(tenant_id, user_id, memory_key))

    def delete_document(self, doc_id: str) -> None:
        ids = [doc_id] if self._custom_ids else self._existing_ids([doc_id])
        if ids:
            self._bulk([{"delete": {"_id": _id}} for _id in ids])

    def _existing_ids(self, doc_ids: list[str]) -> list[str]:
        """Engine ids of the documents holding these doc_ids (Serverless: no custom ids)."""
        body = {"size": 10 * len(doc_ids), "_source": False,
                "query": {"bool": {"filter": [{"terms": {"doc_id": doc_ids}}]}}}
        return [hit["_id"] for hit in self._search(body)]

    def _bulk(self, operations: list[dict[str, Any]]) -> None:
        try:
            response = self._client.bulk(index=self._alias, body=operations)
        except Exception as error:
            _raise_for(error)
        if not response.get("errors"):
            return
        failures = []
        for item in response.get("items", []):
            (op, result), = item.items()
            status = int(result.get("status", 200))
            if op == "delete" and status == 404:
                continue  # already gone: deletes are idempotent
            if status >= 300:
                failures.append({"op": op, "status": status, "error": result.get("error")})
        if any(f["status"] == 429 for f in failures):
            raise Throttled("the search index is busy, retry shortly")
        if any("dimension" in str(f["error"]).lower() for f in failures):
            raise SearchIndexMismatch(f"the search index was built for another embedder (vector dimension): "
                                      f"{REINDEX_HINT}", details=failures[:5])
        if failures:
            raise SearchIndexError(f"{len(failures)} index operation(s) failed", details=failures[:5])


def make_client(settings: Settings) -> Any:
    """An opensearch-py client: SigV4-signed for AWS endpoints (es or aoss), plain for local servers."""
    from urllib.parse import urlparse

    from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

    endpoint = settings.opensearch_endpoint
    if "://" not in endpoint:
        endpoint = ("https://" if settings.opensearch_use_ssl else "http://") + endpoint
    url = urlparse(endpoint)
    host = url.hostname or ""
    common: dict[str, Any] = {"timeout": 10, "max_retries": 3, "retry_on_status": (429, 502, 503, 504)}
    if url.scheme == "https" and (host.endswith(".amazonaws.com") or host.endswith(".amazonaws.com.cn")):
        import boto3

        auth = AWSV4SignerAuth(boto3.Session().get_credentials(), settings.aws_region, settings.opensearch_service)
        return OpenSearch(hosts=[{"host": host, "port": url.port or 443}], http_auth=auth, use_ssl=True,
                          verify_certs=True, connection_class=RequestsHttpConnection, **common)
    return OpenSearch(hosts=[endpoint], **common)


def make_index(settings: Settings, client: Any = None) -> OpenSearchIndex:
    """The configured index; Serverless collections take no custom document ids."""
    return OpenSearchIndex(client=client if client is not None else make_client(settings),
                           alias=settings.opensearch_index, custom_ids=settings.opensearch_service != "aoss")
