"""Built-in synonyms every tenant starts with (the immigration schemes' names in Chinese and English, and
common abbreviations of technical words); tenants add their own."""

from __future__ import annotations

import re
from functools import cache

BUILTIN_SYNONYMS: dict[str, tuple[str, ...]] = {
    "ttps": ("高才通", "高端人才通行证计划", "top talent pass scheme"),
    "qmas": ("优才", "优秀人才入境计划", "quality migrant admission scheme"),
    "gep": ("专才", "一般就业政策", "general employment policy"),
    "iang": ("非本地毕业生留港", "non-local graduates"),
    "cies": ("投资移民", "资本投资者入境计划", "capital investment entrant scheme"),
    "techtas": ("科技人才入境计划", "technology talent admission scheme"),
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
def builtin_synonyms() -> dict[str, dict[str, float]]:
    """term -> its synonyms and their similarity, every group symmetric. Built once: read, never change it."""
    table: dict[str, dict[str, float]] = {}
    for head, others in BUILTIN_SYNONYMS.items():
        group = (head, *others)
        for term in group:
            for other in group:
                if other != term:
                    table.setdefault(term, {})[other] = BUILTIN_SIMILARITY
    return table


def synonym_phrases(text: str, max_words: int = 5) -> list[str]:
    """Phrases of the text to look synonyms up for, beyond its keywords: every built-in term it contains
    (a name of several words, or in a script without spaces), and its runs of 2 to `max_words` words,
    which a tenant's synonyms may name."""
    folded = " ".join(text.casefold().split())
    found = [term for term in builtin_synonyms() if term in folded and (" " in term or not term.isascii())]
    words = re.findall(r"[0-9a-z]+(?:['-][0-9a-z]+)*", folded)
    found += [" ".join(words[i:i + n]) for n in range(2, max_words + 1) for i in range(len(words) - n + 1)]
    return list(dict.fromkeys(found))
