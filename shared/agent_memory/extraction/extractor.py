"""The offline extractor: the field rules of a domain pack applied to the user's own words.

Deterministic and conservative: it reports only what the user states outright in
`turn.user_message` (Chinese or English) -- never the assistant's words -- as one memory per
profile field, worded in the user's own language. Vague statements keep their vagueness
("三十多岁" -> "30+"). Negated, hypothetical ("想读博") and third-person ("我老婆是博士") mentions
are ignored. Standard library only; every table and regex is compiled once at import.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from agent_memory.domain.models import ExtractedMemory, MemoryType, is_cjk_text
from agent_memory.domain.packs import ExtractionRules, default_pack
from agent_memory.domain.text.text import sentences
from agent_memory.extraction.dialogue import answer_segments, asked_questions, statements
from agent_memory.extraction.exemplars import ExemplarReader
from agent_memory.extraction.fields.amounts import annual_income, budget, investment_capacity
from agent_memory.extraction.fields.career import company, industry, job_title, tech_background, years_of_experience
from agent_memory.extraction.fields.education import education, major, university
from agent_memory.extraction.fields.family import family_support, has_children, marital_status
from agent_memory.extraction.fields.general import GENERAL_RULES
from agent_memory.extraction.fields.general_preferences import general_preferences
from agent_memory.extraction.fields.immigration import hk_employer, target_category
from agent_memory.extraction.fields.introductions import introduction
from agent_memory.extraction.fields.location import CITY_PREFIX_RE, location
from agent_memory.extraction.fields.personal import (
    age,
    allergy,
    birthday,
    language_skills,
    name,
    nationality,
    preferred_name,
)
from agent_memory.extraction.fields.preferences import (
    TOPICS,
    dislike,
    general_preference,
    pace_preference,
    topic_preferences,
)
from agent_memory.extraction.fields.restatements import restatements
from agent_memory.extraction.fields.retraction_grammar import (
    REREAD_FIELDS,
    clauses,
    contradicts,
    denies_or_ends,
    lets_go,
    without_ending_words,
)
from agent_memory.extraction.fields.retractions import RETRACTION_STAGES, Retractions
from agent_memory.extraction.fields.timeline import timeline
from agent_memory.extraction.grammar import Utterance, without_questions
from agent_memory.extraction.rule import FieldRule, single
from agent_memory.ports import ConversationTurn

Rule = Callable[[Utterance], ExtractedMemory | None]
# Reads the likings of a turn once the field rules have run (it may drop a fact a liking restates).
PreferenceStage = Callable[[Utterance, list[ExtractedMemory]], list[ExtractedMemory]]

# The immigration pack's rules, each by the field it reads.
FIELD_RULES: dict[str, Rule] = {
    "name": name,
    "preferredName": preferred_name,
    "age": age,
    "birthday": birthday,
    "nationality": nationality,
    "languageSkills": language_skills,
    "education": education,
    "university": university,
    "major": major,
    "currentJobTitle": job_title,
    "currentCompany": company,
    "currentIndustry": industry,
    "totalYearsOfExperience": years_of_experience,
    "hasTechBackground": tech_background,
    "annualIncome": annual_income,
    "currentLocation": location,
    "maritalStatus": marital_status,
    "hasChildren": has_children,
    "familySupport": family_support,
    "targetCategory": target_category,
    "immigrationTimeline": timeline,
    "hasHKEmployer": hk_employer,
    "investmentCapacity": investment_capacity,
    "budget": budget,
    "allergy": allergy,
}
# Every rule by its name; a pack names those that run, in the order their memories are reported.
RULES: dict[str, FieldRule] = {name: single(name, rule) for name, rule in FIELD_RULES.items()} | GENERAL_RULES
_URGENT = {"尽快", "as soon as possible"}


def _field_memories(ctx: Utterance, rules: dict[str, FieldRule]) -> list[ExtractedMemory]:
    return [memory for rule in rules.values() for memory in rule.read(ctx)]


def _immigration_preferences(ctx: Utterance, facts: list[ExtractedMemory]) -> list[ExtractedMemory]:
    """Preferences, replacing an intent they restate: "希望尽快办理" is a wish about pace, not a plan."""
    found = topic_preferences(ctx)
    pace = pace_preference(ctx)
    if pace is not None:
        facts[:] = [m for m in facts if not (m.field == "immigrationTimeline" and m.value in _URGENT)]
        if not any(m.field == "immigrationTimeline" for m in facts):
            found.append(pace)
    covered = {m.field or "" for m in found} | {m.field or "" for m in facts if m.memory_type is MemoryType.PREFERENCE}
    general = general_preference(ctx, covered)
    if general is not None and not facts:
        found.append(general)
    # "我不喜欢打电话，有事发微信" is a channel preference already: its dislike is the other half of it.
    disliked = dislike(ctx) if not covered & {topic.field for topic in TOPICS} else None
    if disliked is not None:
        found.append(disliked)
    return found


PREFERENCE_STAGES: dict[str, PreferenceStage] = {"immigration": _immigration_preferences,
                                                 "general": general_preferences}


def _answers(turn: ConversationTurn, ctx: Utterance, found: set[str], rules: dict[str, FieldRule]
             ) -> list[ExtractedMemory]:
    """Fields a terse reply fills because the assistant asked for them ("32，在深圳腾讯")."""
    questions = asked_questions(unicodedata.normalize("NFKC", turn.assistant_message or ""))
    answers: list[ExtractedMemory] = []
    for segment in answer_segments(ctx.text) if questions else []:
        for question in questions:
            wanted = {name: rule for field in question.fields if field not in found
                      for name, rule in rules.items() if rule.field == field}
            for statement in statements(question, segment, zh=ctx.zh, city_prefix=CITY_PREFIX_RE):
                for memory in _field_memories(Utterance(text=statement, zh=ctx.zh), wanted):
                    if memory.field not in found:
                        found.add(memory.field or "")
                        answers.append(memory)
    return answers


_WHITESPACE_RUN = re.compile(r"\s{2,}")


def _single_spaced(text: str) -> str:
    """Each run of spaces one space, a run holding a line break one line break: the rules' optional whitespace
    between words would otherwise try every length of a long run at every position of it (quadratic: 3,000
    spaces took over a second)."""
    return _WHITESPACE_RUN.sub(lambda run: "\n" if "\n" in run.group(0) else " ", text)


def _still_wanted(dropped: list[ExtractedMemory], taken_back: list[ExtractedMemory]) -> list[ExtractedMemory]:
    """The other schemes a dropped interest named (`also_interested_in`) that the turn does not take back:
    "科技人才入境计划我不碰了，改申请高才通" keeps TTPS."""
    found = []
    for memory in dropped:
        for code in memory.metadata.get("also_interested_in", []):
            if not any(r.field == memory.field and r.value in (code, None) for r in taken_back):
                said = f"对{code}感兴趣" if is_cjk_text(memory.content) else f"Interested in {code}"
                found.append(memory.model_copy(update={"value": code, "category": code, "metadata": {},
                                                       "content": said}))
    return found


class OfflineExtractor:
    """Deterministic regex/dictionary extractor: the MemoryExtractor used without an LLM, with a pack's rules
    (by default the immigration pack's).

    Facts come from `turn.user_message` only. The assistant's message is read for its questions
    alone, so that a terse answer means what it answers. At most one memory per field. It does
    not filter `turn.existing_info`: the caller skips known fields and reports them as skipped.
    """

    def __init__(self, rules: ExtractionRules | None = None, *, reader: ExemplarReader | None = None,
                 list_fields: frozenset[str] = frozenset()) -> None:
        """`reader`: reads the clauses no rule read by the pack's labelled examples (`list_fields`: the pack's
        fields that hold several values)."""
        rules = rules or default_pack().extraction
        unknown = [name for name in rules.fields if name not in RULES]
        if unknown or rules.preferences not in PREFERENCE_STAGES:
            raise ValueError(f"no offline rule for {', '.join(unknown) or rules.preferences!r}")
        self._rules = {name: RULES[name] for name in rules.fields}
        self._preferences = PREFERENCE_STAGES[rules.preferences]
        self._retractions: tuple[Retractions, ...] = RETRACTION_STAGES[rules.preferences]
        self._fields = {rule.field for rule in self._rules.values()}
        self._name_field = "name" if "name" in self._fields else "preferredName"
        self._reader = reader
        self._list_fields = list_fields

    def extract(self, turn: ConversationTurn, *, leave_out: str = "") -> list[ExtractedMemory]:
        """`leave_out`: the exemplars of that labelled turn are not used (an evaluation on the turns they come
        from)."""
        text = without_questions(_single_spaced(unicodedata.normalize("NFKC", turn.user_message or "")).strip())
        if not text:
            return []
        memories = self._by_rules(turn, text, zh=is_cjk_text(turn.user_message))
        if self._reader is not None:
            # Read by likeness to positive examples, blind to polarity: never a clause that denies or ends.
            alike = self._reader.read(text, memories, lambda clause: self._read_by_rules(clause, memories),
                                      list_fields=self._list_fields, leave_out=leave_out)
            memories += [m for m in alike if not denies_or_ends(m)]
            # A clause like a statement of a slot that lets it go ("horror movies just stress me out now, I don't
            # care for them anymore") takes that slot's item back.
            memories += [m.model_copy(update={"retraction": True}) for m in alike
                         if denies_or_ends(m) and m.field in REREAD_FIELDS and lets_go(m.content)
                         and not any(k.retraction and k.field == m.field for k in memories)]
        return self._with_sentences(text, memories)

    def _ended_slots(self, ctx: Utterance, taken_back: list[ExtractedMemory]) -> list[ExtractedMemory]:
        """The slots a clause ends that no retraction rule read: what the pack's rules read of the clause without
        its ending words ("I don't have asthma anymore" -> healthCondition asthma), or of the plain statement of
        what it lets go of ("I've given up on learning piano" -> "I want to learn piano": goal), each taken back."""
        found: list[ExtractedMemory] = []
        retracted = {r.field for r in taken_back}
        for clause in clauses(ctx):
            stated = without_ending_words(ctx, clause)
            content = clause.text.strip(" ，,。.")
            if stated is None and any(content in r.content or r.content in content for r in taken_back):
                continue  # a retraction rule read what this clause lets go of
            for restated in ([stated] if stated else restatements(ctx, clause)):
                said = Utterance(text=restated, zh=ctx.zh)
                positives = _field_memories(said, self._rules)
                positives += self._preferences(said, positives)
                ended = [ExtractedMemory(memory_type=m.memory_type, field=m.field, category=m.category,
                                         value=m.value.removesuffix("了") if isinstance(m.value, str) else m.value,
                                         content=content, retraction=True)
                         for m in positives if m.field in REREAD_FIELDS and m.field not in retracted
                         and m.value not in (None, "", True, False)]
                if ended:  # the first plain statement the rules read names the slot
                    found += ended
                    break
        return found

    def _with_sentences(self, text: str, memories: list[ExtractedMemory]) -> list[ExtractedMemory]:
        """Each memory with the sentence it was read from (`said_in`): the only one, or the one whose rules, read
        alone, give a memory of its field (left unsaid when none does: an answer read with the assistant's
        question, a fact of two sentences)."""
        said = [s for s in sentences(text) if any(ch.isalnum() for ch in s)]
        if not said or not memories:
            return memories
        if len(said) == 1:
            return [m.model_copy(update={"said_in": said[0]}) for m in memories]
        alone = [{(m.field, m.retraction) for m in self._by_rules(None, s, zh=is_cjk_text(s))} for s in said]
        return [m.model_copy(update={"said_in": next((s for s, read in zip(said, alone, strict=True)
                                                       if (m.field, m.retraction) in read), None)})
                for m in memories]

    def _read_by_rules(self, clause: str, memories: list[ExtractedMemory]) -> bool:
        """Whether the rules read the clause: alone, or as part of a memory of the turn ("叫豆豆" names the dog
        of "我养了一只狗，叫豆豆", whose memory holds both clauses)."""
        folded = clause.casefold()
        return any(folded in m.content.casefold() or (isinstance(m.value, str) and len(m.value) > 1
                                                       and m.value.casefold() in folded) for m in memories) \
            or bool(self._by_rules(None, clause, zh=is_cjk_text(clause)))

    def _by_rules(self, turn: ConversationTurn | None, text: str, *, zh: bool) -> list[ExtractedMemory]:
        """The rules' memories; with the turn, also the fields a terse reply answers to its assistant's question."""
        ctx = Utterance(text=text, zh=zh)
        memories = _field_memories(ctx, self._rules)
        memories += self._preferences(ctx, memories)
        fields_read = {m.field for m in memories}
        memories += [m for m in introduction(ctx, name_field=self._name_field)
                     if m.field in self._fields and m.field not in fields_read]
        if turn is not None:
            memories += _answers(turn, ctx, {m.field or "" for m in memories}, self._rules)
        read: list[ExtractedMemory] = []
        for r in (r for stage in self._retractions for r in stage(ctx)):
            if not any(k.retraction and r.retraction and k.field == r.field and k.value == r.value for k in read):
                read.append(r)  # two rules may read one ending ("I don't work at Meta anymore")
        read += self._ended_slots(ctx, [r for r in read if r.retraction])
        taken_back = [r for r in read if r.retraction]
        # What the turn takes back is never also stored as stated ("I used to be allergic to peanuts but not
        # anymore" is no allergy); a fact the denial itself carries ("我没有孩子": hasChildren false) stays, and so
        # does what a switch turns to ("from GEP to QMAS": QMAS).
        kept = [m for m in memories if not any(contradicts(r, m) for r in taken_back)]
        kept += _still_wanted([m for m in memories if m not in kept], taken_back)
        kept += [m for m in read if not m.retraction
                 and not any(k.field == m.field and k.value == m.value for k in kept)]
        # Retractions first: a slot taken back and given a new value in one turn ("不用发邮件了，改成微信") ends
        # with the new value.
        return [r for r in taken_back if not any(m.field == r.field and m.value is False for m in kept)] + kept
