"""What a clause that lets something go would say of it, stated plainly, so that the pack's positive rules can name
the slot it retires: "I've given up on learning piano" -> "I want to learn piano" (goal), "日语我就算了" -> "我想日语",
"我对高尔夫没兴趣了" -> "我喜欢高尔夫" (preference). The slot the positive rules read in a restatement is taken back;
a restatement they read nothing in takes nothing back."""

from __future__ import annotations

import re

from agent_memory.extraction.fields.retraction_grammar import HELD_ON_TO, Clause, users_own
from agent_memory.extraction.grammar import CJK, Utterance

# The verbs of letting go, with what they let go of after them ("gave up on X", "lost interest in X").
_EN_LET_GO = re.compile(
    r"\b(?:given up on|gave up on|giving up on|give up on|lost interest in|losing interest in|(?:I'm|I am) done with|"
    r"dropped|dropping|ditched|ditching|scrapped|scrapping|shelved|shelving|abandoned|abandoning|quit|quitting|"
    r"stopped|gave up|given up|giving up|changed my mind about|decided against|"
    r"no longer (?:interested in|into|keen on))\s+"
    r"(?:(?:on|about|the idea of|the plan to|the plan of|my plans? to|my plans? of|the goal of|my goal of|my goal to|"
    r"my|the|that|this|all)\s+)*"
    r"(?P<what>[A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z][A-Za-z'-]*){0,5}?)"
    r"(?=\s*(?:[,.;!?]|$|\b(?:because|since|as|for now|for good|altogether|entirely|completely|anymore|any more|"
    r"after all|tbh|now|though|too|last|this|a (?:few|couple)|months?|weeks?|years?|ago|it's|it was|and)\b))",
    re.IGNORECASE)
# The thing let go as the subject: "my plan to learn piano is off", "learning piano isn't happening".
_EN_CALLED_OFF = re.compile(
    r"^\s*(?:(?:so|ok|okay|well|actually|honestly|yeah),?\s+)*(?:(?:my|the)\s+(?:plan|idea|goal)\s+(?:to|of)\s+)?"
    r"(?P<what>[A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z][A-Za-z'-]*){0,4}?)\s+"
    r"(?:is|'s|are)\s+(?:off(?: the table)?|not happening|no longer happening|cancell?ed|on hold|dead|a no-go|"
    r"out of the question)\b",
    re.IGNORECASE)
_ZH_THING = rf"[{CJK}A-Za-z]{{2,12}}?"
_ZH_INTEREST_LOST = re.compile(rf"对(?P<what>{_ZH_THING})(?:已经|早就|现在)?(?:没|不)(?:有|再|太)?(?:什么|啥)?(?:兴趣|感兴趣)了?")
_ZH_LET_GO = (
    re.compile(rf"(?:放弃|不再考虑|不考虑|打消)(?:了)?(?P<what>{_ZH_THING})(?:的(?:计划|目标|打算|想法|念头))?(?:了)?(?=$|[，,。])"),
    re.compile(rf"^(?:我)?(?P<what>{_ZH_THING})(?:这事|这件事|的计划|的打算|的想法|的念头|这个计划|这个想法|这个目标|的目标|计划)?(?:我)?"
               r"(?:就|先|还是|也|已经|暂时|都)*(?:算了|搁置了?|搁一搁|放一放|先放放|取消了|泡汤了|黄了|作罢|不想了|"
               r"不打算了|不搞了|不弄了|不做了|拉倒|撤了|撤掉了|打消了)"),
    _ZH_INTEREST_LOST,
)
# What is no plan nor liking of the user's: a report ("中介说…被搁置"), a job (an ending the career rules read).
_ZH_NOT_A_THING = re.compile(r"说|被|公司|单位|工作|辞职|离职|退休")
_EN_NOT_A_THING = re.compile(r"(?:my\s+|the\s+)?(?:job|work|position|role|post|company)\b", re.IGNORECASE)
_ZH_LEAD = re.compile(r"^(?:我|我们|其实|现在|已经|还是|决定|打算|想)+")


def restatements(ctx: Utterance, clause: Clause) -> list[str]:
    """Plain statements of what the clause lets go of: a plan (a wish to do it) or a liking; [] when it lets go of
    nothing, or is not the user's own."""
    if not users_own(ctx, clause):
        return []
    if ctx.zh:
        # An interest lost is a liking first ("对露营没兴趣了"); anything else let go, a plan first.
        let_go = [(_ZH_LEAD.sub("", m["what"]), pattern is _ZH_INTEREST_LOST) for pattern in _ZH_LET_GO
                  for m in pattern.finditer(clause.text)
                  if not HELD_ON_TO.search(clause.text[max(0, m.start() - 12):m.start()])]
        return [said for thing, liking in let_go if len(thing) >= 2 and not _ZH_NOT_A_THING.search(thing)
                for said in ((f"我喜欢{thing}", f"我想{thing}") if liking else (f"我想{thing}", f"我喜欢{thing}"))]
    found = [m["what"] for pattern in (_EN_LET_GO, _EN_CALLED_OFF) for m in pattern.finditer(clause.text)
             if not HELD_ON_TO.search(clause.text[max(0, m.start() - 16):m.start()])
             and not _EN_NOT_A_THING.match(m["what"])]
    said: list[str] = []
    for what in found:
        plan = as_a_plan(what)
        said += [f"I want to {plan}"] if plan != what else [f"I want to {what}", f"I like {what}"]
    return said


def as_a_plan(what: str) -> str:
    """A plan named by its -ing form, as a plan is stated: "running a marathon" -> "run a marathon"."""
    first, _, rest = what.partition(" ")
    if first.lower().endswith("ing") and len(first) > 4:
        return f"{base_form(first)} {rest}".strip()
    return what


_E_DROPPED = re.compile(r"[^aeiou][aeiou][bcdfgkmnprsvz]$|^[^aeiou]{1,2}it$|^us$", re.IGNORECASE)


def base_form(gerund: str) -> str:
    """The verb of an English -ing form: running -> run, adopting -> adopt, moving -> move, taking -> take."""
    stem = gerund[:-3]
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1].lower() not in "lsz":
        return stem[:-1]
    if stem[-1:].lower() in ("c", "v", "z") or (len(stem) <= 5 and _E_DROPPED.search(stem)
                                                   and not stem.lower().endswith(("en", "er", "on"))):
        return f"{stem}e"
    return stem
