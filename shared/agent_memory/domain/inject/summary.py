"""Summaries of early turns: the message pair that stands in for them, and an offline extractive summary.

Pure domain code: no I/O, no SDK. ``summarize_early_turns`` (``domain.compaction``) replaces early turns
by ``summary_messages``; ``extractive_summary`` is the summarizer used when no model is configured,
and it also writes the offline weekly reports (``domain.reports``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_memory.domain.inject.context import neutralize
from agent_memory.domain.inject.conversation import Message, human_text
from agent_memory.domain.text.text import CJK_IDEOGRAPHS, sentences

SUMMARY_HEADER_ZH = "[以下是之前对话的摘要]"
SUMMARY_FOOTER_ZH = "[摘要结束，以下是最近的对话]"
SUMMARY_ACK_ZH = "好的，我了解了之前的讨论内容，我们继续。"
SUMMARY_HEADER_EN = "[Summary of the earlier conversation]"
SUMMARY_FOOTER_EN = "[End of summary; the recent conversation follows]"
SUMMARY_ACK_EN = "Understood, I have the earlier discussion in mind. Let's continue."


def summary_messages(summary: str, *, cjk: bool) -> list[Message]:
    """The user/assistant pair that stands in for the summarized turns. The summary is of the conversation's own
    text (the user's, tools' results): neutralized like every other untrusted text put in context, so no tag of
    it opens or closes anything and no rule of it imitates the header or footer."""
    summary = neutralize(summary)
    if cjk:
        return [
            {"role": "user", "content": f"{SUMMARY_HEADER_ZH}\n{summary}\n{SUMMARY_FOOTER_ZH}"},
            {"role": "assistant", "content": SUMMARY_ACK_ZH},
        ]
    return [
        {"role": "user", "content": f"{SUMMARY_HEADER_EN}\n{summary}\n{SUMMARY_FOOTER_EN}"},
        {"role": "assistant", "content": SUMMARY_ACK_EN},
    ]


# --------------------------------------------------------------------------------------------- #
# Offline extractive summary
# --------------------------------------------------------------------------------------------- #

# What compaction writes (the truncation marker, the summary pair's frame) is not part of any sentence.
_MARKERS = re.compile(
    r"…\[(?:截断，原始长度 \d+ 字符|truncated, original length \d+ chars)\]"
    + "|" + "|".join(re.escape(m) for m in (SUMMARY_HEADER_ZH, SUMMARY_FOOTER_ZH, SUMMARY_HEADER_EN, SUMMARY_FOOTER_EN))
)
_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
_FIRST_PERSON_EN = re.compile(r"\bI\b|\bI'(?:m|ve|d|ll)\b|(?i:\b(?:my|mine|me|we|our|ours|us)\b)")
_FIRST_PERSON_ZH = re.compile(r"我")
_CAPITALIZED = re.compile(r"(?<![\w'])[A-Z][A-Za-z0-9&.\-]*[A-Za-z0-9]")
_LATIN_IN_CJK = re.compile(r"[A-Za-z][A-Za-z0-9+#.\-]*")
_QUOTED_ZH = re.compile(r"《[^》]+》|「[^」]+」|“[^”]+”")
_CJK_CHAR = re.compile(f"[{CJK_IDEOGRAPHS}]")


def _sentences(text: str) -> list[str]:
    return sentences(_MARKERS.sub("\n", text))


def _effective_length(sentence: str) -> float:
    cjk_chars = len(_CJK_CHAR.findall(sentence))
    return (len(sentence) - cjk_chars) + 2.5 * cjk_chars


def _signals(sentence: str) -> float:
    """Numbers, named entities and first-person statements: what makes a sentence a fact worth keeping."""
    score = 0.0
    numbers = len(_NUMBER.findall(sentence))
    if numbers:
        score += 2 + min(numbers - 1, 2)
    if _CJK_CHAR.search(sentence):
        if _FIRST_PERSON_ZH.search(sentence):
            score += 2
        score += min(len(_LATIN_IN_CJK.findall(sentence)) + len(_QUOTED_ZH.findall(sentence)), 3)
    else:
        if _FIRST_PERSON_EN.search(sentence):
            score += 2
        words = _CAPITALIZED.findall(sentence)
        # A capitalized first word is just the start of the sentence (unless it is an acronym).
        names = [w for i, w in enumerate(words) if w != "I" and (i > 0 or not sentence.startswith(w) or w.isupper())]
        score += min(len(names), 3)
    return score


def _information(sentence: str, signals: float) -> float:
    """How much a sentence is worth keeping: its signals, longer is better, questions are worth less."""
    score = signals + min(_effective_length(sentence), 100) / 50
    return score - 1 if sentence.endswith(("?", "？")) else score


def _is_candidate(sentence: str, signals: float) -> bool:
    """Skip pleasantries: a sentence needs a signal, or some length when it has none."""
    length = _effective_length(sentence)
    return length >= 8 and (signals > 0 or length >= 30)


def extractive_summary(messages: Sequence[Message], max_chars: int = 400) -> str:
    """An offline summary: the most informative user sentences, in order, as ``- `` lines within ``max_chars``.

    Sentences are taken verbatim (so the summary is in the conversation's language); the assistant's
    text is used only when the user said nothing usable. Never calls anything external.
    """
    if max_chars <= 0:
        return ""
    candidates: list[tuple[float, int, str]] = []
    for role in ("user", "assistant"):
        seen: set[str] = set()
        for message in messages:
            if message.get("role") != role:
                continue
            for sentence in _sentences(human_text(message)):
                signals = _signals(sentence)
                if sentence not in seen and _is_candidate(sentence, signals):
                    seen.add(sentence)
                    candidates.append((_information(sentence, signals), len(candidates), sentence))
        if candidates:
            break
    chosen: list[tuple[int, str]] = []
    used = 0
    for _, order, sentence in sorted(candidates, key=lambda c: (-c[0], c[1])):
        line = f"- {sentence}"
        cost = len(line) + (1 if chosen else 0)
        if used + cost <= max_chars:
            chosen.append((order, line))
            used += cost
        elif not chosen:
            line = line[: max(max_chars - 1, 0)] + "…" if max_chars > 1 else line[:max_chars]
            chosen.append((order, line))
            used = len(line)
    return "\n".join(line for _, line in sorted(chosen))
