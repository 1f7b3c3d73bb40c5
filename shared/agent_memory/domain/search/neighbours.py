"""Conversation neighbours: a stored turn and the turn it answers.

A memory saved from a conversation transcript carries the turn before it as its `context`; when that turn
is itself a stored memory of the same conversation, the two are neighbours. A question asked in one turn
is often answered in the next ("How long have you had them?" / "Three years now!"), so a turn whose
neighbour matches the query keywords is likely to hold the answer even when it shares no word with the
query. Lexical scores are shared with neighbours for that reason; vector similarities are not, as every
pair of turns is similar to some degree and sharing them would favour transcript turns over other memories.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np

NO_NEIGHBOUR = -1


class Turn(Protocol):
    """What neighbours are found by (a Memory is one)."""

    @property
    def conversation_id(self) -> str | None: ...

    @property
    def content(self) -> str: ...

    @property
    def context(self) -> str | None: ...


def turn_link(conversation_id: str, text: str) -> str:
    """A turn's identity within its conversation, for a search index to find neighbours by: a memory's link
    is that of its content, and the turn before it is the memory whose link is that of its context."""
    return hashlib.sha256(f"{conversation_id}\x1f{text}".encode()).hexdigest()[:32]


def previous_turns(memories: Sequence[Turn]) -> np.ndarray:
    """Row i: the row of the memory whose content is memory i's context in the same conversation, or -1."""
    rows: dict[tuple[str, str], int] = {}
    for row, memory in enumerate(memories):
        if memory.conversation_id:
            rows.setdefault((memory.conversation_id, memory.content), row)
    previous = np.full(len(memories), NO_NEIGHBOUR, dtype=np.int32)
    for row, memory in enumerate(memories):
        if memory.conversation_id and memory.context:
            found = rows.get((memory.conversation_id, memory.context), NO_NEIGHBOUR)
            if found != row:
                previous[row] = found
    return previous


def with_neighbours(scores: np.ndarray, previous: np.ndarray, share: float) -> np.ndarray:
    """Each score plus `share` of its best neighbour's: the turn before it or any turn answering it."""
    if share <= 0 or not len(scores):
        return scores
    linked = previous >= 0
    best = np.zeros_like(scores)
    best[linked] = scores[previous[linked]]  # the turn before
    np.maximum.at(best, previous[linked], scores[linked])  # the turns after
    return scores + share * best


def link_hash(conversation_id: str, text: str) -> int:
    """`turn_link` as a 64-bit number (never 0, which stands for no link), for arrays of links."""
    value = int.from_bytes(hashlib.blake2b(f"{conversation_id}\x1f{text}".encode(), digest_size=8).digest(), "little")
    return value or 1


def turn_links(memories: Sequence[Turn]) -> np.ndarray:
    """(n, 2) uint64: each memory's own link (its content) and the link of the turn before it (its context); 0
    where there is none. What `previous_from_links` finds the neighbours by, without the memories."""
    links = np.zeros((len(memories), 2), dtype=np.uint64)
    for row, memory in enumerate(memories):
        if memory.conversation_id:
            links[row, 0] = link_hash(memory.conversation_id, memory.content)
            if memory.context:
                links[row, 1] = link_hash(memory.conversation_id, memory.context)
    return links


def previous_from_links(links: np.ndarray) -> np.ndarray:
    """`previous_turns` of the memories these are the `turn_links` of: row i's neighbour is the first row whose
    own link is row i's link before, unless that row is i itself."""
    previous = np.full(len(links), NO_NEIGHBOUR, dtype=np.int32)
    own, before = links[:, 0], links[:, 1]
    linked = np.flatnonzero(own != 0)
    asking = np.flatnonzero(before != 0)
    if not len(linked) or not len(asking):
        return previous
    unique, first = np.unique(own[linked], return_index=True)  # first: the earliest row holding each link
    first_rows = linked[first]
    at = np.minimum(np.searchsorted(unique, before[asking]), len(unique) - 1)
    found = np.where(unique[at] == before[asking], first_rows[at], NO_NEIGHBOUR)
    found[found == asking] = NO_NEIGHBOUR
    previous[asking] = found
    return previous
