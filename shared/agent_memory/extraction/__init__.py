"""Rule-based memory extraction: the extractor used when no LLM is configured."""

from agent_memory.extraction.extractor import OfflineExtractor

__all__ = ["OfflineExtractor"]
