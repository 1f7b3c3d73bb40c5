"""The OpenSearch search tier (managed domain or Serverless vector collection).

`index` holds the SearchIndex adapter and the client factory, `documents` the indexed form of a
memory, `sync` applies DynamoDB stream records to the index, `admin` creates and rebuilds it.
opensearch-py is imported only by `make_client`, so importing this package stays cheap.
"""

from agent_memory.adapters.opensearch.index import OpenSearchIndex, make_client, make_index

__all__ = ["OpenSearchIndex", "make_client", "make_index"]
