"""Saving memories: direct, batch, and extraction from a conversation turn (the save_info action)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from agent_memory.domain.lifecycle.duplicates import EXTRACTED_SOURCE, DuplicateRule, is_transcript_turn
from agent_memory.domain.lifecycle.retention import RetentionPolicy
from agent_memory.domain.models import (
    ExtractedMemory,
    Memory,
    NewMemory,
    Origin,
    PartialSave,
    Provenance,
    SaveOutcome,
    SaveResult,
    ScopeRef,
    utcnow,
)
from agent_memory.domain.packs import DomainPack, default_pack
from agent_memory.domain.profile.field_names import current_field_name
from agent_memory.domain.profile.profile import slot_field
from agent_memory.domain.requests import MAX_CONTENT_BYTES
from agent_memory.domain.search.embedding_budget import check_embedding_budget
from agent_memory.domain.search.vectors import encode_vector
from agent_memory.domain.text.keywords import extract_keywords
from agent_memory.domain.text.skipped_sentences import skipped_sentences
from agent_memory.errors import AgentMemoryError, BatchInterrupted, InvalidInput, NotFound
from agent_memory.ports import ConversationTurn, Embedder, MemoryExtractor, MemoryStore, SearchIndex
from agent_memory.services.restatements import Restatements

# Reads a memory's text for the profile fields it states ("用户35岁" -> age 35), as extraction does, with the
# rules of the user's pack.
FieldReader = Callable[[str, DomainPack], list[ExtractedMemory]]
# The categories a tenant's memories may carry (empty: any).
Categories = Sequence[str] | Callable[[str], Sequence[str]]

# Field names an extractor uses for "no particular slot": such memories are never upserted.
NON_SLOT_FIELDS = frozenset({"", "other", "note", "misc"})


@dataclass
class TurnSaved:
    """What extraction read in a turn and what of it was stored: the fields it read (name -> value), the
    memories saved with the slot each fills (its stored `field`, e.g. `preference.tea`; "" for none), and what
    was skipped (a field the caller holds with the same value, or a memory said already: its slot, else its
    content); the user's sentences nothing was extracted from (domain/text/skipped_sentences.py), and whether the
    offline rules read the turn."""

    extracted_info: dict[str, Any] = field(default_factory=dict)
    retracted_info: dict[str, Any] = field(default_factory=dict)  # field -> the items taken back (None: all)
    saved: list[tuple[str, NewMemory]] = field(default_factory=list)
    skipped_fields: list[str] = field(default_factory=list)
    skipped_sentences: list[str] = field(default_factory=list)
    read_by_rules: bool = False

    @property
    def saved_count(self) -> int:
        return len(self.saved)


# How far back a turn saved on its own looks for the turn before it in the same conversation: the user's
# newest memories, one small page (a conversation being saved turn by turn has its last turn among them). The
# same page is where a save looks for a memory saved a moment ago that it may restate.
RECENT_TURNS = 20
RecentMemories = Callable[[], list[Memory]]


def _clipped(text: str, max_bytes: int) -> str:
    """At most `max_bytes` of UTF-8, cut at a character boundary."""
    encoded = text.encode("utf-8")
    return text if len(encoded) <= max_bytes else encoded[:max_bytes].decode("utf-8", errors="ignore")


def _has_value(value: Any) -> bool:
    return value not in (None, "", [], {})


def same_value(known: Any, stated: Any) -> bool:
    """The same value as a caller and an extraction write it: 30 and "30", "London" and " london"."""
    return _comparable(known) == _comparable(stated)


def _comparable(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return format(float(value), "g")
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str).casefold()
    text = " ".join(str(value).split()).casefold()
    try:
        return format(float(text), "g")
    except ValueError:
        return text


class SaveService:
    def __init__(
        self,
        *,
        store: MemoryStore,
        extractor: Callable[[], MemoryExtractor],
        embedder: Callable[[], Embedder | None] = lambda: None,
        max_keywords: int = 5,
        min_keyword_weight: float = 0.3,
        categories: Categories = (),
        field_reader: FieldReader | None = None,
        index: SearchIndex | None = None,
        duplicates: DuplicateRule | None = None,
        max_embedded_tokens: int = 0,
        packs: Callable[[str], DomainPack] = lambda _: default_pack(),
        extractors: Callable[[DomainPack], MemoryExtractor] | None = None,
        offline_rules: bool = False,
        retention: Callable[[str], RetentionPolicy] | None = None,
    ) -> None:
        """`index`: where a new memory's nearest current memories are read, what it may restate (besides the
        user's newest memories); `duplicates`: when it restates one (None: the default thresholds);
        `max_embedded_tokens`: the embedding work one save or batch may carry (0: no limit); `categories`: one
        set for every tenant, or a tenant's; `packs`: a tenant's domain pack (its list fields, its rules);
        `extractors`: the extractor of a pack (None: `extractor` for every pack); `offline_rules`: the extractor
        is the offline rules (no LLM configured), which the extract answer says; `retention`: a tenant's
        retention policy (a memory is stored with its expiry, and never merged into an expired one)."""
        self._retention = retention
        self._offline_rules = offline_rules
        self._max_embedded_tokens = max_embedded_tokens
        self._store = store
        self._restatements = Restatements(store=store, index=index, rule=duplicates or DuplicateRule())
        self._field_reader = field_reader
        self._categories_of = categories if callable(categories) else lambda _: categories
        self._packs = packs
        # Providers, not instances: the LLM SDK and the embedding model load on first use only.
        self._extractor = extractor
        self._extractors = extractors
        self._embedder = embedder
        self._max_keywords = max_keywords
        self._min_keyword_weight = min_keyword_weight

    def enrich(self, memories: list[NewMemory], user: ScopeRef | None = None,
               recent: RecentMemories | None = None, pack: DomainPack | None = None) -> list[NewMemory]:
        """Write-time work: list slots, keywords (unless given), conversation context, embeddings (one batch call).
        `recent`: the user's newest memories, read once when first needed (where a turn finds the turn before
        it); `pack`: whose list fields name slots (default: the user's pack, else the immigration pack)."""
        pack = pack or (self._packs(user.tenant_id) if user is not None else default_pack())
        enriched = []
        previous_in_conversation: dict[str, str] = {}
        stored: dict[str, list[str]] | None = None  # the user's recent turns by conversation, read when needed
        if user is not None and recent is None:
            recent = self._recent(user)
        for memory in memories:
            update: dict[str, Any] = {}
            slot = slot_field(memory.field, memory.category, memory.metadata.get("value"), pack)
            if slot != memory.field:
                update["field"] = slot
            if not memory.keywords:
                update["keywords"] = extract_keywords(memory.content, max_keywords=self._max_keywords,
                                                      min_weight=self._min_keyword_weight)
            if memory.conversation_id:
                if memory.context is None and memory.conversation_id in previous_in_conversation:
                    update["context"] = previous_in_conversation[memory.conversation_id]
                elif memory.context is None and recent is not None:
                    # The conversation's first turn in this call: the turn before it was saved by an earlier call.
                    stored = _turns_by_conversation(recent()) if stored is None else stored
                    before = next((c for c in stored.get(memory.conversation_id, ()) if c != memory.content), None)
                    if before is not None:
                        update["context"] = before
                previous_in_conversation[memory.conversation_id] = memory.content
            enriched.append(memory.model_copy(update=update) if update else memory)
        embedder = self._embedder()
        if embedder is not None and enriched:
            vectors = embedder.embed_documents([m.content for m in enriched])
            enriched = [
                m.model_copy(update={"embedding": encode_vector(v), "embedding_model": embedder.model_id})
                for m, v in zip(enriched, vectors, strict=True)
            ]
        return enriched

    def _recent(self, user: ScopeRef) -> RecentMemories:
        """The user's RECENT_TURNS newest current memories, read on the first call only (one query of a small
        page)."""
        return cache(lambda: self._store.list_current(user, limit=RECENT_TURNS).items)

    def warm_up(self) -> None:
        """Build the extractor (importing its SDK) ahead of the first request, e.g. before a SnapStart snapshot."""
        self._extractor()

    def save(self, user: ScopeRef, memory: NewMemory) -> SaveResult:
        """Stored; or, when it restates a current memory, `merged` with that memory, which stays as it is."""
        (memory,) = self._checked_categories(user, [memory], field="category")
        self._check_unexpired(user, [memory], field="created_at")
        check_embedding_budget([memory.content], self._max_embedded_tokens, field="content")
        recent = self._recent(user)
        return self._save_all(user, self.enrich(self._with_fields(user, [memory]), user, recent), recent,
                              many=False)[0]

    def _save_all(self, user: ScopeRef, memories: list[NewMemory], recent: RecentMemories, *, many: bool
                  ) -> list[SaveResult]:
        """Each memory stored, or merged into the current memory it restates (or into an earlier one of the call),
        in order; `many`: through the store's `save_many`, whose fault part-way raises PartialSave with the results
        of the items before the first one not written."""
        targets = self._restatements.targets(user, memories, recent)
        if self._retention is not None:
            policy, now = self._retention(user.tenant_id), utcnow()
            targets = [None if isinstance(t, Memory) and not policy.kept(t, now) else t for t in targets]
            memories = [m.model_copy(update={"expires_at": policy.expires_at(m.memory_type, m.created_at or now)})
                        for m in memories]
        pending = [memory for memory, target in zip(memories, targets, strict=True) if target is None]
        cause: Exception | None = None
        try:
            written = self._store.save_many(user, pending) if many else [self._store.save(user, m) for m in pending]
        except PartialSave as partial:
            written, cause = partial.written, partial.cause
        results: list[SaveResult] = []
        stored = iter(written)
        for target in targets:
            if target is None:
                result = next(stored, None)
                if result is None:  # the item the fault stopped at
                    break
                results.append(result)
            else:
                kept = results[target].memory if isinstance(target, int) else target
                results.append(SaveResult(outcome=SaveOutcome.MERGED, memory=kept))
        self._retire_items(user, results)
        if cause is not None:
            raise PartialSave(results, cause)
        return results

    def _retire_items(self, user: ScopeRef, results: list[SaveResult]) -> None:
        """A list field's retraction ends each item of it stored before that it names ("my dog passed away" ends
        `pet.dog` and "a dog named Mochi" alike), or every item when it names none ("I don't have any pets"):
        they are deleted, so kept in their slots' histories for as-of reads. (The store already retired the one
        current memory of the retraction's own slot, as any save does.)"""
        list_fields = self._packs(user.tenant_id).list_fields
        taken = [r.memory for r in results if r.memory.retraction and r.outcome is not SaveOutcome.MERGED
                 and (r.memory.field or "").split(".")[0] in list_fields]
        if not taken:
            return
        for memory in self._store.all_current(user):
            if not memory.retraction and any(_names_item(retraction, memory) for retraction in taken):
                try:
                    self._store.delete(user, memory.memory_key)
                except NotFound:  # retired meanwhile
                    continue

    def _with_fields(self, user: ScopeRef, memories: list[NewMemory]) -> list[NewMemory]:
        """A memory saved without `field` gets the field its text states, so that it reaches the profile and a
        newer statement of the same field supersedes it. Turns of a conversation transcript (`source: transcript`)
        are records of what was said and keep no field: one turn must not retire another.
        A text that states several fields ("本科毕业于浙江大学") keeps the others in `inferred_fields`."""
        if self._field_reader is None:
            return memories
        pack = self._packs(user.tenant_id)
        completed = []
        for memory in memories:
            if memory.field or is_transcript_turn(memory):
                completed.append(memory)
                continue
            found = [f for f in self._field_reader(memory.content, pack) if f.field]
            if not found:
                completed.append(memory)
                continue
            primary = next((f for f in found if f.memory_type is memory.memory_type), found[0])
            metadata = dict(memory.metadata)
            metadata.setdefault("value", primary.value)
            metadata["field_inferred"] = True
            others = {f.field: f.value for f in found if f is not primary and f.field != primary.field}
            if others:
                metadata["inferred_fields"] = others
            category = memory.category or self._known_category(user, primary.category)
            completed.append(memory.model_copy(update={"field": primary.field, "metadata": metadata,
                                                       "category": category,
                                                       "retraction": memory.retraction or primary.retraction}))
        return completed

    def _categories(self, user: ScopeRef) -> dict[str, str]:
        """The tenant's categories, upper-cased -> as configured; empty: any category."""
        return {c.upper(): c for c in self._categories_of(user.tenant_id)}

    def _known_category(self, user: ScopeRef, category: str | None) -> str | None:
        """An extracted category in its configured spelling; one outside the configured set is left out."""
        categories = self._categories(user)
        if category is None or not categories:
            return category
        return categories.get(category.strip().upper())

    def _checked_categories(self, user: ScopeRef, memories: list[NewMemory], *, field: str) -> list[NewMemory]:
        """Each memory's category in its configured spelling; an unknown one is a 422 naming the item,
        raised before anything is written. `field` names the item (`{i}` is its index)."""
        categories = self._categories(user)
        if not categories:
            return memories
        checked, problems = [], []
        for index, memory in enumerate(memories):
            if memory.category is None:
                checked.append(memory)
                continue
            known = self._known_category(user, memory.category)
            if known is None:
                problems.append({"field": field.format(i=index), "type": "enum",
                                 "message": f"must be one of {', '.join(categories.values())}"})
            checked.append(memory.model_copy(update={"category": known}))
        if problems:
            raise _invalid(problems)
        return checked

    def _check_unexpired(self, user: ScopeRef, memories: list[NewMemory], *, field: str) -> None:
        """A memory its tenant's retention policy has already ended is refused before anything is written."""
        policy = self._retention(user.tenant_id) if self._retention is not None else None
        if policy is not None and (problems := policy.expired_on_arrival(memories, utcnow(), field=field)):
            raise _invalid(problems)

    def save_batch(self, user: ScopeRef, memories: list[NewMemory]) -> list[SaveResult]:
        """Saves in order (a later item for the same field supersedes an earlier one).

        Every item is validated before this is called, so a bad batch writes nothing. A fault part-way
        raises BatchInterrupted naming the items written and those not; each save is idempotent by
        content, so resending the whole batch stores nothing twice.
        """
        memories = self._checked_categories(user, memories, field="memories.{i}.category")
        self._check_unexpired(user, memories, field="memories.{i}.created_at")
        check_embedding_budget([m.content for m in memories], self._max_embedded_tokens, field="memories")
        recent = self._recent(user)
        try:
            return self._save_all(user, self.enrich(self._with_fields(user, memories), user, recent), recent,
                                  many=True)
        except PartialSave as partial:
            cause = partial.cause if isinstance(partial.cause, AgentMemoryError) \
                else AgentMemoryError(str(partial.cause))
            written = [{"index": i, "memory_key": r.memory.memory_key, "outcome": r.outcome.value}
                       for i, r in enumerate(partial.written)]
            raise BatchInterrupted(
                f"{cause.message} after {len(written)} of {len(memories)} items were written; "
                "resend the batch (written items are recognised and not stored twice)",
                cause=cause,
                details={"cause": cause.code, "written": written,
                         "not_written": list(range(len(written), len(memories)))},
            ) from cause

    def delete(self, user: ScopeRef, memory_key: str) -> Memory:
        return self._store.delete(user, memory_key)

    def purge(self, user: ScopeRef, memory_key: str) -> list[Memory]:
        """The memory and its field's whole history gone for good (see MemoryStore.purge)."""
        return self._store.purge(user, memory_key)

    def extract_and_save(
        self, user: ScopeRef, turn: ConversationTurn, *, conversation_id: str | None = None,
        provenance: Provenance | None = None,
    ) -> TurnSaved:
        """`provenance`: how the turn came and who sent it (default: extracted, no token subject)."""
        written = provenance or Provenance(origin=Origin.EXTRACT)
        known = {current_field_name(name): value for name, value in turn.existing_info.items() if _has_value(value)}
        pack = self._packs(user.tenant_id)
        extractor = self._extractors(pack) if self._extractors is not None else self._extractor()
        extracted = extractor.extract(turn)
        output = TurnSaved(skipped_sentences=skipped_sentences(turn.user_message, extracted),
                           read_by_rules=self._offline_rules)
        pending: list[tuple[str, NewMemory]] = []
        # The turn the user answered, kept beside each memory for search only: an answer ("32, in
        # Shenzhen") is found by the words of its question. Measured on LoCoMo: +0.05 hit@5.
        context = _clipped(turn.assistant_message.strip(), MAX_CONTENT_BYTES) or None
        for found in extracted:
            field = (found.field or "").strip()
            # A field the caller already holds is skipped only when the turn states the same value; a
            # changed one ("我今年33岁" over a known 30) is saved and supersedes the old memory.
            if field and field in known and (not _has_value(found.value) or same_value(known[field], found.value)):
                output.skipped_fields.append(field)
                continue
            if field and found.retraction:
                _report_value(output.retracted_info, field, found.value, listed=field in pack.list_fields)
            elif field and _has_value(found.value):
                _report_value(output.extracted_info, field, found.value, listed=field in pack.list_fields)
            metadata = dict(found.metadata)
            if found.value is not None:
                metadata.setdefault("value", found.value)
            pending.append((field, NewMemory(
                memory_type=found.memory_type,
                content=_clipped(found.content, MAX_CONTENT_BYTES),  # what a save and an import hold
                category=self._known_category(user, found.category),
                field=None if field.lower() in NON_SLOT_FIELDS else field,
                keywords=found.keywords,
                source=EXTRACTED_SOURCE,
                conversation_id=conversation_id,
                metadata=metadata,
                context=context,
                origin=written.origin,
                written_by=written.written_by,
                retraction=found.retraction,
            )))
        enriched = self.enrich([memory for _, memory in pending], pack=pack)
        try:
            results = self._save_all(user, enriched, self._recent(user), many=True)
        except PartialSave as partial:
            raise partial.cause from None
        for (field, _), memory, result in zip(pending, enriched, results, strict=True):
            # The slot the memory fills, as save and search answer it: a list field's names its value too
            # (`preference.tea`, `targetCategory.TTPS`); a memory that fills none keeps the extractor's name.
            slot = memory.field or field
            if result.outcome in (SaveOutcome.DUPLICATE, SaveOutcome.MERGED):  # said already: nothing stored
                output.skipped_fields.append(slot or memory.content)
                continue
            output.saved.append((slot, memory))
        return output


def _names_item(retraction: Memory, memory: Memory) -> bool:
    """Whether a list field's retraction takes back this (older) memory: one of the field's items, the one it
    names (by the item's slot, its value or its category, either inside the other: "dog" names "dog (Mochi)")
    or, naming none, any."""
    field = (retraction.field or "").split(".")[0]
    if memory.memory_key == retraction.memory_key or memory.created_at > retraction.created_at \
            or (memory.field or "").split(".")[0] != field:
        return False
    item = retraction.metadata.get("value") or retraction.category
    if item in (None, "") and retraction.field == field:
        return True
    taken = str(item or "").casefold()
    stated = [str(v).casefold() for v in (memory.metadata.get("value"), memory.category) if v not in (None, "")]
    return memory.field == retraction.field or any(taken in v or v in taken for v in stated)


def _report_value(info: dict[str, Any], field: str, value: Any, *, listed: bool) -> None:
    """A field's value in extract's `extracted_info`: a list field given several values in one turn reports them
    all, in order (["cat", "dog"]); one value stays a value, as every other field's."""
    if not listed or field not in info:
        info[field] = value
        return
    values = info[field] if isinstance(info[field], list) else [info[field]]
    info[field] = values if value in values else [*values, value]


def _turns_by_conversation(memories: list[Memory]) -> dict[str, list[str]]:
    """The contents of these memories (the user's newest, newest first) that are turns, by conversation."""
    turns: dict[str, list[str]] = {}
    for memory in memories:
        if memory.conversation_id:
            turns.setdefault(memory.conversation_id, []).append(memory.content)
    return turns


def _invalid(problems: list[dict[str, str]]) -> InvalidInput:
    """A refusal naming the first problem's field and listing them all: nothing was written."""
    return InvalidInput(f"invalid request: {problems[0]['field']}: {problems[0]['message']}", details=problems)
