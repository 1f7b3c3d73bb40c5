"""Search: BM25, hybrid blending, ranking and its absolute relevance, diversity, recall rounds, conversation
neighbours, time cues, vectors and the search index's snapshots and changes."""
