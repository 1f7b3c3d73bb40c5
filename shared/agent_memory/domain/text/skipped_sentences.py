"""The user's sentences an extraction read nothing from: what extract answers as `skipped_sentences`.

A turn's user message is cut into sentences (`text.sentences`: 。！？；!?; line breaks, a full stop before a space).
An extracted memory came from the sentences its value is written in (case and width aside: "Berlin", "花生", 34);
a memory whose value is in none of them (a yes/no, a value the extractor rewrote: 七十 -> 70, 吃素 -> 素食), or
that has none, came from the sentences its content shares a word with: a word of two or more letters or a Chinese
character pair, as the search analyses them ("User is 34 years old" and "I'm 34 years old"; "对花生过敏" and
"我对花生过敏"). An extractor that knows the sentence a memory was read from says so (`ExtractedMemory.said_in`,
the offline rules), and that sentence is the one. A sentence no memory came from is skipped: "My friend is
allergic to cats. I'm allergic to peanuts." skips the first sentence (the memory's value, peanuts, is in the
second only). The rule errs towards
not listing: a sentence that repeats the value another one stated is not listed either.
Fragments without a letter, digit or character ("...", an emoji) are never listed; greetings and questions are.
Pure: the same memories give the same answer whichever extractor found them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from agent_memory.domain.models import ExtractedMemory
from agent_memory.domain.text.text import sentences, tokenize

# The subject a memory's content is written about, which every content shares and no sentence is about.
_SUBJECT_TERMS = frozenset({"用户"})


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _value_texts(value: Any) -> Iterable[str]:
    """A value as the user may have written it: text, a number without a trailing .0; yes/no have no words."""
    if isinstance(value, bool) or value is None:
        return ()
    if isinstance(value, int | float):
        return (str(int(value)) if float(value).is_integer() else str(value),)
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple):
        return [text for item in value for text in _value_texts(item)]
    return ()


def _terms(text: str) -> set[str]:
    return {term for term in tokenize(text) if len(term) >= 2} - _SUBJECT_TERMS


def _sources(memory: ExtractedMemory, folded: Sequence[str], terms: Sequence[set[str]]) -> set[int]:
    """The indexes of the sentences `memory` came from (`folded`: the sentences folded; `terms`: their words): the
    one its extractor read it from when it says so, else by its value and words."""
    if memory.said_in:
        said = _folded(memory.said_in).strip()
        known = {i for i, sentence in enumerate(folded) if said in sentence or sentence in said}
        if known:
            return known
    values = [value for text in _value_texts(memory.value) if (value := _folded(text).strip())]
    found = {i for i, sentence in enumerate(folded) if any(value in sentence for value in values)}
    if found:
        return found
    content = _terms(memory.content)
    return {i for i, words in enumerate(terms) if content & words}


def skipped_sentences(user_message: str, memories: Sequence[ExtractedMemory]) -> list[str]:
    """The sentences of `user_message`, in order, that none of `memories` came from."""
    said = [sentence for sentence in sentences(user_message) if any(ch.isalnum() for ch in sentence)]
    folded = [_folded(sentence) for sentence in said]
    terms = [_terms(sentence) for sentence in said]
    read = {i for memory in memories for i in _sources(memory, folded, terms)}
    return [sentence for i, sentence in enumerate(said) if i not in read]
