"""Where the user does not live or work, said of a place or an employer they are taken for ("我没住成都", "I've never
lived in Boston", "we moved out of Phoenix", "我不是在百度上班", "I don't work at Meta"): the place or the employer is
taken back; where they do live or work, said alongside, the positive rules read."""

from __future__ import annotations

import re

from agent_memory.domain.models import ExtractedMemory, MemoryType
from agent_memory.extraction.fields.location import CITY_ZH_RE
from agent_memory.extraction.fields.retraction_grammar import HELD_ON_TO, clauses, first_value, retraction, users_own
from agent_memory.extraction.grammar import CJK, Utterance

_PLACE_EN = r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2}"
_CITY_ZH = CITY_ZH_RE.pattern
_EN_NOT_LIVING = re.compile(
    rf"\bI(?:'ve| have)?\s+(?i:never|don't|do not|no longer|didn't|did not)\s+(?i:actually\s+|really\s+|even\s+)?"
    rf"(?i:live|lived|living|reside|resided)\s+(?i:in)\s+(?P<place>{_PLACE_EN})"
    rf"|\bI(?:'m| am)\s+(?i:not|no longer)\s+(?i:living|based|staying)\s+(?i:in)\s+(?P<place2>{_PLACE_EN})"
    rf"|\b(?i:moved|moving|relocated|relocating)\s+(?i:out of|away from)\s+(?P<place3>{_PLACE_EN})"
    rf"|\b(?i:left)\s+(?P<place4>{_PLACE_EN})\s+(?i:for good|behind)")
_ZH_NOT_LIVING = re.compile(
    rf"我(?:并|其实|根本|早就|已经)?(?:没有?|不)(?:再)?(?:住在?|在|生活在)\s*(?P<place>{_CITY_ZH})(?:住|生活|待)?(?:了)?"
    rf"|(?:搬离|离开|搬出)(?:了)?\s*(?P<place2>{_CITY_ZH})"
    rf"|(?:已经)?从\s*(?P<place3>{_CITY_ZH})(?:搬走|搬出来|搬出去)了?")

_COMPANY_EN = r"[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,2}"
_EN_NOT_WORKING = re.compile(
    rf"\bI\s+(?i:don't|do not|never|didn't|did not)\s+(?i:actually\s+|really\s+|even\s+)?(?i:work|worked)\s+"
    rf"(?i:at|for)\s+(?P<company>{_COMPANY_EN})"
    rf"|\bI(?:'m| am)\s+(?i:not)\s+(?i:at|with|working at|working for|employed by)\s+(?P<company2>{_COMPANY_EN})")
_ZH_NOT_WORKING = re.compile(
    rf"我(?:并|其实|根本)?(?:不是|没|没有|不)在\s*(?P<company>[{CJK}A-Za-z]{{2,8}}?)(?:上班|工作|任职|干活|打工)")


def place_denials(ctx: Utterance) -> list[ExtractedMemory]:
    found: list[ExtractedMemory] = []
    for clause in clauses(ctx):
        if not users_own(ctx, clause):
            continue
        m = (_ZH_NOT_LIVING if ctx.zh else _EN_NOT_LIVING).search(clause.text)
        if m is not None and not HELD_ON_TO.search(clause.text[max(0, m.start() - 12):m.start()]):
            found.append(retraction(MemoryType.FACT, "currentLocation", first_value(m), clause.text))
        m = (_ZH_NOT_WORKING if ctx.zh else _EN_NOT_WORKING).search(clause.text)
        if m is not None:
            found.append(retraction(MemoryType.FACT, "currentCompany", first_value(m), clause.text))
    return found
