"""Built-in synonyms every tenant starts with: its domain pack's (the immigration pack's: the schemes' names in
Chinese and English) and common abbreviations of technical words; tenants add their own."""

from __future__ import annotations

import re
from functools import cache

from agent_memory.domain.packs import DEFAULT_PACK, pack_named

# Every pack's, after its own.
COMMON_SYNONYMS: dict[str, tuple[str, ...]] = {
    # Abbreviations a stemmer cannot join to their words ("config" is not a stem of "configuration").
    "configuration": ("config",),
    "database": ("db",),
    "repository": ("repo",),
    "application": ("app",),
    "information": ("info",),
    "environment": ("env",),
    "production": ("prod",),
    "authentication": ("auth",),
    "documentation": ("docs",),
    "kubernetes": ("k8s",),
}
BUILTIN_SIMILARITY = 0.9


@cache
def builtin_synonyms(pack: str = DEFAULT_PACK) -> dict[str, dict[str, float]]:
    """term -> its synonyms and their similarity, every group symmetric: the pack's and the common ones. Built
    once per pack: read, never change it."""
    table: dict[str, dict[str, float]] = {}
    for head, others in [*pack_named(pack).synonyms.items(), *COMMON_SYNONYMS.items()]:
        group = (head, *others)
        for term in group:
            for other in group:
                if other != term:
                    table.setdefault(term, {})[other] = BUILTIN_SIMILARITY
    return table


def synonym_phrases(text: str, max_words: int = 5, pack: str = DEFAULT_PACK) -> list[str]:
    """Phrases of the text to look synonyms up for, beyond its keywords: every built-in term it contains
    (a name of several words, or in a script without spaces), and its runs of 2 to `max_words` words,
    which a tenant's synonyms may name."""
    folded = " ".join(text.casefold().split())
    found = [term for term in builtin_synonyms(pack) if term in folded and (" " in term or not term.isascii())]
    words = re.findall(r"[0-9a-z]+(?:['-][0-9a-z]+)*", folded)
    found += [" ".join(words[i:i + n]) for n in range(2, max_words + 1) for i in range(len(words) - n + 1)]
    return list(dict.fromkeys(found))
