"""Text analysis: tokens and stems, CJK bigrams, keywords, synonyms, topics, token estimates, placeholders and the
sentences an extraction skipped."""
