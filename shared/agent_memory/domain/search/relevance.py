"""Absolute relevance: how likely a memory answers a query, in [0, 1], comparable across queries and users.

The ranking's own relevance is relative: BM25 and vector similarity are normalised over one search's
candidates, so the best candidate of an off-topic query scores as high as the best of an on-topic one and a
floor on it can never say "nothing here". A raw cosine cannot say it either: the bundled e5 model puts every
pair of texts between ~0.7 and ~0.9, and some queries are close to everything. So the semantic evidence is the
cosine's margin over the query's best match among a few everyday sentences about nothing in particular
(BACKGROUND): a memory must be closer to the query than generic text is. The lexical evidence is the share of
the query's terms (domain/text/text.tokenize: stemmed words, CJK bigrams) the memory holds: in its text, its
keywords or its category, or through one of the term's synonyms (a memory about 月薪 holds a query's 工资 when the
two are synonyms; one about 高才通 holds TTPS). Absolute relevance is a logistic model of the two, fitted by
`make bench-retrieval-cv` on the retrieval dev sets (an answering memory against the results of other
conversations' questions), with leave-one-conversation-out validation. The coefficients depend on the
embedder: they are settings, and a deployment that changes the embedding model fits them anew.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from agent_memory.domain.text.text import tokenize

# Sentences about nothing in particular, English and Chinese: what "not about the query" looks like to the
# embedder. Everyday ones, and ones about the world (code, science, history, cooking, repairs, money, sport):
# a question about the world rather than about the user is as close to them as to any memory, and so scores low.
BACKGROUND = (
    "The weather was nice today.", "I bought some groceries at the store.", "The meeting was moved to Tuesday.",
    "She likes to read books in the evening.", "The train was late this morning.", "We watched a movie last night.",
    "He is learning to play the piano.", "The report is due next week.", "They went to the beach on Sunday.",
    "My phone battery died.", "今天天气很好。", "我去超市买了些东西。", "会议改到了周二。", "她晚上喜欢看书。",
    "早上的火车晚点了。", "我们昨晚看了一部电影。", "他在学弹钢琴。", "报告下周要交。", "他们周日去了海边。",
    "我的手机没电了。",
    "A hash map stores key-value pairs for constant-time lookup.", "The function returns a sorted copy of the list.",
    "HTTP status code 404 means the page was not found.", "The derivative of sine is cosine.",
    "Light travels at about 300,000 kilometres per second.", "Mitochondria produce energy for the cell.",
    "Saturn's rings are made mostly of ice.", "The Nile flows north into the Mediterranean Sea.",
    "The Roman Empire split into eastern and western halves.",
    "Mix the flour and butter, then bake for twenty minutes.",
    "Tighten the bolt with a wrench and check for leaks.", "Vinegar removes limescale from a kettle.",
    "One mile is about 1.6 kilometres.", "The central bank raised interest rates to curb inflation.",
    "The match ended in a draw after extra time.", "The novel was first published in 1925.",
    "数组的下标从零开始。", "数据库索引可以加快查询速度。", "三角形的内角和是一百八十度。", "水由氢和氧组成。",
    "太阳系有八大行星。", "秦始皇统一了六国。", "把面粉和鸡蛋搅拌均匀后下锅。", "拧紧螺丝前先检查垫圈。",
    "一英寸约等于二点五四厘米。", "股市今天小幅上涨。", "这首曲子是C大调。", "细胞通过分裂进行繁殖。",
    "用命令行安装这个软件包。", "重启路由器后网络恢复了。", "这本小说讲述了一个家族的兴衰。",
    "比赛在加时赛后打成平局。",
)


@dataclass(frozen=True)
class RelevanceCalibration:
    """relevance = sigmoid(cosine_weight * (cosine - the query's best background cosine)
                           + keyword_weight * term coverage
                           + topic_weight * (the share of the query's topics the memory names)
                           + topical_weight * (the query names a topic) + bias).

    The last two (domain/text/topics.py): a memory about what the query asks (both name `pets`) gains
    topic_weight, so that of a question about a topic none of the user's memories name (something never
    mentioned) every memory scores lower than an answer would; topical_weight is whether the query asks
    about an everyday topic at all (fitted positive: out-of-domain queries mostly name none)."""

    cosine_weight: float
    keyword_weight: float
    bias: float
    topic_weight: float = 0.0
    topical_weight: float = 0.0

    def score(self, cosine: float | None, coverage: float, topic: float = 0.0, topical: float = 0.0) -> float:
        """The calibrated relevance from the cosine's margin over the background (`cosine`), the term
        coverage, the topic match and whether the query names a topic. Without a cosine (a keyword-only
        search, a memory without an embedding) the term coverage is the evidence there is, and is itself an
        absolute measure."""
        if cosine is None:
            return max(0.0, min(1.0, coverage))
        z = (self.cosine_weight * cosine + self.keyword_weight * coverage + self.topic_weight * topic
             + self.topical_weight * topical + self.bias)
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0


def term_coverage(query_terms: Collection[str], held: frozenset[str],
                  alternatives: Mapping[str, Sequence[frozenset[str]]] | None = None) -> float:
    """The share of the query's distinct terms the memory holds (`held`: `memory_terms`), a term held when
    it is there or when every term of one of its `alternatives` (its synonyms, analysed) is: 0 when the
    query has none."""
    if not query_terms:
        return 0.0
    alternatives = alternatives or {}
    return sum(1 for term in query_terms
               if term in held or any(alt and alt <= held for alt in alternatives.get(term, ()))) / len(query_terms)


def memory_text(content: str, keywords: Sequence[str] = (), category: str | None = None) -> str:
    """What a memory says for relevance: its text, its keywords and its category."""
    return " ".join([content, *keywords, category or ""])


def memory_terms(content: str, keywords: Sequence[str] = (), category: str | None = None) -> frozenset[str]:
    """The analysed terms a memory holds: its text's, its keywords' and its category's."""
    return _terms(memory_text(content, keywords, category))


@lru_cache(maxsize=16384)
def _terms(content: str) -> frozenset[str]:
    """Memoised: a user's memories meet query after query."""
    return frozenset(tokenize(content))


def fit_calibration(features: Sequence[Sequence[float]], labels: Sequence[bool], *,
                    iterations: int = 50, ridge: float = 1e-3) -> RelevanceCalibration:
    """A logistic regression of labels on (cosine margin, term coverage[, topic match, query names a topic]),
    by Newton's method, the two classes weighted equally (answers are a small minority of the candidates a
    query meets)."""
    import numpy as np

    if len(features) != len(labels):
        raise ValueError("one label per feature row")
    y = np.asarray(labels, dtype=np.float64)
    positives = float(y.sum())
    if positives == 0 or positives == len(y):
        raise ValueError("both classes are needed to fit a calibration")
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] not in (2, 4):
        raise ValueError("each feature row is (cosine margin, coverage[, topic match, topical])")
    x = np.column_stack([x, np.ones(len(y))])
    width = x.shape[1]
    sample_weight = np.where(y > 0, 0.5 / positives, 0.5 / (len(y) - positives))
    beta = np.zeros(width)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -60, 60)))
        gradient = x.T @ (sample_weight * (p - y)) + ridge * beta
        hessian = (x * (sample_weight * p * (1 - p))[:, None]).T @ x + ridge * np.eye(width)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    topic, topical = (float(beta[2]), float(beta[3])) if width == 5 else (0.0, 0.0)
    return RelevanceCalibration(cosine_weight=round(float(beta[0]), 4), keyword_weight=round(float(beta[1]), 4),
                                bias=round(float(beta[-1]), 4), topic_weight=round(topic, 4),
                                topical_weight=round(topical, 4))
