"""Offline, statistical keyword extraction (the LLM supplies keywords when a provider is configured).

Keywords are whole units a person would search for ("高才通B类", "python", "support group"), with
weights in [0, 1]: earlier, longer and repeated terms weigh more. The PRD's keyword match then
compares them exactly, by prefix (高才通 finds 高才通B类) or through synonyms.
"""

from __future__ import annotations

import re
import unicodedata

from agent_memory.domain.models import Keyword
from agent_memory.domain.text import STOPWORDS

# Function characters and words that end a Chinese keyword phrase.
_ZH_BREAKS = re.compile(
    r"(?:我们|你们|他们|她们|它们|这个|那个|什么|因为|所以|但是|而且|如果|已经|非常|比较|可以|需要|希望|觉得|"
    r"大概|目前|现在|用户|一个|一些|还是|或者|以及|关于|对于|"
    r"[的了是在我你他她它和与及或也都就还把被给对从到向于很太会能要想说着过吗呢吧啊呀哦嗯有没不这那约为])"
)
_ZH_PHRASE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+(?:[A-Za-z0-9]+[\u3400-\u4dbf\u4e00-\u9fff]*)?")
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9+#.\-']*[A-Za-z0-9+#]|[A-Za-z]{2,}")


def normalize_keyword(term: str) -> str:
    return unicodedata.normalize("NFKC", term).strip().casefold()


def extract_keywords(content: str, *, max_keywords: int = 5, min_weight: float = 0.3) -> list[Keyword]:
    text = unicodedata.normalize("NFKC", content)
    scores: dict[str, float] = {}
    position = 0
    for match in _ZH_PHRASE.finditer(text):
        for phrase in _ZH_BREAKS.split(match.group()):
            if 2 <= len(phrase) <= 16:
                scores[phrase.casefold()] = scores.get(phrase.casefold(), 0.0) + _score(len(phrase), position, 2.0)
                position += 1
    for match in _LATIN.finditer(text):
        word = match.group().casefold().strip("'.-")
        if len(word) >= 3 and word not in STOPWORDS:
            scores[word] = scores.get(word, 0.0) + _score(min(len(word), 10), position, 4.0)
            position += 1
    if not scores:
        return []
    top = sorted(scores.items(), key=lambda kv: -kv[1])[:max_keywords]
    best = top[0][1]
    keywords = [Keyword(term=term, weight=round(score / best, 3)) for term, score in top]
    return [k for k in keywords if k.weight >= min_weight]


def _score(length: int, position: int, length_unit: float) -> float:
    # Longer terms are more specific; earlier ones are usually the subject.
    return min(1.0, length / length_unit) * (1.0 / (1.0 + 0.1 * position))
