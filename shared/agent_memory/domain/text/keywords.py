"""Offline, statistical keyword extraction (the LLM supplies keywords when a provider is configured).

Keywords are whole units a person would search for ("高才通B类", "python", "support group"), with
weights in [0, 1]: earlier, longer and repeated terms weigh more. Ranking's keyword match then
compares them exactly, by prefix (高才通 finds 高才通B类) or through synonyms.
"""

from __future__ import annotations

import re
import unicodedata

from agent_memory.domain.models import Keyword
from agent_memory.domain.text.text import CJK_IDEOGRAPHS, STOPWORDS

# Function characters and words that end a Chinese keyword phrase.
_ZH_BREAKS = re.compile(
    r"(?:我们|你们|他们|她们|它们|这个|那个|什么|因为|所以|但是|而且|如果|已经|非常|比较|可以|需要|希望|觉得|"
    r"大概|目前|现在|用户|一个|一些|还是|或者|以及|关于|对于|一家|一名|一位|一所|一份|一直|非常|特别|左右|"
    r"[的了是在我你他她它和与及或也都就还把被给对从到向于很太会能要想说着过吗呢吧啊呀哦嗯有没不这那约为已])"
)
# Core concepts inside a run of characters: degrees and verbs stand alone ("硕士", "担任"), and an
# institution's name ends at its kind ("浙江大学|计算机"). Verbs are kept, weighing less than the nouns.
_ZH_VERBS = (
    "担任|从事|负责|毕业|就读|就职|任职|工作|申请|办理|准备|打算|计划|感兴趣|喜欢|递交|提交|拿到|获得|移民|居住|生活|学习"
)
_ZH_STANDALONE = re.compile(rf"(博士后|博士|硕士|本科|学士|大专|{_ZH_VERBS})")
_ZH_VERB = re.compile(rf"^(?:{_ZH_VERBS})$")
_ZH_INSTITUTION_END = re.compile(r"(?<=大学|学院|银行|公司|集团|医院|中学)")
VERB_WEIGHT = 0.6
_ZH_PHRASE = re.compile(f"[{CJK_IDEOGRAPHS}]+(?:[A-Za-z0-9]+[{CJK_IDEOGRAPHS}]*)?")
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9+#.\-']*[A-Za-z0-9+#]|[A-Za-z]{2,}")


def normalize_keyword(term: str) -> str:
    return unicodedata.normalize("NFKC", term).strip().casefold()


# A keyword is something a person would type: a word longer than this (a URL, base64, a hash) is not one.
MAX_KEYWORD_LENGTH = 40


def extract_keywords(content: str, *, max_keywords: int = 5, min_weight: float = 0.3) -> list[Keyword]:
    text = unicodedata.normalize("NFKC", content)
    scores: dict[str, float] = {}
    position = 0
    for match in _ZH_PHRASE.finditer(text):
        for phrase in _concepts(match.group()):
            if 2 <= len(phrase) <= 16:
                weight = VERB_WEIGHT if _ZH_VERB.match(phrase) else 1.0
                scores[phrase.casefold()] = scores.get(phrase.casefold(), 0.0) + weight * _score(
                    len(phrase), position, 2.0)
                position += 1
    for match in _LATIN.finditer(text):
        word = match.group().casefold().strip("'.-")
        if 3 <= len(word) <= MAX_KEYWORD_LENGTH and word not in STOPWORDS:
            scores[word] = scores.get(word, 0.0) + _score(min(len(word), 10), position, 4.0)
            position += 1
    if not scores:
        return []
    top = sorted(scores.items(), key=lambda kv: -kv[1])[:max_keywords]
    best = top[0][1]
    keywords = [Keyword(term=term, weight=round(score / best, 3)) for term, score in top]
    return [k for k in keywords if k.weight >= min_weight]


def _concepts(run: str) -> list[str]:
    """A run of Chinese split into the units a person would search for:
    "上海一家外资银行担任风险管理总监" -> 上海, 外资银行, 担任, 风险管理总监."""
    pieces = []
    for part in _ZH_STANDALONE.split(run):
        if _ZH_STANDALONE.fullmatch(part):
            pieces.append(part)
            continue
        for phrase in _ZH_BREAKS.split(part):
            pieces += [p for p in _ZH_INSTITUTION_END.split(phrase) if p]
    return pieces


def _score(length: int, position: int, length_unit: float) -> float:
    # Longer terms are more specific; earlier ones are usually the subject.
    return min(1.0, length / length_unit) * (1.0 / (1.0 + 0.1 * position))
